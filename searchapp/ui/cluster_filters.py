"""The Clusters page's saved filters: keep the open cluster as a search filter, list the
corpus' saved filters with a link that searches within each, and remove one.

The work is ``clusters.saved_filters``'; here are only the form, the links and
the messages. A link opens the Search page on the corpus with the filter set
(``?corpus=…&where=cluster="Refunds"``), so the filter can be bookmarked too.

Example:
    >>> save_filter_form(app, shown, 3, "faq")        # doctest: +SKIP
    >>> saved_filters_list(app, "faq")                # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException

from searchapp.clusters.result import ClusterResult
from searchapp.clusters.saved_filters import (
    DEFAULT_COLUMN,
    SavedFilter,
    remove_saved_filter,
    save_cluster_filter,
    saved_filters,
)
from searchapp.context import App
from searchapp.ui.common import md_escape, user_errors

SEARCH_PAGE = "searchapp/ui/pages/search.py"
SAVED_KEY = "clusters.saved-filter"  # the last filter saved, shown once after the rerun


def search_link(saved: SavedFilter, label: str | None = None) -> None:
    """A link to the Search page on the filter's corpus with the filter set."""
    try:
        st.page_link(SEARCH_PAGE, label=label or f"Search in {md_escape(repr(saved.value))}",
                     icon=":material/filter_alt:",
                     query_params={"corpus": saved.corpus, "where": saved.condition})
    except StreamlitAPIException:  # a page run on its own has no navigation
        st.caption(f"Search with the filter {md_escape(saved.condition)}: open Search from the "
                   "sidebar.")


def save_filter_form(app: App, result: ClusterResult, cluster_id: int, corpus: str) -> None:
    """Save the open cluster (of the result as shown) as ``column = name``."""
    label = next(c["label"] for c in result.clusters if c["id"] == cluster_id)
    with st.form(f"clusters.filter-form.{cluster_id}", border=False):
        column_box, name_box = st.columns([1, 2])
        column = column_box.text_input(
            "Filter column", value=DEFAULT_COLUMN, key=f"clusters.filter-column.{cluster_id}",
            help="The metadata column its documents get. A column of the corpus' own "
                 "files is never written.")
        name = name_box.text_input(
            "Keep as a search filter named", value=label, key=f"clusters.filter-name.{cluster_id}",
            help="Its documents are tagged with this name, so the filter works in Search, the "
                 "CLI and the API, and stays when clusters are computed again. Saving a name "
                 "again moves it to this cluster.")
        if st.form_submit_button("Save as a filter", icon=":material/bookmark_add:"):
            with user_errors("Nothing was saved. "):
                st.session_state[SAVED_KEY] = save_cluster_filter(app, result, cluster_id,
                                                                   column, name)
    saved = st.session_state.get(SAVED_KEY)
    if isinstance(saved, SavedFilter) and saved.corpus == corpus:
        st.success(f"Saved: {saved.documents:,} documents now have "
                   f"{md_escape(saved.condition)}.", icon=":material/bookmark_added:")
        search_link(saved)


def saved_filters_list(app: App, corpus: str) -> None:
    """The corpus' saved filters: each with its size, a search link and Remove."""
    with user_errors():
        found = saved_filters(app, corpus)
    if not found:
        return
    with st.expander(f"Saved filters ({len(found)})", icon=":material/bookmarks:"):
        for i, saved in enumerate(found):
            text, link, remove = st.columns([3, 2, 1], vertical_alignment="center")
            text.markdown(f"**{md_escape(saved.condition)}** · {saved.documents:,} documents"
                          + (f" · {md_escape(', '.join(saved.terms[:4]))}" if saved.terms
                             else ""))
            with link:
                search_link(saved, "Search in it")
            if remove.button("Remove", key=f"clusters.filter-remove.{i}",
                             icon=":material/delete:",
                             help="Takes the tag off its documents; the documents stay."):
                with user_errors("Nothing was removed. "):
                    remove_saved_filter(app, corpus, saved.column, saved.value)
                    st.session_state.pop(SAVED_KEY, None)
                    st.rerun()
