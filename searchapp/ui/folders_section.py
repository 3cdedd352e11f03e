"""The Upload page's Folders section: watched folders with their status, added, paused,
resumed and removed, through the same service as ``searchapp watch`` and the API.

A folder can be added from the page only under ``SEARCHAPP_WATCH_ROOTS`` (the
browser must not make the server read any folder it likes); the CLI adds any.

Example:
    >>> folders_section(app)  # in a page script               # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.ui.common import md_escape, user_errors
from searchapp.watching import folders


def folders_section(app: App) -> None:
    """The section: the list with status, the actions on one folder, the add form."""
    st.subheader("Folders")
    st.caption("A watched folder keeps its corpus in step: new, changed, renamed and deleted "
               "files arrive within seconds; a folder that goes away keeps its documents.")
    watched = folders.list_watches(app)
    if watched:
        st.dataframe([_row(f) for f in watched], hide_index=True, width="stretch")
        for f in watched:
            if f["reason"]:
                st.warning(md_escape(f"{f['path']}: {f['reason']}"), icon=":material/warning:")
            if f["failures"]:
                with st.expander(f"{md_escape(f['path'])}: {f['files']['failed']:,} files not "
                                 "read"):
                    for p in f["failures"]:
                        st.text(f"{p['path']}: {p['reason']}")
        _actions(app, watched)
    else:
        st.caption("No watched folders yet.")
    _add_form(app)


def _row(f: dict) -> dict:
    files = f["files"]
    return {"Folder": f["path"], "Corpus": f["corpus"], "State": f["state"],
            "Seen": files["seen"], "In step": files["in_step"], "Waiting": files["waiting"],
            "Failed": files["failed"], "Last change": f["last_change_ago"] or "never"}


def _actions(app: App, watched: list[dict]) -> None:
    labels = {f"{f['path']} → {f['corpus']}": f for f in watched}
    picked = labels[st.selectbox("Folder", list(labels), key="folders.pick")]
    pause, resume, remove = st.columns(3)
    with user_errors():
        if pause.button("Pause", key="folders.pause", disabled=picked["paused"]):
            folders.set_paused(app, picked["id"], True)
            st.rerun()
        if resume.button("Resume", key="folders.resume", disabled=not picked["paused"]):
            folders.set_paused(app, picked["id"], False, roots=folders.allowed_roots())
            st.rerun()
        if remove.button("Stop watching", key="folders.remove",
                         help="The corpus keeps the folder's documents."):
            folders.remove_watch(app, picked["id"])
            st.rerun()


def _add_form(app: App) -> None:
    roots = folders.allowed_roots()
    with st.form("folders.add", clear_on_submit=False):
        path = st.text_input("Folder to watch", key="folders.path",
                             help=md_escape("Under " + (", ".join(map(str, roots)) or
                                                            "SEARCHAPP_WATCH_ROOTS (not set)")))
        corpus = st.text_input("Into corpus", key="folders.corpus")
        include = st.text_input("Only files matching (globs, comma-separated)",
                                key="folders.include", placeholder="*.md, *.pdf")
        exclude = st.text_input("Leave out files matching", key="folders.exclude",
                                placeholder="drafts/*")
        if st.form_submit_button("Watch", icon=":material/visibility:"):
            with user_errors("Not watched: "):
                added = folders.add_watch(app, path.strip(), corpus.strip(), _globs(include),
                                          _globs(exclude), roots=roots)
                st.success(md_escape(f"Watching {added['path']} into {added['corpus']!r}."))


def _globs(text: str) -> list[str]:
    return [g.strip() for g in text.split(",") if g.strip()]
