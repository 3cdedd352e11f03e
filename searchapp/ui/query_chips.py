"""What the Search page understood of a query: its filters as removable chips, and notes.

Above the results, one row: each field filter the query applied (``type:pdf``,
``folder:contracts``) as a chip whose click takes that filter out of the query
in the box and searches again, the rest of the query left as typed; then one
line per filter or field that could not apply (``searchapp.search.query_filters``).
Nothing is drawn for a query without filters or notes, so a plain search keeps
its first screen.

Example (inside the Search page's fragment):
    >>> query_chips(app, corpus, request.query)     # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.reporting import md_escape
from searchapp.search.query_language import without_filter
from searchapp.search.service import understood

QUERY_KEY, PAGE_KEY = "search-query", "search.page"  # the box's and the list's session keys


def set_query(query: str) -> None:
    """Put ``query`` in the box and go to the first page: the next run searches it."""
    st.session_state[QUERY_KEY] = query
    st.session_state[PAGE_KEY] = 1


def query_chips(app: App, corpus: str, query: str) -> None:
    """The row of filter chips and the notes for ``query`` (nothing when it has neither)."""
    plan = understood(app, corpus, query)
    if plan.applied:
        with st.container(horizontal=True, gap="small", key="search-chips",
                          vertical_alignment="center"):
            st.caption("Filters:", width="content")
            for i, (chip, typed) in enumerate(zip(plan.chips, plan.applied, strict=True)):
                st.button(md_escape(chip), key=f"search-chip-{i}", icon=":material/close:",
                          type="secondary", help="Take this filter out of the query",
                          on_click=set_query, args=(without_filter(query, typed),))
    for note in plan.notices:
        st.caption(":material/info: " + md_escape(note))
