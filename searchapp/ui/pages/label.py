"""Label page: one item at a time, the one whose answer teaches the most, answered by keyboard.

The items come from ``searchapp.judgements.proposals`` (pairs near the duplicate
threshold, documents the two searches rank far apart, neighbours across a
cluster border), a batch at a time. Y / N / S / U answer yes, no, skip and
undo; each yes or no is a judgement (source 'label'). Beside the item: the
running counts and the current estimate (pair precision at the threshold,
precision@10 of judged results). The labelling area is a fragment: a key press
reruns only it.
"""

from __future__ import annotations

import streamlit as st

from searchapp.errors import SearchAppError
from searchapp.judgements import service
from searchapp.judgements.estimate import estimate
from searchapp.judgements.proposals import Proposal, propose
from searchapp.ui.common import (
    corpus_picker,
    corpus_summaries_or_stop,
    md_escape,
    page_app,
)
from searchapp.ui.guide import guide_link
from searchapp.ui.labelling import (
    SHORTCUTS_NOTE,
    answer,
    keyboard_row,
    labelling_session,
    session_line,
    text_card,
    undo,
)

BATCH = 20  # proposals fetched at a time
KINDS = {"Everything": None, "Duplicate pairs": "pair", "Search results": "query"}


def key_of(item: Proposal) -> tuple:
    return item.key


def store(corpus: str):
    def save(item: Proposal, label: int) -> int:
        if item.kind == "pair":
            return service.add(app, corpus, a=item.a, b=item.b, label=label, source="label").id
        return service.add(app, corpus, query=item.query, doc=item.a, label=label,
                           source="label").id
    return save


def show_item(item: Proposal, number: int) -> None:
    with st.container(key="label-current"):
        if item.kind == "pair":
            st.markdown(f"**{number}. Are these two duplicates?**")
            left, right = st.columns(2)
            with left:
                text_card(f"id {item.a}", item.a_text, "label-a")
            with right:
                text_card(f"id {item.b}", item.b_text or "", "label-b")
        else:
            st.markdown(f"**{number}. Does this document answer the query?**")
            text_card("query", item.query or "", "label-query")
            text_card(f"id {item.a}", item.a_text, "label-doc")
        st.caption(f"Asked because: {md_escape(item.reason)}.")


def model_ready(corpus: str) -> bool:
    """Whether the corpus' model is loaded: until it is, nothing here waits for it."""
    return corpus_model.get(corpus) in app.loaded_models


def show_estimate(corpus: str) -> None:
    try:
        counts = service.counts(app, corpus)
        now = estimate(app, corpus, encode=model_ready(corpus))
    except SearchAppError as exc:
        st.caption(md_escape(str(exc)))
        return
    left, middle, right = st.columns(3)
    left.metric("Judgements in this corpus", f"{counts['total']:,}",
                help=f"{counts['pair']:,} pairs ({counts['duplicate']:,} duplicates), "
                     f"{counts['query']:,} query results ({counts['relevant']:,} relevant)")
    middle.metric(f"Pair precision at {now.threshold:.3f}",
                  "–" if now.pair_precision is None else f"{now.pair_precision:.0%}",
                  help="Of the judged pairs whose cosine reaches the duplicate threshold, the "
                       "share judged duplicate.")
    middle.caption(f"from {now.pairs_above:,} judged pairs at or above it")
    right.metric("Precision@10 of judged results",
                 "–" if now.query_precision is None else f"{now.query_precision:.0%}",
                 help="Of the judged documents that hybrid search puts in their query's "
                      "top 10, the share judged relevant.")
    right.caption(f"from {now.query_results:,} results of {now.queries:,} queries"
                  + (" (more queries as you go)" if now.waiting else ""))


@st.fragment
def labelling(corpus: str, kind: str | None) -> None:
    session = labelling_session(f"label-{corpus}-{kind}")
    if not session.queue:
        try:
            session.queue = propose(app, corpus, BATCH, kind=kind, exclude=session.skipped,
                                    encode=model_ready(corpus))
        except SearchAppError as exc:
            st.error(md_escape(str(exc)), icon=":material/error:")
            return
    item = session.current
    save = store(corpus)
    if session.message:
        st.error(md_escape(session.message), icon=":material/error:")
    if item is None:
        st.success("Nothing left to ask here: every candidate is judged or skipped. Skipped "
                   "items come back when you reload the page.", icon=":material/task_alt:")
    else:
        show_item(item, sum(session.counts.values()) + 1)
    shown = None if item is None else key_of(item)  # the item these buttons decide
    keyboard_row("label", [
        ("Yes", "y", "primary",
         lambda: answer(app, corpus, session, "yes", 1, save, key_of, shown)),
        ("No", "n", "secondary",
         lambda: answer(app, corpus, session, "no", 0, save, key_of, shown)),
        ("Skip", "s", "secondary",
         lambda: answer(app, corpus, session, "skip", None, save, key_of, shown)),
        ("Undo", "u", "tertiary", lambda: undo(app, corpus, session, key_of)),
    ], disabled=item is None, shown=shown)
    st.caption(f"{SHORTCUTS_NOTE} · {session_line(session)}")
    show_estimate(corpus)


app = page_app()
st.title("Label")
guide_link("learning")
st.caption("Answer the questions whose answers teach the most: pairs near the duplicate "
           "threshold, documents that search by meaning and by words rank very differently, "
           "neighbours split by the clustering. Each answer is a judgement of this corpus, "
           "used to evaluate search, calibrate the duplicate threshold and fine-tune the model.")
summaries = corpus_summaries_or_stop(app)
chosen = corpus_picker(summaries)
corpus_model = {c.name: c.model_name for c in summaries}
kind_name = st.segmented_control("Ask about", list(KINDS), default="Everything",
                                 key="label-kind") or "Everything"
labelling(chosen.name, KINDS[kind_name])
