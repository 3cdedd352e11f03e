"""The one way in: any input (a file, several, a folder, an archive, a table, an upload) to
the path that reads it, for the CLI, the upload page, the API and watched folders alike.

``routing.takes_table`` decides: one table file (not staged, not a folder) goes the table
path: its rows are stored now (``table_upload``) and an embed job is queued; everything
else goes the files path: an ``ingest`` job reads the files, folders and archives
(``files_job``). Uploads kept for a job (``staging``: the browser's documents, the API's
files) are documents and archives, so they always take the files path; a table uploaded
in the browser goes through its own form first (columns chosen on a preview), then
``table_upload``.

Example:
    >>> ingest(app, "faq", [Path("faq.csv")]).path                     # doctest: +SKIP
    'table'
    >>> ingest(app, "manuals", [Path("manuals/")]).path                # doctest: +SKIP
    'files'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from searchapp.context import App
from searchapp.errors import InvalidParameterError
from searchapp.intake.files_job import request_ingest
from searchapp.intake.ingest import read_table
from searchapp.intake.routing import takes_table
from searchapp.intake.staging import Staged
from searchapp.intake.table import Table
from searchapp.intake.table_upload import UploadSummary, upload


@dataclass(frozen=True)
class Ingested:
    """Where an input went: ``path`` "table" (rows stored, ``summary`` says how many;
    ``job_id`` embeds them, None when nothing is new) or "files" (``job_id`` is the ingest
    job that reads them)."""

    path: str
    job_id: int | None
    summary: UploadSummary | None = None


def ingest(app: App, corpus: str, paths: Sequence[Path] = (), *, whole_files: bool = False,
           sync: bool = False, text_column: str | Sequence[str] | None = None,
           id_column: str | None = None, model: str | None = None,
           staged: Staged | None = None, options: dict | None = None,
           on_table: Callable[[Table], None] | None = None) -> Ingested:
    """Send ``paths`` (or the ``staged`` uploads) into ``corpus`` the way their kind is read.

    ``whole_files``: a name both paths read (``.txt``) is one document, not a table of
    lines. ``sync``: remove what is gone (files path only; a table's rows are kept in step
    by uploading it again). ``text_column``/``id_column``: the table's columns (guessed
    when None). ``options``: a watched folder's globs, settle time, identity and roots.
    ``on_table``: called with an opened table before its rows are stored (the CLI warns
    about its text column there).
    """
    if staged is not None:
        return Ingested("files", request_ingest(app, corpus, staged.paths, sync=sync,
                                                model=model, staged=staged.folder,
                                                options={**staged.options(),
                                                         **(options or {})}))
    paths = [Path(p) for p in paths]
    watched = bool((options or {}).get("watch"))  # a folder's sync, even while it is away
    if watched or any(p.is_dir() for p in paths) or \
            not takes_table([p.name for p in paths], whole_files):
        return Ingested("files", request_ingest(app, corpus, paths, sync=sync, model=model,
                                                options=options))
    if sync:
        raise InvalidParameterError("--sync is for files, folders and archives; a table's rows "
                                    "are kept in step by uploading the table again.")
    table = read_table(paths[0])
    if on_table is not None:
        on_table(table)
    summary = upload(app, table, corpus, text_column, id_column, model=model)
    return Ingested("table", summary.job_id, summary)
