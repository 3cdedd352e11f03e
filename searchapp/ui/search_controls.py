"""The Search page's controls and result cards: mode, filter builder, snippets shown as text.

Kept out of the page script so the page stays a short sequence of steps. The
form gives the same choices as ``searchapp search`` (``--mode``, ``--where``,
``-k``, ``--min-score``) and the page calls the same ``search.search``.
Snippets are the user's text, escaped, with only the query's words in bold: no
HTML, links or markup from a document is ever rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from searchapp.search.filters import OPERATORS, Condition, make_condition
from searchapp.search.service import DEFAULT_MODE, MAX_K, MODES, SearchHit
from searchapp.ui.common import md_escape
from searchapp.ui.judging import judgement_marks

FILTER_ROWS = 3
NO_COLUMN = "(no filter)"
MODE_LABELS = {
    "hybrid": "Hybrid (meaning + words)",
    "semantic": "Meaning (semantic)",
    "lexical": "Words (lexical, BM25)",
}
OPERATOR_CHOICES = ["=", "!=", ">=", ">", "<=", "<"]
SCORE_NOTES = {
    "hybrid": "Score: reciprocal-rank fusion of the meaning and word rankings (higher is better).",
    "semantic": "Score: cosine similarity between the query and the text (1 = same meaning).",
    "lexical": "Score: BM25 over the query's words (higher is better).",
}
assert set(OPERATOR_CHOICES) == set(OPERATORS)


@dataclass
class SearchRequest:
    """What the form asks for; ``conditions`` are built and checked when submitted."""

    query: str
    k: float | None  # as typed: checked by the page (search_status.k_problem)
    min_score: float | None
    mode: str
    submitted: bool
    filters: list[tuple[str, str, str]] = field(default_factory=list)  # (column, op, value)

    def conditions(self) -> list[Condition]:
        """The filter rows as conditions (InvalidParameterError for a bad one)."""
        return [make_condition(c, op, v) for c, op, v in self.filters]


def corpus_meta_columns(app, name: str) -> list[str]:
    """The metadata columns a corpus' documents use (one row read; for the filter builder)."""
    from searchapp.store import repo

    with app.db.session() as s:
        return list(repo.corpus_state(s, name).meta_columns)


def search_form(meta_columns: list[str]) -> SearchRequest:
    """The search form: query, k, mode, minimum cosine, and filters on the metadata columns."""
    with st.form("search-form", border=False):
        query = st.text_input("Query", placeholder="Describe what you are looking for, or type "
                              "a code or a name", key="search-query")
        left, middle, right = st.columns([1, 2, 2])
        # No bounds on the widget: an out-of-range k gets a message and clears the results
        # (with bounds, the browser keeps the old value and the old results on screen).
        k = left.number_input("Results (k)", value=10, step=1, key="search-k",
                              help=f"How many results, 1 to {MAX_K:,}.")
        mode = middle.radio("Match by", MODES, index=MODES.index(DEFAULT_MODE),
                            format_func=MODE_LABELS.get, key="search-mode",
                            help="Hybrid fuses both rankings (reciprocal rank); words find "
                                 "exact codes and names, meaning finds paraphrases.")
        min_score = right.slider("Minimum score (cosine)", min_value=-1.0, max_value=1.0,
                                 value=0.0, step=0.05, key="search-min-score",
                                 help="Results whose cosine to the query is lower are left "
                                      "out (meaning and hybrid; words have no cosine).")
        filters = _filter_rows(meta_columns)
        submitted = st.form_submit_button("Search", type="primary", icon=":material/search:")
    return SearchRequest(query, k, None if mode == "lexical" else float(min_score),
                         mode, submitted, filters)


def _filter_rows(meta_columns: list[str]) -> list[tuple[str, str, str]]:
    """Up to FILTER_ROWS (column, operator, value) rows; rows without a column are ignored."""
    if not meta_columns:
        st.caption("Filters: this corpus has no metadata columns (only text and id).")
        return []
    out = []
    with st.expander("Filters (metadata)", expanded=False):
        st.caption("Numbers and dates (YYYY-MM-DD) compare by value; other text with = or "
                   "!=. Every filter must hold.")
        for i in range(FILTER_ROWS):
            col, op, value = st.columns([2, 1, 2])
            column = col.selectbox("Column", [NO_COLUMN, *meta_columns], key=f"filter-col-{i}",
                                   label_visibility="collapsed" if i else "visible")
            operator = op.selectbox("Operator", OPERATOR_CHOICES, key=f"filter-op-{i}",
                                    label_visibility="collapsed" if i else "visible")
            raw = value.text_input("Value", key=f"filter-value-{i}",
                                   label_visibility="collapsed" if i else "visible")
            if column != NO_COLUMN:
                out.append((column, operator, raw))
    return out


def marked_markdown(hit: SearchHit) -> str:
    """The hit's snippet as markdown: the text escaped, the query's words in bold.

    Example:
        >>> from searchapp.search.service import SearchHit
        >>> print(marked_markdown(SearchHit("a", "", 1.0, snippet="<b>ERR-1</b>",
        ...                                 highlights=[(7, 8)])))
        \\<b\\>ERR\\-**1**\\</b\\>
    """
    out, last = [], 0
    for start, end in hit.highlights:
        out += [md_escape(hit.snippet[last:start]), "**", md_escape(hit.snippet[start:end]), "**"]
        last = end
    out.append(md_escape(hit.snippet[last:]))
    return "".join(out)


def show_hits(hits: list[SearchHit], mode: str, app=None, corpus: str | None = None,
              query: str | None = None) -> None:
    """One bordered card per hit: rank, snippet, id, metadata, ranks and passage, score, and
    (given the corpus and query) a relevant / not mark that stores a judgement."""
    for rank, hit in enumerate(hits, start=1):
        with st.container(border=True, key=f"hit-{rank}"):
            text_col, score_col = st.columns([10, 1], vertical_alignment="top")
            text_col.markdown(f"**{rank}.** {marked_markdown(hit)}")
            details = [f"id {md_escape(hit.id)}"] + [
                f"{md_escape(str(key))}: {md_escape(str(value))}"
                for key, value in hit.meta.items() if str(value).strip()]
            text_col.caption(" · ".join(details))
            text_col.caption(_ranks(hit, mode))
            if hit.span is not None or len(hit.snippet) < len(hit.text):
                with text_col.expander("Whole text"):
                    st.markdown(md_escape(hit.text))
            score_col.badge(f"{hit.score:.3f}", color="blue")
            if corpus:
                judgement_marks(app, corpus, query=query, doc=hit.id, key=f"hit-{rank}")


def _ranks(hit: SearchHit, mode: str) -> str:
    parts = []
    if hit.semantic_score is not None:
        where = f"#{hit.semantic_rank}" if hit.semantic_rank else "outside its list"
        parts.append(f"meaning {where}, cosine {hit.semantic_score:.3f}")
    if hit.lexical_score is not None:
        parts.append(f"words #{hit.lexical_rank}, BM25 {hit.lexical_score:.2f}")
    elif mode != "semantic":
        parts.append("words: no match")
    if hit.passage is not None and hit.span is not None:
        parts.append(f"passage {hit.passage + 1} (characters {hit.span[0]:,}–{hit.span[1]:,})")
    return " · ".join(parts)
