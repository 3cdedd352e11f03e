"""Marks that store judgements where results are shown: each search hit, each answer, each
duplicate pair, each match of a new question.

- ``judgement_marks``: a small two-way switch (relevant / not, right / wrong for an
  answer, or duplicate / not) beside one item; choosing stores a judgement, choosing the
  same again removes it.
- ``pair_marks_table`` and ``match_marks_table``: a table of pairs (or of a new
  question's matches) with a "Your judgement" column; an edit is a judgement.

Every mark goes through ``searchapp.judgements.service`` (the CLI and the Label
page use the same functions) and shows the label already stored, wherever it
was made.

Example (inside a page script, for each hit):
    >>> judgement_marks(app, "faq", query="reset", doc=hit.id, key="hit-3")  # doctest: +SKIP
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from searchapp.context import App
from searchapp.errors import SearchAppError
from searchapp.judgements import service
from searchapp.judgements.items import item_of
from searchapp.reporting import md_escape
from searchapp.store import judgement_rows, repo

QUERY_OPTIONS = {"Relevant": 1, "Not relevant": 0}
PAIR_OPTIONS = {"Duplicate": 1, "Not duplicate": 0}
ANSWER_OPTIONS = {"Right": 1, "Wrong": 0}  # an answer sentence (kind "answer")
OPTIONS = {"query": QUERY_OPTIONS, "pair": PAIR_OPTIONS, "answer": ANSWER_OPTIONS}
QUERY_WORDS = {1: "relevant", 0: "not relevant"}
PAIR_WORDS = {1: "duplicate", 0: "not duplicate"}
NOT_JUDGED = ""
ANSWER_LABEL_CHARS = 60  # of the sentence, in an answer switch's name


def stored_labels(app: App, corpus: str, items: list[tuple]) -> dict[tuple, int]:
    """{(kind, query, a, b): label} of the items that have a judgement (one query each)."""
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        out = {}
        for item in items:
            row = judgement_rows.find(s, state.id, judgement_rows.item_key(*item))
            if row is not None:
                out[item] = row.label
    return out


def _store(app: App, corpus: str, item: tuple, label: int | None, source: str) -> None:
    """Store ``label`` for the item (None: remove its judgement); errors as a toast."""
    kind, query, a, b = item
    try:
        if label is None:
            with app.db.session() as s:
                row = judgement_rows.find(s, repo.corpus_state(s, corpus).id,
                                          judgement_rows.item_key(*item))
                judgement_id = row.id if row is not None else None
            if judgement_id is not None:
                service.remove(app, corpus, judgement_id)
        elif kind == "query":
            service.add(app, corpus, label=label, query=query, doc=a, source=source)
        elif kind == "answer":
            service.add(app, corpus, label=label, query=query, doc=a, answer=b, source=source)
        else:
            service.add(app, corpus, label=label, a=a, b=b, source=source)
    except SearchAppError as exc:
        st.toast(md_escape(exc), icon=":material/error:")


def judgement_marks(app: App, corpus: str, *, query: str | None = None, doc: str | None = None,
                    a: str | None = None, b: str | None = None, answer: str | None = None,
                    key: str, source: str = "search") -> None:
    """A relevant / not (query + doc), right / wrong (query + doc + the ``answer`` sentence)
    or duplicate / not (a + b) switch for one item.

    Shows the stored label; a click stores the other one, a click on the chosen
    one removes the judgement.
    """
    try:
        item = item_of(query, doc, a, b, answer)
    except SearchAppError:
        return  # nothing judgeable here (an empty query): no switch
    options = OPTIONS[item[0]]
    widget = f"mark-{key}"
    stored = stored_labels(app, corpus, [item]).get(item)
    current = next((name for name, value in options.items() if value == stored), None)
    seen = f"{widget}-stored"  # (item, label) the switch showed last
    if st.session_state.get(seen) != (item, current):  # another item, or judged elsewhere
        st.session_state[widget] = current
        st.session_state[seen] = (item, current)

    def changed() -> None:
        chosen = st.session_state.get(widget)
        _store(app, corpus, item, options.get(chosen) if chosen else None, source)
        st.session_state[seen] = (item, chosen)

    st.segmented_control(md_escape(judgement_label(item)), list(options), key=widget,
                         on_change=changed, label_visibility="collapsed",
                         selection_mode="single")


def judgement_label(item: tuple) -> str:
    """The judgement switch's name for assistive technology and scripts: it names what is
    judged (every hit's switch was "Your judgement", so a screen reader or a script could
    not tell one hit's from another's).

    Example:
        >>> judgement_label(("query", "reset my password", "q-17", None))
        "Your judgement of 'q-17' for 'reset my password'"
        >>> judgement_label(("pair", None, "q-1", "q-9"))
        "Your judgement of 'q-1' and 'q-9' as duplicates"
        >>> judgement_label(("answer", "how to reset?", "q-1", "Click Reset."))
        "Your judgement of the answer 'Click Reset.' of 'q-1' to 'how to reset?'"
    """
    kind, query, a, b = item
    if kind == "query":
        return f"Your judgement of {a!r} for {query!r}"  # no "Query": the search box's name
    if kind == "answer":
        sentence = b if len(b) <= ANSWER_LABEL_CHARS else b[:ANSWER_LABEL_CHARS - 1] + "…"
        return f"Your judgement of the answer {sentence!r} of {a!r} to {query!r}"
    return f"Your judgement of {a!r} and {b!r} as duplicates"


def _marks_table(app: App, corpus: str, frame: pd.DataFrame, items: list[tuple],
                 words: dict[int, str], key: str, source: str, column_config: dict) -> None:
    """``frame`` with an editable "judgement" column; each edit stores (or removes) one."""
    stored = stored_labels(app, corpus, items)
    shown = frame.copy()
    shown.insert(0, "judgement", [words.get(stored.get(i), NOT_JUDGED) for i in items])
    values = {v: k for k, v in words.items()}
    edited = st.data_editor(
        shown, key=key, hide_index=True, width="stretch",
        disabled=[c for c in shown.columns if c != "judgement"],
        column_config={"judgement": st.column_config.SelectboxColumn(
            "Your judgement", options=[NOT_JUDGED, *words.values()], required=False,
            help="Stored as a judgement of this corpus (used to evaluate and calibrate).")}
        | column_config)
    for item, before, after in zip(items, shown["judgement"], edited["judgement"], strict=True):
        if (after or NOT_JUDGED) != before:
            _store(app, corpus, item, values.get(after), source)


def pair_marks_table(app: App, corpus: str, pairs: pd.DataFrame, key: str,
                     column_config: dict | None = None) -> None:
    """The duplicate pairs (columns ``a``, ``b`` and what to show) with a judgement column."""
    items = [item_of(a=a, b=b) for a, b in zip(pairs["a"], pairs["b"], strict=True)]
    _marks_table(app, corpus, pairs, items, PAIR_WORDS, key, "duplicates", column_config or {})


def match_marks_table(app: App, corpus: str, question: str, matches: pd.DataFrame, key: str,
                      column_config: dict | None = None) -> None:
    """A new question's matches (column ``id`` and what to show) with a judgement column:
    whether each match answers the question (a query judgement of the question)."""
    try:
        items = [item_of(query=question, doc=d) for d in matches["id"]]
    except SearchAppError:
        st.dataframe(matches, hide_index=True, width="stretch", column_config=column_config)
        return
    _marks_table(app, corpus, matches, items, QUERY_WORDS, key, "duplicates",
                 column_config or {})
