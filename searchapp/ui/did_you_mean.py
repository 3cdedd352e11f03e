"""The "did you mean" line above a search's answer box and hits.

When a word of the query finds nothing and the corpus has a frequent near word
(``searchapp.search.spelling``), the page searches the corrected query and says so:
"Showing results for **postgres port**; search instead for *postgrse port*", the second
part a button that searches the query as typed. The choice is kept in the session for
that query (``AS_TYPED`` holds the query searched as typed), so a page turn or a judgement
click keeps it, and a new query is corrected again. Both queries are the user's text,
escaped (``md_escape``): never markup.

Example (inside the Search page, before the hits are searched):
    >>> query, fixed = searched_query(app, "pg", "postgrse port")   # doctest: +SKIP
    >>> did_you_mean_line(fixed)                                    # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.reporting import md_escape
from searchapp.search.spelling import Correction, query_to_run

AS_TYPED = "search.as-typed"  # the query the user chose to search as typed
LINE_KEY = "did-you-mean"  # the line's container (tests find it by this key)


def searched_query(app: App, corpus: str, query: str) -> tuple[str, Correction | None]:
    """The query to search and its correction (None when searched as typed).

    Example:
        >>> searched_query(app, "pg", "postgrse")                        # doctest: +SKIP
        ('postgres', Correction(query='postgres', original='postgrse', ...))
    """
    return query_to_run(app, corpus, query, as_typed=st.session_state.get(AS_TYPED) == query)


def _search_as_typed(original: str) -> None:
    st.session_state[AS_TYPED] = original


def did_you_mean_line(fixed: Correction | None) -> None:
    """The line (see the module's docstring); nothing when the query was not corrected."""
    if fixed is None:
        return
    with st.container(horizontal=True, gap="small", vertical_alignment="center", key=LINE_KEY):
        st.markdown(f"Showing results for **{md_escape(fixed.query)}**; search instead for")
        st.button(f"*{md_escape(fixed.original)}*", type="tertiary", key="search-as-typed",
                  on_click=_search_as_typed, args=(fixed.original,),
                  help="Search the words as you typed them")
