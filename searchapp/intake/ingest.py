"""Read uploads (CSV, TSV, JSONL, JSON array, TXT, Parquet, XLSX, ODS; each also gzipped) into a
Table.

``read_table`` opens a file (bytes or a path) by its name's format and reads
its header and first rows; the rest is read when the upload streams it
(``Table.rows``), so memory never holds the file. What is refused, always
naming the line, item or row and before anything is stored (an upload is one
transaction): an unknown file type (the message says which we read), a folder
or a missing path, a file over the upload limit (``SEARCHAPP_MAX_UPLOAD_BYTES``,
counted uncompressed: a .gz stops at the limit, or once it expands more than
``SEARCHAPP_MAX_RATIO`` times), more than 200,000 blank lines in a row, bytes that are not UTF-8 (a
BOM is fine; UTF-16 and UTF-32 with a BOM are decoded too), NUL bytes, an
empty file, malformed CSV or JSON, rows wider or narrower than the header, two
columns with one name, a JSON object with a key twice, cells over their size
limit (``cells``), repeated ids. Cells are the text the file wrote
(``cells``): ids and numbers keep their digits, nested values are JSON.

The pieces: ``source`` (bytes in, bounded), ``formats`` (a reader per format),
``table`` (``Table``), ``builder`` (rows → documents), ``seen_ids`` (repeats).

Example:
    >>> table = read_table(b"question,answer\\nHow do I log in?,Click Sign in\\n", "faq.csv")
    >>> guess_text_column(table.preview())
    'question'
    >>> docs, skipped = to_documents(table, "question")
    >>> docs[0].text, docs[0].meta
    ('How do I log in?', {'answer': 'Click Sign in', 'lang': 'und'})
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from searchapp.config import max_upload_bytes
from searchapp.errors import IngestError
from searchapp.intake.builder import (
    ID_COLUMN_GUESSES,
    TEXT_COLUMN_GUESSES,
    guess_id_column,
    guess_text_column,
    to_documents,
)
from searchapp.intake.cells import MAX_ID_CHARS, MAX_META_CHARS, MAX_TEXT_CHARS
from searchapp.intake.formats.registry import extension, extensions, find, known_as, listing
from searchapp.intake.source import Source, check_path
from searchapp.intake.table import Table

__all__ = ["ID_COLUMN_GUESSES", "MAX_ID_CHARS", "MAX_META_CHARS", "MAX_TEXT_CHARS",
           "TEXT_COLUMN_GUESSES", "Table", "detect_format", "guess_id_column",
           "guess_text_column", "read_table", "to_documents"]


def detect_format(filename: str) -> str:
    """The format of an upload from its name; the error says in words which ones we read.

    Example:
        >>> detect_format("faq.csv.gz")
        'csv'
        >>> detect_format("notes.docx")
        Traceback (most recent call last):
        ...
        searchapp.errors.IngestError: Cannot read 'notes.docx': it is a Word document (.docx)...
    """
    fmt = find(filename, "table")
    if fmt is not None:
        return fmt.name
    ext = extension(filename, "table")
    known = known_as(filename)
    what = (f"it is {known[0]} (.{ext}){known[1]}" if known else
            f"files ending in .{ext} are not read" if ext else "its name has no extension")
    raise IngestError(f"Cannot read {filename!r}: {what}. Upload {table_words()}.")


def table_words() -> str:
    """The table formats we read, in words (every one also gzipped)."""
    return f"{listing('table')}, each also gzipped (.gz)"


def read_table(source: bytes | str | Path | BinaryIO, filename: str | None = None,
               max_bytes: int | None = None) -> Table:
    """Open an upload (bytes, a path, or an open seekable file such as Streamlit's uploaded
    file): its columns and first rows read, the rest streamed when used.

    ``max_bytes`` caps the uncompressed size (default: SEARCHAPP_MAX_UPLOAD_BYTES); a .gz
    may expand at most SEARCHAPP_MAX_RATIO times (see ``source``).
    """
    from searchapp.intake.inputs import InputLimits

    if isinstance(source, str | Path):
        check_path(Path(source), extensions("table"))  # before the type: a folder has none
        filename = filename or Path(source).name
    filename = filename or "upload"
    fmt = detect_format(filename)  # an unknown type is refused before anything is read
    limit = max_upload_bytes() if max_bytes is None else max_bytes
    src = Source(source, filename, limit, InputLimits.from_env().max_ratio)
    if src.empty:
        raise IngestError(f"{filename} is empty: there is nothing to upload.")
    return Table.open(src, fmt)
