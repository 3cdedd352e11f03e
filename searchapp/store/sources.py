"""Where each document came from: the app's own record of the source that brought it.

Every document row carries ``source``, a short key written by the way in that stored
it, never read from the document's metadata: a sync of a source may change or
remove only the documents whose ``source`` is its own key, so two sources filling
one corpus (an upload and a watched folder, two folders, a folder and a table whose
rows happen to have ``path`` and ``sha256`` columns) never touch each other's rows.
Documents read from files also carry ``original``, the SHA-256 of the bytes the app
stored for them (``corpora/originals``): the only way from a document to a file.

The keys, by the way in:

- ``folder:/abs/path``: a folder ingested from the command line or watched (the same
  folder is the same source either way);
- ``path:/abs/path``: a single file or archive given on the command line;
- ``upload``: files uploaded in the browser or through the API;
- ``table:NAME``: rows of a table file; ``api``: documents sent to the API by id;
- ``files`` and ``rows``: documents stored before sources were recorded (read from
  files, or not). A file source that meets a ``files`` document under an id it
  produces takes it over; a sync never removes one it has not taken over.

Example:
    >>> folder_source("/home/ana/Inbox"), describe("folder:/home/ana/Inbox")
    ('folder:/home/ana/Inbox', 'the folder /home/ana/Inbox')
    >>> describe(table_source("tickets.csv")), describe(None)
    ('the table tickets.csv', 'rows stored before sources were recorded')
"""

from __future__ import annotations

UPLOAD = "upload"
API = "api"
LEGACY_FILES = "files"  # read from files before sources were recorded: claimable
LEGACY_ROWS = "rows"  # anything else stored before sources were recorded
MAX_KEY = 600  # the column's width


def _key(kind: str, value: str) -> str:
    key = f"{kind}:{value}"
    return key if len(key) <= MAX_KEY else key[:MAX_KEY]


def folder_source(path: str) -> str:
    """The source key of a folder (an absolute, resolved path)."""
    return _key("folder", str(path))


def path_source(path: str) -> str:
    """The source key of one file or archive given by its path."""
    return _key("path", str(path))


def table_source(name: str) -> str:
    """The source key of a table file's rows."""
    return _key("table", str(name))


def claimable(source: str | None) -> bool:
    """Whether a file source may take over a document of this source (read from files
    before sources were recorded)."""
    return source == LEGACY_FILES


def describe(source: str | None) -> str:
    """The source in words, for reports and errors."""
    if not source or source == LEGACY_ROWS:
        return "rows stored before sources were recorded"
    kind, _, value = source.partition(":")
    words = {"folder": "the folder", "path": "the file", "table": "the table"}
    if kind in words and value:
        return f"{words[kind]} {value}"
    return {UPLOAD: "an upload", API: "the API",
            LEGACY_FILES: "files read before sources were recorded"}.get(source, source)
