"""Settings page: the JSON API's keys (create, list, revoke) and backups.

The same service functions as ``searchapp keys ...`` and ``searchapp backup``: a
new key is shown once (only its SHA-256 is stored); "Back up now" queues the
``backup`` job that the API's ``POST /api/v1/snapshots`` queues, writing a
snapshot into ``DATA_DIR/backups``.
"""

from __future__ import annotations

import streamlit as st

from searchapp.access import keys
from searchapp.backups import service as backups
from searchapp.errors import SearchAppError
from searchapp.ui.common import job_progress, md_escape, page_app
from searchapp.ui.guide import guide_link
from searchapp.ui.resources import ensure_background_worker

BACKUP_JOB = "settings.backup_job"  # the backup this session started, followed here

app = page_app()
st.title("Settings")
guide_link("configuration")

st.subheader("API keys")
st.caption("Programs use the JSON API at /api/v1 with `Authorization: Bearer KEY` "
           "(docs at /api/v1/docs). Read-only keys may read and search only.")
with st.form("settings.new-key", clear_on_submit=True):
    name = st.text_input("Name of the new key", max_chars=100,
                         placeholder="helpdesk-form")
    read_only = st.checkbox("Read-only (search and read, change nothing)")
    create = st.form_submit_button("Create key", type="primary")
if create:
    try:
        made = keys.create(app.db, name, read_only=read_only)
        st.success(md_escape(f"Key {made.row.name!r} created. Copy it now: it is shown this "
                             "once, only its hash is stored."), icon=":material/key:")
        st.code(made.key, language=None)
    except SearchAppError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")

rows = keys.list_keys(app.db)
if rows:
    st.dataframe([{"id": k.id, "name": k.name,
                   "access": "read-only" if k.read_only else "read-write",
                   "starts with": f"{k.prefix}...", "created": k.created_at,
                   "last used": k.last_used_at} for k in rows], hide_index=True)
    target = st.selectbox("Key to revoke", [k.name for k in rows])
    if st.button("Revoke key"):
        try:
            keys.revoke(app.db, target)
            st.success(md_escape(f"Key {target!r} revoked: requests with it are refused now."))
            st.rerun()
        except SearchAppError as exc:
            st.error(md_escape(str(exc)), icon=":material/error:")
else:
    st.info("No API keys yet. Without a key or a password, the API answers local requests "
            "only.", icon=":material/info:")

st.subheader("Backups")
st.caption(f"Snapshots are kept in {md_escape(app.settings.backup_dir)}; restore one with "
           "`searchapp restore FILE --data-dir NEW_FOLDER`.")
if st.button("Back up now"):
    try:
        st.session_state[BACKUP_JOB] = backups.request_backup(app)
        ensure_background_worker(app)
    except SearchAppError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
if (backup_job := st.session_state.get(BACKUP_JOB)) is not None:
    job_progress(app, backup_job, f"Backup job {backup_job}")  # the list below follows it
snapshots = backups.list_snapshots(app)
if snapshots:
    st.dataframe([{"name": s.name, "kind": s.kind, "made": s.created_at,
                   "size (MiB)": round(s.size / 2**20, 1), "schema": s.schema_version,
                   "corpora": ", ".join(f"{c['name']} ({c['documents']})" for c in s.corpora)}
                  for s in snapshots], hide_index=True)
