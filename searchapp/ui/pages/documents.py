"""Documents page: one document by id, looked up, added or changed, deleted.

The same service functions as ``searchapp documents upsert|get|delete`` and the
API's ``/corpora/{name}/documents``: saving a changed text queues its embedding,
changed metadata is replaced in place, and a delete removes the document with
its vectors (asked for twice), then the page is drawn again from the store (no text
of the deleted document left in the form for Save to bring back).
"""

from __future__ import annotations

import streamlit as st

from searchapp.corpora import documents as service
from searchapp.corpora.names import MAX_ID_CHARS
from searchapp.errors import DocumentNotFoundError, SearchAppError
from searchapp.ui.common import corpus_picker, corpus_summaries_or_stop, md_escape, page_app
from searchapp.ui.guide import guide_link

app = page_app()
st.title("Documents")
guide_link("upload")
st.caption("One document by its id: look it up, add or change it, delete it.")
corpus = corpus_picker(corpus_summaries_or_stop(app)).name
doc_id = st.text_input("Document id", key="documents.id", max_chars=MAX_ID_CHARS)

stored = None
if doc_id.strip():
    try:
        stored = service.get(app, corpus, doc_id)
    except DocumentNotFoundError:
        st.info(md_escape(f"No document {doc_id!r} in {corpus!r} yet: write its text below "
                          "to add it."), icon=":material/info:")
    except SearchAppError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
if stored is not None:
    st.caption("Embedded." if stored.embedded else "Not embedded yet: its job is queued.")

if doc_id.strip():
    # The form shows the stored document; its fields follow when another one is looked up
    # or this one was saved (keyed widgets filled from the store, never stale defaults).
    meta_text = "\n".join(f"{k}={v}" for k, v in (stored.meta if stored else {}).items())
    loaded = (corpus, doc_id, stored.text if stored else None, meta_text)
    if st.session_state.get("documents.loaded") != loaded:
        st.session_state["documents.text"] = stored.text if stored else ""
        st.session_state["documents.meta"] = meta_text
        st.session_state["documents.loaded"] = loaded
    with st.form("documents.edit"):
        text = st.text_area("Text", key="documents.text", height=160)
        meta_lines = st.text_area(
            "Metadata, one KEY=VALUE per line (replaces the stored metadata)",
            key="documents.meta")
        saved = st.form_submit_button("Save", type="primary")
    if saved:
        try:
            done = service.upsert(app, corpus, [service.Doc(
                doc_id, text, service.parse_meta(meta_lines.splitlines()))])
            st.session_state["documents.flash"] = done.describe()
            st.rerun()  # show what is stored now
        except SearchAppError as exc:
            st.error(md_escape(f"Nothing was saved. {exc}"), icon=":material/error:")
    flash = st.session_state.pop("documents.flash", None)
    if flash:
        st.success(md_escape(flash), icon=":material/check:")

if stored is not None:
    sure = st.checkbox(md_escape(f"Yes, delete {stored.id!r} from {corpus!r}"),
                       key="documents.sure")
    if st.button("Delete document", disabled=not sure):
        try:
            done = service.delete(app, corpus, [stored.id])
            st.session_state["documents.flash"] = (f"Deleted {stored.id!r} (generation "
                                                   f"{done.generation}).")
            st.rerun()  # drawn again from the store: no "Embedded.", no text to save back
        except SearchAppError as exc:
            st.error(md_escape(str(exc)), icon=":material/error:")
