"""The Search page's box and results list, kept in step with the address.

One fragment (Enter reruns only it): the form, the live filters, then (for a search)
the "did you mean" line when a misspelt word was corrected (``searchapp.ui.did_you_mean``:
the corrected query is what is searched), then (on its first page) the answer box
(``searchapp.ui.answer_box``: the sentences that
answer a question, or "No clear answer in these documents."), then one of
three lists of k results, drawn ``PAGE_SIZE`` at a time (``searchapp.ui.paging``, so
any k costs what one page costs to draw) and kept between reruns (a judgement click
or a page turn does not search again): the search's hits, the documents most like one hit
("More like this", by its stored vector), or its likely duplicates (cosine at
or above the model's duplicate threshold). Everything that decides what is
shown (query, mode, k, minimum cosine, "Always answer", filters, page, the hit the
list is "like") is in the address, so a reload, Back or a link opened elsewhere shows
the same list; the session keeps it for a return from another page.

Example (inside the Search page):
    >>> search_section(app, corpus.name, corpus_meta_columns(app, corpus.name))  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import streamlit as st

from searchapp.answers.service import AnswerResult, search_with_answers
from searchapp.context import App
from searchapp.pairs.threshold import threshold_for
from searchapp.search.coverage import missing_of, partial_message
from searchapp.search.document_facets import facets_of
from searchapp.search.refine import MATCH_CAP, facet_values, more_like, word_matches
from searchapp.search.service import SearchHit
from searchapp.ui import suggestions
from searchapp.ui.answer_box import answer_box
from searchapp.ui.common import csv_download, md_code, md_escape, user_errors
from searchapp.ui.did_you_mean import did_you_mean_line, searched_query
from searchapp.ui.judging import judgement_marks
from searchapp.ui.paging import PAGE_SIZE, forget_hits, kept_hits, page_bounds, pages_of
from searchapp.ui.query_chips import query_chips
from searchapp.ui.results import HitAction, render_hit, results_list
from searchapp.ui.results_export import results_csv
from searchapp.ui.saved_sidebar import save_control
from searchapp.ui.search_controls import (
    KEPT,
    SCORE_NOTES,
    SearchRequest,
    filter_rows,
    ranks_text,
    search_form,
    seed_from_address,
    write_address,
)
from searchapp.ui.search_facets import facet_panel, wanted
from searchapp.ui.search_status import k_problem
from searchapp.ui.url_state import UrlState

CLUSTERS_PAGE = "searchapp/ui/pages/clusters.py"
LIKE, DUPS, PAGE, TO_MAP = "search.like", "search.dups", "search.page", "search.to-map"


def _whole(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _optional(text: str) -> str | None:
    return text or None


# ---- actions: each sets what the next run shows -----------------------------------------
def _like(hit: SearchHit) -> None:
    st.session_state.update({LIKE: hit.id, DUPS: None, PAGE: 1})


def _duplicates(hit: SearchHit) -> None:
    st.session_state.update({DUPS: hit.id, LIKE: None, PAGE: 1})


def _on_map(hit: SearchHit) -> None:
    st.session_state[TO_MAP] = hit.id


def _back_to_search() -> None:
    st.session_state.update({LIKE: None, DUPS: None, PAGE: 1})


def _turn(delta: int) -> None:
    st.session_state[PAGE] = max(1, int(st.session_state.get(PAGE) or 1) + delta)


ACTIONS = [
    HitAction("More like this", ":material/manage_search:", _like,
              "The documents nearest this one by meaning"),
    HitAction("Duplicates", ":material/content_copy:", _duplicates,
              "Documents at or above the model's duplicate threshold"),
    HitAction("On the map", ":material/scatter_plot:", _on_map,
              "Open the Clusters page with this document ringed"),
]


@st.fragment
def search_section(app: App, corpus: str, meta_columns: list[str]) -> None:
    """The form, the filters and the list: Enter or a click reruns only this."""
    session = st.session_state
    if (doc := session.pop(TO_MAP, None)) is not None:
        st.switch_page(CLUSTERS_PAGE, query_params={"corpus": corpus, "doc": doc})
    url = UrlState(st.query_params, session)
    if session.get("search.corpus") not in (None, corpus):  # another corpus: start over
        if k_problem(session.get("search-k")):
            session["search-k"] = 10  # an old k error does not follow to the new corpus
        session.update({LIKE: None, DUPS: None, PAGE: 1})
    session["search.corpus"] = corpus
    seed_from_address(url, meta_columns)
    kept = session.get(KEPT, {})
    page = url.seed(PAGE, "page", kept.get("page", 1), _whole)
    like = url.seed(LIKE, "like", None, _optional)
    dups = url.seed(DUPS, "dups", None, _optional)

    request = search_form()
    if request.submitted:  # kept before the list below is drawn, so it shows this search
        suggestions.record_search(app, corpus, request.query)
    request.filters = filter_rows(meta_columns, lambda c: facet_values(app, corpus, c))
    changed = request.submitted or request.filters != _kept_filters(kept)
    if changed and kept:  # a new search (or other filters): its first page, the plain list
        page, like, dups = 1, None, None
        session.update({PAGE: 1, LIKE: None, DUPS: None})
    write_address(url, request, page)
    url.write("like", like)
    url.write("dups", dups)

    if problem := k_problem(request.k):
        st.error(md_escape(problem), icon=":material/error:")
        return
    k = int(request.k)
    # What the search shows goes in one slot that each run first empties: Streamlit drops the
    # elements a run no longer draws only if no other run has started when it ends, and the
    # sidebar's jobs fragment starts one every 2 s (a chip taken out, or the hits past a
    # shorter list's end, stayed on screen until the next click on a busy machine).
    with st.empty().container(), user_errors():
        if like or dups:
            _related(app, corpus, like, dups, request, page, k)
        elif request.submitted or request.query:
            _searched(app, corpus, request, page, k)
    # under the list: above it, its row cost the first screen a hit (test_browser_pages)
    suggestions.recent_searches(app, corpus)


def _kept_filters(kept: dict) -> list[tuple[str, str, str]]:
    from searchapp.ui.search_controls import split_filter

    return [tuple(f) for f in (split_filter(w) for w in kept.get("where", [])) if f]


def _generation(app: App, corpus: str) -> int:
    """The corpus' generation (one indexed read): a kept list is current only at it."""
    from searchapp.store import repo

    with app.db.session() as s:
        return repo.corpus_state(s, corpus).generation


def _searched(app: App, corpus: str, request: SearchRequest, page: int, k: int) -> None:
    started = time.perf_counter()
    query, fixed = searched_query(app, corpus, request.query)  # "did you mean": corrected
    signature = ("search", corpus, _generation(app, corpus), query, request.mode, k,
                 request.min_score, tuple(request.filters), request.rerank, request.answer)
    if request.submitted:  # Search clicked: a fresh list (documents may have been embedded)
        forget_hits()
    with st.spinner("Searching (the first search also loads the model)..."):
        hits, answers = kept_hits(signature, lambda: search_with_answers(
            app, corpus, query, answer=True if request.answer else None, k=k,
            min_score=request.min_score, mode=request.mode, where=request.conditions(),
            rerank=request.rerank))
    elapsed_ms = (time.perf_counter() - started) * 1000
    _warn_if_partial(hits)
    did_you_mean_line(fixed)
    query_chips(app, corpus, query)  # the filters understood, removable; notes
    if not hits and request.min_score is not None:
        st.info(f"No result scores {request.min_score:.2f} or more. Lower the minimum "
                "score or try other words.", icon=":material/search_off:")
        return
    if not hits:
        st.info("No document matches these words (and filters). Try other words, or "
                "search by meaning.", icon=":material/search_off:")
        return
    matches = ""
    if request.mode != "semantic":
        n = word_matches(app, corpus, query, request.conditions())
        shown = f"{MATCH_CAP:,}+" if n >= MATCH_CAP else f"{n:,}"
        matches = (f"{shown} documents contain the query's words. " if n != 1 else
                   "1 document contains the query's words. ")
    facets = facets_of(h.meta for h in hits)
    beside = wanted(facets)
    main, side = st.columns([4, 1], gap="medium") if beside else (st.container(), None)
    if side is not None:
        with side:
            facet_panel(query, facets)
    with main:
        if page == 1:  # the answer heads the first page, as a search engine's does
            answer_box(app, corpus, query, answers)
        marks = partial(judgement_marks, app, corpus, query=query)  # relevant or not
        reranked = "Reordered by the corpus' reranker. " if request.rerank else ""
        _list(hits, page, k, f"{matches}{elapsed_ms:,.0f} ms. {reranked}"
              f"{SCORE_NOTES[request.mode]}",
              request.mode, lambda hit, key: marks(doc=hit.id, key=key), corpus=corpus,
              export=partial(_under_list, app, corpus, query, hits, answers, request))


def _under_list(app: App, corpus: str, query: str, hits: list[SearchHit],
                answers: AnswerResult, request: SearchRequest) -> None:
    """Beside the page buttons: the CSV download and "Save this search"."""
    _download(corpus, query, hits, answers)
    save_control(app, corpus, query, request.mode, request.k, request.min_score,
                 [str(c) for c in request.conditions()])


def _download(corpus: str, query: str, hits: list[SearchHit], answers: AnswerResult) -> None:
    """The results as CSV (answers, then all k hits), made when the button is clicked."""
    csv_download("Download (CSV)", lambda: results_csv(query, hits, answers),
                 f"{corpus}-search.csv", type="tertiary", key="search-csv",
                 help="The answers and all the results found (not only this page), "
                            "one row each, for a spreadsheet")


def _related(app: App, corpus: str, like: str | None, dups: str | None,
             request: SearchRequest, page: int, k: int) -> None:
    left, right = st.columns([5, 1], vertical_alignment="center")
    right.button("Back to the search", icon=":material/arrow_back:", on_click=_back_to_search,
                 key="search-back")
    generation = _generation(app, corpus)
    if like:
        left.markdown(f"**Documents most like** {md_code(like)}")
        hits = kept_hits(("like", corpus, generation, like, k),
                         lambda: more_like(app, corpus, like, k=k))
        note = "Score: cosine similarity to that document."
    else:
        from searchapp.store import repo

        with app.db.session() as s:
            model = repo.corpus_state(s, corpus).model_name
        threshold, source = threshold_for(app, model)
        left.markdown(f"**Likely duplicates of** {md_code(dups)} (cosine ≥ "
                      f"{threshold:.3f}, the {md_escape(source)} threshold of {md_escape(model)})")
        hits = kept_hits(("dups", corpus, generation, dups, k, threshold),
                         lambda: more_like(app, corpus, dups, k=k, min_score=threshold))
        note = "Score: cosine similarity to that document. Mark each: duplicate or not."
    _warn_if_partial(hits)
    if not hits:
        st.info("No document is that close.", icon=":material/search_off:")
        return
    mark = None if like else \
        (lambda hit, key: judgement_marks(app, corpus, a=dups, b=hit.id, key=key))
    _list(hits, page, k, note, "semantic", mark, corpus=corpus)


def _warn_if_partial(hits: list[SearchHit]) -> None:
    """Shards down: say which part of the corpus is missing (the list is not kept for
    paging, so the next page asks again)."""
    if missing_of(hits):
        st.warning(md_escape(partial_message(missing_of(hits))), icon=":material/warning:")
        forget_hits()


def _list(hits: list[SearchHit], page: int, k: int, note: str, mode: str,
          mark: Callable[[SearchHit, str], None] | None = None, corpus: str = "",
          export: Callable[[], None] | None = None) -> None:
    """Page ``page`` of the list (``PAGE_SIZE`` hits) with its caption and page buttons;
    ``mark(hit, key)`` draws each hit's judgement switch (relevant, or duplicate),
    ``export()`` a download button under the list, beside the page buttons (above it, the
    button took a row of its own and the first screen lost a hit: test_browser_pages)."""
    first, end = page_bounds(page, len(hits))
    last_page = pages_of(len(hits))
    if first >= end:
        st.info(f"There is no page {page}: the {len(hits):,} results fill {last_page:,} "
                f"page{'s' if last_page != 1 else ''}.", icon=":material/search_off:")
    else:
        total = f"{len(hits):,} in all" + (f" (k = {k:,})" if len(hits) == k else "")
        st.caption(f"Results {first + 1:,}–{end:,}. {total}. {note}")
    with results_list():
        for rank, hit in enumerate(hits[first:end], start=first + 1):
            render_hit(hit, rank, ACTIONS,
                       extra=ranks_text(hit, mode) if mode == "hybrid" else "",
                       mark=None if mark is None else partial(mark, hit, f"hit-{rank}"),
                       corpus=corpus)
    if last_page > 1 or page > 1 or export is not None:
        with st.container(horizontal=True, gap="small", key="search-pages"):
            if last_page > 1 or page > 1:
                st.button("Previous", icon=":material/chevron_left:", disabled=page <= 1,
                          on_click=_turn, args=(-1,), key="search-prev")
                st.caption(f"Page {page:,} of {last_page:,} ({PAGE_SIZE} a page)")
                st.button("Next", icon=":material/chevron_right:", disabled=page >= last_page,
                          on_click=_turn, args=(1,), key="search-next")
            if export is not None:
                export()
