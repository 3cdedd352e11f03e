"""The Search page's controls and result cards: mode, filter builder, snippets shown as text.

Kept out of the page script so the page stays a short sequence of steps. The
form gives the same choices as ``searchapp search`` (``--mode``, ``--where``,
``-k``, ``--min-score``, ``--rerank``, ``--answer``) and the page calls the same
``answers.service.search_with_answers``.
Snippets are the user's text, escaped, with only the query's words in bold: no
HTML, links or markup from a document is ever rendered.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st

from searchapp.search.filters import OPERATORS, Condition, make_condition
from searchapp.search.modes import MODES as SEARCH_MODES
from searchapp.search.modes import mode_named
from searchapp.search.service import DEFAULT_MODE, MAX_K, MODES, SearchHit
from searchapp.ui.common import md_escape
from searchapp.ui.url_state import UrlState

FILTER_ROWS = 3
FILTER_HELP = ("Pick a column and a value (the most common are offered with their counts) "
               "or type one. Numbers and dates (YYYY-MM-DD) compare by value; other text "
               "with = or !=. Every filter must hold; a row appears for the next one.")
NO_COLUMN = "(no filter)"
MODE_LABELS = {name: m.label for name, m in SEARCH_MODES.items()}
OPERATOR_CHOICES = ["=", "!=", ">=", ">", "<=", "<"]
SCORE_NOTES = {name: m.score_note for name, m in SEARCH_MODES.items()}  # under the form
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
    rerank: bool = False  # the corpus' reranker reorders the first results
    answer: bool = False  # seek an answer for any query (off: for a question only)

    def conditions(self) -> list[Condition]:
        """The filter rows as conditions (InvalidParameterError for a bad one)."""
        return [make_condition(c, op, v) for c, op, v in self.filters]


def corpus_meta_columns(app, name: str) -> list[str]:
    """The metadata columns a corpus' documents use (one row read; for the filter builder)."""
    from searchapp.store import repo

    with app.db.session() as s:
        return list(repo.corpus_state(s, name).meta_columns)


# ---- the address: ?q=...&mode=...&k=...&min=...&answer=1&where=col=value&page=2 -------
KEPT = "search.kept"  # the last request of this session, for a return from another page
WIDGETS = {"q": "search-query", "k": "search-k", "mode": "search-mode",
           "min": "search-min-score", "answer": "search-answer"}
DEFAULTS = {"q": "", "k": 10, "mode": DEFAULT_MODE, "min": 0.0, "answer": False}
_SPLIT = re.compile(r"^\s*([^<>=!]+?)\s*(<=|>=|!=|=|<|>)\s*(.*?)\s*$", re.DOTALL)


def split_filter(text: str) -> tuple[str, str, str] | None:
    """``"year>=2024"`` → ``("year", ">=", "2024")``; None when it is not a condition.

    Example:
        >>> split_filter("product = billing")
        ('product', '=', 'billing')
        >>> split_filter("nonsense") is None
        True
    """
    match = _SPLIT.match(text)
    return match.groups() if match else None


def _number(text: str) -> float:
    value = float(text)
    if value != value:  # NaN
        raise ValueError(text)
    return value


def _whole_number(text: str) -> int:
    value = float(text)
    if not value.is_integer():
        raise ValueError(text)
    return int(value)


def _mode(text: str) -> str:
    if text not in MODES:
        raise ValueError(text)
    return text


def _flag(text: str) -> bool:
    """``answer=1`` (or true, on, yes) → True, ``0`` (false, off, no) → False."""
    value = text.strip().lower()
    if value in ("1", "true", "on", "yes"):
        return True
    if value in ("0", "false", "off", "no"):
        return False
    raise ValueError(text)


def seed_from_address(url: UrlState, meta_columns: list[str]) -> None:
    """Give the form and the filter rows their values before they are drawn: from the
    address when it changed (a link, a reload, Back), else what this session had."""
    kept = url.session.get(KEPT, {})
    parse = {"q": str, "k": _whole_number, "min": _number, "mode": _mode, "answer": _flag}
    for param, key in WIDGETS.items():
        url.seed(key, param, kept.get(param, DEFAULTS[param]), parse[param])
    news = url.incoming("where")
    rows = [split_filter(w) for w in news] if news is not None else None
    if rows is None and not any(f"filter-col-{i}" in url.session for i in range(FILTER_ROWS)):
        rows = [split_filter(w) for w in kept.get("where", [])]
    if rows is None:
        return
    rows = [r for r in rows if r and r[0] in meta_columns and r[1] in OPERATOR_CHOICES]
    for i in range(FILTER_ROWS):
        column, op, value = rows[i] if i < len(rows) else (NO_COLUMN, "=", None)
        url.session[f"filter-col-{i}"] = column
        url.session[f"filter-op-{i}"] = op
        url.session[f"filter-value-{i}"] = value


def write_address(url: UrlState, request: SearchRequest, page: int) -> None:
    """The request into the address (and the session), defaults left out."""
    values = {"q": request.query.strip() or None,
              "k": None if request.k == DEFAULTS["k"] or request.k is None else f"{request.k:g}",
              "mode": None if request.mode == DEFAULT_MODE else request.mode,
              "min": None if not request.min_score else f"{request.min_score:g}",
              "answer": "1" if request.answer else None,
              "where": [f"{c}{op}{v}" for c, op, v in request.filters] or None,
              "page": None if page <= 1 else str(page)}
    for param, value in values.items():
        url.write(param, value)
    url.session[KEPT] = {"q": request.query, "k": request.k, "mode": request.mode,
                         "min": request.min_score or 0.0, "answer": request.answer,
                         "where": values["where"] or [], "page": page}


def search_form() -> SearchRequest:
    """The search form: query, k, mode and minimum cosine (filters are live, outside it)."""
    with st.form("search-form", border=False):
        box, button = st.columns([6, 1], vertical_alignment="bottom")
        query = box.text_input("Query", placeholder="Describe what you are looking for, or "
                               "type a code or a name", key="search-query",
                               label_visibility="collapsed")  # the placeholder says it
        submitted = button.form_submit_button("Search", type="primary",
                                              icon=":material/search:", width="stretch")
        left, middle, right, last = st.columns([1, 3, 2, 1.7], vertical_alignment="bottom")
        # No bounds on the widget: an out-of-range k gets a message and clears the results
        # (with bounds, the browser keeps the old value and the old results on screen).
        k = left.number_input("Results (k)", step=1, key="search-k",
                              help=f"How many results to find, 1 to {MAX_K:,}; they are "
                              "shown 20 a page.")
        mode = middle.radio("Match by", MODES, format_func=MODE_LABELS.get, key="search-mode",
                            horizontal=True,
                            help="Hybrid fuses both rankings (reciprocal rank); words find "
                                 "exact codes and names, meaning finds paraphrases.")
        min_score = right.slider("Minimum score (cosine)", min_value=-1.0, max_value=1.0,
                                 step=0.05, key="search-min-score",
                                 help="Results whose cosine to the query is lower are left "
                                      "out (meaning and hybrid; words have no cosine).")
        rerank = last.toggle("Rerank", key="search-rerank",
                             help="A cross-encoder trained on this corpus' judgements "
                                  "reorders the first 30 results (`searchapp judge "
                                  "train-reranker` trains one); slower.")
        answers = last.toggle("Always answer", key="search-answer",
                              help="Above the results, the sentences of your documents that "
                                   "answer the query. A question (\"how do I…?\", \"when "
                                   "does…\") gets them anyway; on, so does any query.")
    return SearchRequest(query, k, float(min_score) if mode_named(mode).semantic else None,
                         mode, submitted, rerank=rerank, answer=answers)


def filter_rows(meta_columns: list[str], facets: Callable[[str], list[tuple[str, int]]]
                ) -> list[tuple[str, str, str]]:
    """Up to FILTER_ROWS (column, operator, value) rows, applied as soon as they change.

    The value box offers the column's most common values with their counts
    (``facets(column)``) and takes any other value typed in it.
    """
    if not meta_columns:
        st.caption("Filters: this corpus has no metadata columns (only text and id).")
        return []
    out = []
    used = [i for i in range(FILTER_ROWS)
            if st.session_state.get(f"filter-col-{i}", NO_COLUMN) != NO_COLUMN]
    with st.expander("Filters (metadata)", expanded=bool(used), icon=":material/filter_list:"):
        # the rows in use and one empty row: an open panel stays short
        for i in range(min(FILTER_ROWS, (used[-1] + 2) if used else 1)):
            col, op, value = st.columns([2, 1, 3])
            shown = "collapsed" if i else "visible"
            column = col.selectbox("Column", [NO_COLUMN, *meta_columns], key=f"filter-col-{i}",
                                   label_visibility=shown, help=FILTER_HELP)
            operator = op.selectbox("Operator", OPERATOR_CHOICES, key=f"filter-op-{i}",
                                    label_visibility=shown)
            counts = dict(facets(column)) if column != NO_COLUMN else {}
            options = list(counts)
            chosen = st.session_state.get(f"filter-value-{i}")
            if chosen and chosen not in options:
                options.append(chosen)
            raw = value.selectbox("Value", options, index=None, key=f"filter-value-{i}",
                                  accept_new_options=True, label_visibility=shown,
                                  placeholder="Choose or type a value",
                                  format_func=lambda v, c=counts: f"{v} ({c[v]:,})" if v in c
                                  else str(v), disabled=column == NO_COLUMN)
            if column != NO_COLUMN and raw is not None and str(raw).strip():
                out.append((column, operator, str(raw)))
    return out


def marked_markdown(hit: SearchHit) -> str:
    """The hit's snippet as markdown: the text escaped, the query's words in bold.

    Example:
        >>> from searchapp.search.service import SearchHit
        >>> print(marked_markdown(SearchHit("a", "", 1.0, snippet="<b>ERR-1</b>",
        ...                                 highlights=[(7, 8)])))
        \\<b\\>ERR-**&#49;**\\</b\\>
    """
    out, last = [], 0
    for start, end in hit.highlights:
        out += [md_escape(hit.snippet[last:start]), "**", md_escape(hit.snippet[start:end]), "**"]
        last = end
    out.append(md_escape(hit.snippet[last:]))
    return "".join(out)


def ranks_text(hit: SearchHit, mode: str) -> str:
    """Where a hit ranked by meaning and by words (and its passage), for the line under it."""
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
