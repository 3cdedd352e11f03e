"""Saved searches on the Search page: the sidebar's list with "N new", the news of the one
opened (new hits first, marked new: the look), and the "Save this search" control.

Three calls from the Search page, each one line: ``saved_sidebar`` lists the corpus'
saved searches as links that open the Search page with the saved query, mode, k,
minimum score and filters in the address (``?saved=ID`` too); ``saved_news`` shows,
above the results, the hits that arrived since the last look, first and marked new, and
moves the watermark (once per opening); ``save_control`` saves the search the form holds
now, with an optional webhook URL and desktop notification. Saved searches belong to
the data folder: everyone who can log in sees them (the control says so).

Example (inside the Search page):
    >>> saved_sidebar(app, corpus.name)                                  # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.saved import service
from searchapp.ui.common import md_code, md_escape, user_errors
from searchapp.ui.results import title_of

SEARCH_PAGE = "searchapp/ui/pages/search.py"
SAVED_NOTE = "saved.note"  # what the last save said, shown once after the rerun
OPENED = "saved.opened"  # the saved search whose look this session has taken


def address_of(view: service.SavedView) -> dict:
    """The Search page's address for a saved search: its query and settings.

    Example:
        >>> from datetime import datetime
        >>> v = service.SavedView(3, "faq", "cards", "lost card", "lexical", 5, None,
        ...     ["product=cards"], datetime(2026, 1, 1), None, 0, 2, "/feeds/saved/t.atom",
        ...     None, False)
        >>> address_of(v)
        {'corpus': 'faq', 'q': 'lost card', 'saved': '3', 'mode': 'lexical', 'k': '5', \
'where': ['product=cards']}
    """
    params: dict = {"corpus": view.corpus, "q": view.query, "saved": str(view.id)}
    if view.mode != "hybrid":
        params["mode"] = view.mode
    if view.k != 10:
        params["k"] = str(view.k)
    if view.min_score:
        params["min"] = f"{view.min_score:g}"
    if view.where:
        params["where"] = list(view.where)
    return params


def saved_sidebar(app: App, corpus: str) -> None:
    """The corpus' saved searches in the sidebar, each with its "N new"."""
    with user_errors():
        views = service.list_saved(app, corpus)
    if not views:
        return
    st.sidebar.caption("Saved searches")
    for view in views:
        if view.new:
            st.sidebar.page_link(SEARCH_PAGE, label=f"{md_escape(view.name)} · {int(view.new)} new",
                                 query_params=address_of(view), icon=":material/fiber_new:")
        else:
            st.sidebar.page_link(SEARCH_PAGE, label=md_escape(view.name),
                                 query_params=address_of(view), icon=":material/bookmark:")


def saved_news(app: App, corpus: str) -> None:
    """Above the results of a saved search opened from the sidebar: its new hits first,
    marked new; opening it is the look (the watermark moves, once per opening)."""
    raw, session = st.query_params.get("saved"), st.session_state
    if not raw or not raw.isdigit():
        session.pop(OPENED, None)  # left it: the next opening is a new look
        return
    saved_id = int(raw)
    with user_errors():
        if session.get(OPENED, (None,))[0] != saved_id:
            results = service.run(app, saved_id, look=True)
            session[OPENED] = (saved_id, results.saved.name,
                               [h for h in results.hits if results.is_new(h)])
    opened = session.get(OPENED)
    if opened is None or opened[0] != saved_id:
        return  # the error is shown
    new_hits = opened[2]
    if not new_hits:
        st.caption(f"Saved search **{md_escape(opened[1])}**: nothing new since your last "
                   "look.")
        return
    with st.container(border=True):
        st.markdown(f"**{len(new_hits)} new** for saved search **{md_escape(opened[1])}** "
                    "since your last look:")
        for hit in new_hits:
            st.markdown(f":green-badge[new] **{md_escape(title_of(hit.text))}** "
                        f"· {md_escape(hit.id)}")


def save_control(app: App, corpus: str, query: str, mode: str = "hybrid", k: int = 10,
                 min_score: float | None = None, where: list[str] | None = None) -> None:
    """"Save this search": the search on screen kept, with optional notifications. Drawn
    in the row under the results (inside the search's fragment, so it is there as soon
    as a search is); saving reruns the page, so the sidebar lists the new one."""
    if not (query or "").strip():
        return
    with st.popover("Save this search", icon=":material/bookmark_add:"):
        st.caption("Saved searches belong to this data folder: everyone who can log in "
                   "sees them. The sidebar counts what arrives and matches.")
        with st.form("save-search", border=False):
            name = st.text_input("Name", value=query[:80], max_chars=200)
            webhook = st.text_input("Webhook URL (optional)",
                                    placeholder="https://hooks.example.org/searchapp")
            desktop = st.toggle("Desktop notification", value=False)
            if st.form_submit_button("Save", type="primary"):
                with user_errors():
                    view = service.save(
                        app, corpus, name, query, mode=mode or "hybrid", k=int(k or 10),
                        min_score=min_score or None, where=list(where or []),
                        webhook_url=webhook.strip() or None, desktop=desktop)
                    st.session_state[SAVED_NOTE] = (view.name, view.feed)
                    st.rerun(scope="app")  # the sidebar lists it
    if saved := st.session_state.pop(SAVED_NOTE, None):
        st.toast(f"Saved as {md_escape(saved[0])}. Its private feed: {md_code(saved[1])}",
                 icon=":material/bookmark_added:")
