"""The Upload page's documents: files, several at once, and archives, into a corpus.

A table (one CSV, a .txt read line by line, ...) keeps the table form of the
page; anything else goes here: the files are kept in the work folder
(``corpora.staging``) and the ``ingest`` job reads them (``corpora.files_job``),
a document per file, its id the path inside the archive or the file's name.
After the job the page shows its report (added, changed, unchanged, removed,
skipped, failed, with a line per file left out) and then the embedding's bar.

Example (inside the page script):
    >>> documents_form(app, uploaded_files, names, remember)   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from searchapp.context import App
from searchapp.intake.files_job import type_words
from searchapp.intake.ingest import table_words
from searchapp.intake.left_out import not_read, readable
from searchapp.intake.report import IngestReport
from searchapp.intake.routing import takes_table
from searchapp.intake.source import size_words
from searchapp.intake.staging import stage_uploads
from searchapp.intake.way_in import ingest
from searchapp.jobs import queue
from searchapp.ui.common import job_progress, md_escape, user_errors
from searchapp.ui.job_report import REPORT_LINES, mark_told, problems_table
from searchapp.ui.upload_target import new_corpus_model, upload_target

REFUSED_SHOWN = 5  # files not of a type we read named above the button


def is_table_upload(files: Sequence, whole_files: bool) -> bool:
    """One file that ``routing.takes_table``: the table form applies.

    Example:
        >>> class F: name = "faq.csv"
        >>> is_table_upload([F()], False)
        True
    """
    return takes_table([f.name for f in files], whole_files)


def unreadable(files: Sequence) -> list[str]:
    """Names of the files that are neither a document type we read nor an archive.

    Example:
        >>> class F:
        ...     def __init__(self, name): self.name = name
        >>> unreadable([F("a.pdf"), F("b.zip"), F("c.exe"), F("d.csv")])
        ['c.exe', 'd.csv']
    """
    return [f.name for f in files if not readable(f.name)]


def documents_form(app: App, files: Sequence, names: list[str],
                   remember: Callable[[dict], None], key: str) -> None:
    """The list of files, the corpus to add them to, and the button that queues the job.

    Files not of a type we read go to the job too (``staging`` keeps them as lines of the
    report, unread): every file chosen is named in the job's report."""
    refused = unreadable(files)
    if len(refused) == len(files):
        tables = f" A table ({table_words()}) is uploaded on its own."
        st.error(f"Cannot read {md_escape(', '.join(repr(n) for n in refused))}: "
                 f"{'it is' if len(refused) == 1 else 'they are'} not a type we read. Add "
                 f"{type_words()}.{tables if len(files) > 1 else ''}", icon=":material/error:")
        return
    if refused:
        st.warning(md_escape(f"Not read ({len(refused):,} of {len(files):,}; the job's report "
                             "names them too): " + "; ".join(
                                 f"{n} {not_read(n)}" for n in refused[:REFUSED_SHOWN]) +
                             (f"; and {len(refused) - REFUSED_SHOWN:,} more"
                              if len(refused) > REFUSED_SHOWN else "") + "."),
                   icon=":material/warning:")
    readable_files = [f for f in files if f.name not in refused]
    total = sum(f.size for f in readable_files)
    st.caption(md_escape(f"{len(readable_files):,} file{'s' if len(readable_files) != 1 else ''}"
                         f" to read ({size_words(total)}): " +
                         ", ".join(f.name for f in readable_files[:20]) +
                         (f" and {len(readable_files) - 20:,} more"
                          if len(readable_files) > 20 else "") +
                         ". A document per file (an archive: per file inside it), its id "
                         "the path inside the archive or the file's name."))
    corpus = upload_target(files[0].name if len(files) == 1 else "documents", names,
                           f"doc-{key}", "documents")
    model = new_corpus_model(app, corpus, names, f"doc-{key}")
    sync = st.checkbox("Also remove what earlier uploads added whose files are not in this "
                       "upload", key=f"sync-{key}", help="For an archive of a whole folder "
                       "uploaded again: files deleted from the folder leave the corpus too. "
                       "Documents of watched folders, tables and the API are never removed "
                       "here.")
    if st.button("Add and embed", type="primary", disabled=not corpus,
                 icon=":material/upload:", key=f"add-{key}"):
        with user_errors("Nothing was stored: "), st.spinner("Keeping the files..."):
            staged = stage_uploads(app.settings.work_dir, [(f.name, f) for f in files],
                                   app.settings.max_upload_bytes)
            job_id = ingest(app, corpus, sync=sync, staged=staged, model=model).job_id
            remember({"message": f"Corpus {corpus!r}: reading {len(staged.names):,} of "
                      f"{len(files):,} uploaded file{'s' if len(files) != 1 else ''} (job "
                      f"{job_id})" + (f"; {len(staged.refused):,} not read, named in its "
                                      "report." if staged.refused else "."),
                      "job_id": job_id, "corpus": corpus})


def ingest_outcome(app: App, job_id: int, corpus: str, on_embedded: Callable[[], None],
                   embed_panel: Callable[[int], None]) -> None:
    """The ingest job's bar; once done, its report and then ``embed_panel(embed job id)``
    (the Upload page draws the embedding's bar with its table), or ``on_embedded()`` when
    nothing was left to embed."""
    job = queue.get(app.db, job_id)

    def report() -> None:
        done = IngestReport.from_result(queue.get(app.db, job_id).result, corpus)
        st.markdown(md_escape(done.describe()))
        problems_table(done.problems, job_id)
        mark_told(job_id)  # seen here: the corpus picker's notice does not repeat it
        for note in done.notes[:REPORT_LINES]:
            st.caption(md_escape(note))
        if done.embed_job is not None:
            embed_panel(done.embed_job)
        else:
            on_embedded()

    job_progress(app, job.id, f"Reading the files into {corpus!r}", report)
