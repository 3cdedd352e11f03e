"""Upload page: add documents or a table to a new or existing corpus, load the sample,
watch folders (``searchapp.ui.folders_section``), delete a corpus.

Documents (several files, archives, anything but one table) go through
``searchapp.ui.documents_upload`` and the ``ingest`` job; a table as below.

The page opens the file (``searchapp.intake.ingest``: its columns and first rows, for
the preview), stores it in one transaction (``searchapp.corpora.service.upload``, which
streams the rows and queues the embedding job), and then shows that job's progress.
Every problem with the file appears as a message naming the row to fix; nothing is
stored then.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from searchapp.corpora import service as corpora
from searchapp.errors import SearchAppError
from searchapp.intake import table_upload
from searchapp.intake.columns import column_stats
from searchapp.intake.formats.registry import labels, listing
from searchapp.intake.ingest import (
    Table,
    guess_id_column,
    guess_text_column,
    read_table,
)
from searchapp.jobs import queue
from searchapp.sample import ATTRIBUTION, SAMPLE_CORPUS, SAMPLE_SIZE, load_sample
from searchapp.ui.common import (
    active_embed_job,
    corpus_summaries,
    md_escape,
    page_app,
    page_link,
    remember_corpus,
    user_errors,
)
from searchapp.ui.corpora_table import embedding_with_table, live_corpora_table
from searchapp.ui.documents_upload import documents_form, ingest_outcome, is_table_upload
from searchapp.ui.folders_section import folders_section
from searchapp.ui.guide import guide_link
from searchapp.ui.upload_target import new_corpus_model, upload_target
from searchapp.ui.welcome import welcome

NO_ID = "(none: make ids from the text)"
PREVIEW_ROWS = 10

app = page_app()
st.title("Upload")
guide_link("upload")
summaries = corpus_summaries(app)
names = [c.name for c in summaries]
state = st.session_state
state.setdefault("upload.nonce", 0)  # bumped after an upload to clear the file picker


def remember_upload(summary: table_upload.UploadSummary) -> None:
    """Keep the summary and job for after the rerun, and clear the file picker."""
    remember({"message": summary.describe(), "job_id": summary.job_id,
              "corpus": summary.corpus})


def remember(last: dict) -> None:
    """Keep what was done ({message, job_id, corpus}) for after the rerun; clear the picker.

    The job id also goes into the address (``?job=12``), so a reload of the
    page (a new session) still shows the job's progress.
    """
    state["upload.last"] = last
    if last["job_id"] is not None:
        st.query_params["job"] = str(last["job_id"])
    remember_corpus(last["corpus"])
    state["upload.nonce"] += 1
    st.rerun()


def from_address() -> dict | None:
    """After a reload: the embedding job named in the address (``?job=12``), if it exists."""
    job_id = st.query_params.get("job", "")
    if not job_id.isdigit():
        return None
    try:
        job = queue.get(app.db, int(job_id))
    except SearchAppError:
        return None
    if job.kind not in ("embed", "ingest"):
        return None
    corpus = job.payload.get("corpus", "")
    what = "embedding" if job.kind == "embed" else "reading files,"
    return {"message": f"Corpus {corpus!r}: {what} job {job.id}.", "job_id": job.id,
            "corpus": corpus}


def embed_job_of(last: dict | None) -> int | None:
    """The embed job whose bar the page shows for what was done last: the upload's own, or
    the one an ingest queued once it ended; None while an ingest runs or when there is none.
    """
    if not last or last["job_id"] is None:
        return None
    job = queue.get(app.db, last["job_id"])
    if job.kind == "embed":
        return job.id
    return (job.result or {}).get("embed_job") if job.status == "succeeded" else None


# ---- what was done last: a deletion, or an upload and its embedding job -------------
if flash := state.pop("upload.flash", None):
    st.success(md_escape(flash), icon=":material/delete:")
last = state.get("upload.last") or from_address()
if last and last["corpus"] in names:
    st.success(md_escape(last["message"]), icon=":material/task_alt:")

    def link_to_search() -> None:
        page_link("searchapp/ui/pages/search.py", f"Search {last['corpus']!r}",
                  icon=":material/search:")

    def bar_and_table(embed_job: int) -> None:
        embedding_with_table(app, embed_job, last["corpus"], link_to_search)

    if last["job_id"] is not None and queue.get(app.db, last["job_id"]).kind == "ingest":
        ingest_outcome(app, last["job_id"], last["corpus"], link_to_search, bar_and_table)
    elif last["job_id"] is not None:
        bar_and_table(last["job_id"])
    else:
        st.caption("Nothing new to embed.")
        link_to_search()

# ---- first run: what the app is for, and the sample corpus ----------------------------
if not summaries:
    welcome()
    if st.button(f"Load the sample corpus ({SAMPLE_SIZE:,} image captions)", type="primary",
                 icon=":material/dataset:"):
        with user_errors(), st.spinner("Storing the sample corpus..."):
            remember_upload(load_sample(app))
    st.caption(ATTRIBUTION)
else:
    if not (last and last["corpus"] in names and embed_job_of(last) is not None):
        live_corpora_table(app)  # no bar above: the table refreshes itself while embedding
    if SAMPLE_CORPUS in names:
        st.caption(ATTRIBUTION)


# ---- a new file ------------------------------------------------------------------
def parse(uploaded) -> Table:
    """Open the uploaded file: its columns and first rows (milliseconds, so each rerun does it
    again and the session keeps no table; the upload streams the whole file)."""
    return read_table(uploaded, uploaded.name, app.settings.max_upload_bytes)


def pick_columns(table: Table, key: str) -> tuple[list[str], str]:
    """Text column(s) and id column, preset to the guesses; id "" means none.

    Several text columns (a title and a body) are joined, row by row, into the
    text. Their statistics show under the choice, with a warning when a chosen
    column looks like a label or an id. ("" rather than None for no id:
    ``to_documents`` reads None as "guess one for me".)
    """
    columns = [str(c) for c in table.columns]
    guess = guess_text_column(table.preview())
    left, right = st.columns(2)
    text_columns = left.multiselect(
        "Text column(s): what is searched", columns, default=[guess], key=f"text-{key}",
        help="Choose two or more (a title and a body) to join them, in that order, into the "
             "text of each document.")
    id_guess = guess_id_column(table.preview().drop(columns=text_columns)) if text_columns else None
    id_options = [NO_ID, *[c for c in columns if c not in text_columns]]
    id_column = right.selectbox(
        "Id column (unique per row)", id_options, key=f"id-{key}-{'+'.join(text_columns)}",
        index=id_options.index(id_guess) if id_guess in id_options else 0,
        help="Rows with an id already in the corpus replace it when their text changed. "
             "Without an id column, ids are made from the text, so uploading the same file "
             "again adds nothing twice.")
    if id_column == NO_ID and id_guess:
        st.caption(f"Column {md_escape(repr(id_guess))} is not used as the id: ids are made "
                   "from the text. Choose it above to use the file's own ids (each row's must "
                   "be present and unique).")
    column_statistics(table, text_columns)
    return text_columns, "" if id_column == NO_ID else id_column


def column_statistics(table: Table, text_columns: list[str]) -> None:
    """Per column: distinct values, mean length, empty share; a warning for a chosen text
    column that looks like a label or an id. Over the rows read on opening (the first
    1,000): the file itself is read only by the upload."""
    stats = column_stats(table.preview())
    for s in stats:
        if s.column in text_columns and s.warning:
            st.warning(md_escape(f"{s.warning}: the documents would be made of it. Choose the "
                                 "column that holds the text."), icon=":material/warning:")
    if len(text_columns) > 1:
        st.caption(md_escape(f"The text of each document: {' + '.join(text_columns)}, joined "
                             "with a blank line (empty parts left out)."))
    with st.expander("Column statistics", expanded=any(
            s.warning for s in stats if s.column in text_columns)):
        if not table.complete:
            st.caption(f"Of the first {len(table.head):,} rows.")
        st.dataframe(pd.DataFrame([s.as_row() for s in stats]), hide_index=True,
                     width="stretch", key="upload.stats-table", column_config={
                         "empty": st.column_config.NumberColumn("empty", format="percent"),
                         "warning": st.column_config.TextColumn(width="large")})


def format_hint(table: Table) -> None:
    """A CSV read as one column whose name holds tabs or semicolons is probably not a CSV."""
    columns = [str(c) for c in table.columns]
    if table.format == "csv" and len(columns) == 1:
        for sep, name, fix in (("\t", "tabs", "rename it to .tsv"),
                               (";", "semicolons", "save it with commas")):
            if sep in columns[0]:
                st.warning(f"The file has a single column {md_escape(repr(columns[0]))}: its "
                           f"values seem separated by {md_escape(name)}, not commas. Please "
                           f"{md_escape(fix)} and "
                           "upload it again.", icon=":material/warning:")


st.subheader("Add documents or a table")
# Any file is accepted here: a wrong type gets our message (the formats we read), not
# Streamlit's bare "file type not allowed".
picked = st.file_uploader(
    f"Documents ({labels('document')}), several at once or as a .zip/.tar archive: a "
    f"document per file. Or one table ({labels('table')}): a document per row.",
    key=f"file-{state['upload.nonce']}", accept_multiple_files=True,
    help=f"Documents: {listing('document')}. Tables: {listing('table')}, each also gzipped. "
         f"Up to {app.settings.max_upload_bytes / 2**20:,.0f} MiB per file once uncompressed "
         "(SEARCHAPP_MAX_UPLOAD_BYTES).")
whole_txt = bool(picked) and len(picked) == 1 and picked[0].name.lower().endswith(".txt") and \
    st.toggle("Read the .txt as one document (not one document per line)",
              key=f"whole-{state['upload.nonce']}")
uploaded = picked[0] if picked and is_table_upload(picked, whole_txt) else None
if picked and uploaded is None:
    documents_form(app, picked, names, remember, key=f"docs-{state['upload.nonce']}")
if uploaded is not None:
    table = None
    with user_errors():
        table = parse(uploaded)
    if table is not None:
        rows = f"{len(table.head):,}" if table.complete else f"more than {len(table.head):,}"
        st.caption(md_escape(f"{uploaded.name}: {rows} rows, columns "
                             f"{', '.join(map(str, table.columns))}. First {PREVIEW_ROWS} rows:"))
        st.dataframe(table.preview(PREVIEW_ROWS), hide_index=True, width="stretch")
        format_hint(table)
        key = uploaded.file_id
        text_columns, id_column = pick_columns(table, key)
        others = [str(c) for c in table.columns if c not in (*text_columns, id_column)]
        if others:
            st.caption(md_escape(f"Kept with each document as metadata: {', '.join(others)}."))
        corpus = upload_target(uploaded.name, names, key, "rows")
        model = new_corpus_model(app, corpus, names, key)
        if st.button("Upload and embed", type="primary", disabled=not corpus or not text_columns,
                     icon=":material/upload:"):
            text = text_columns[0] if len(text_columns) == 1 else text_columns
            with user_errors(f"Nothing was stored from {uploaded.name}: "), \
                    st.spinner("Storing the documents..."):
                remember_upload(table_upload.upload(app, table, corpus, text, id_column,
                                                    model=model))

# ---- watched folders ----------------------------------------------------------------
folders_section(app)

# ---- delete ----------------------------------------------------------------------
if summaries:
    with st.expander("Delete a corpus", icon=":material/delete:"):
        victim = st.selectbox("Corpus to delete", names, key="delete-name")
        confirm = st.checkbox(f"Yes, delete {md_escape(repr(victim))} with its documents, "
                              "embeddings and index files", key=f"delete-confirm-{victim}")
        if st.button("Delete", disabled=not confirm, key="delete-button"):
            job = active_embed_job(app, victim)
            if job is not None:
                st.error(f"{md_escape(repr(victim))} is being embedded (job {job.id}). Cancel that "
                         "job on the Jobs page, or wait for it to end, then delete the corpus.",
                         icon=":material/error:")
            else:
                with user_errors():
                    corpora.delete(app, victim)
                    state.pop("upload.last", None)
                    st.query_params.pop("job", None)
                    state["upload.flash"] = f"Deleted corpus {victim!r}."
                    st.rerun()
