"""The input formats: one record each in ``registry``, and their readers.

Documents (a file is one or more documents): ``pdf``, ``office`` (.docx, .pptx),
``odf`` (.odt, .odp), ``html``, ``markup`` (Markdown, reStructuredText, text), ``rtf``,
``epub``, ``email_reader`` (.eml, .mbox), ``image`` (PNG, JPEG, TIFF, WebP, read by
Tesseract: ``ocr``, which also reads a PDF's scanned pages);
``document_readers.read_document`` is the one way a document file is read (its first
bytes checked against its format's record).

Tables (a row is a document): a reader takes a ``Source`` (``searchapp.intake.source``)
and returns a ``Reading``: the column names when the format has a header or a schema, and an
iterator of rows ``(number, {column: cell})`` that reads the file as it goes
(``number`` is what a message names: the line of a CSV, TSV, JSONL or TXT file,
the item of a JSON array, the row of a Parquet file). Every cell is the text
the file wrote (``searchapp.intake.cells``): no reader guesses a type.

- ``delimited``: CSV (the csv module's quoting, strictly) and TSV (no quoting:
  a field is what lies between two tabs).
- ``text``: TXT, one document per line.
- ``jsonl``: JSON Lines, one object per line; ``json_array``: a JSON array of
  objects or strings (or an object holding one), read item by item.
- ``parquet``: Parquet, a batch of rows at a time, each column cast to text by Arrow.
- ``spreadsheet``: Excel (.xlsx) and OpenDocument (.ods) workbooks, the first sheet's rows,
  each cell the text the sheet shows.

Example:
    >>> from searchapp.intake.source import Source
    >>> tsv = named("tsv", "table")
    >>> reading = tsv.reader(Source(b'id\\ttext\\n1\\t"quoted"\\n', "a.tsv", 100), "tsv")
    >>> reading.columns, list(reading.rows)
    (['id', 'text'], [(2, {'id': '1', 'text': '"quoted"'})])
"""

from __future__ import annotations

# Each reader module registers its formats (``registry``) when it is imported; the order of
# these imports is the order formats are listed in: the commonest first, documents, then tables.
# isort: off
from searchapp.intake.formats import pdf, office, odf, html, markup, rtf, epub  # noqa: F401
from searchapp.intake.formats import email_reader, image  # noqa: F401
from searchapp.intake.formats import delimited, jsonl, json_array, text, parquet  # noqa: F401
from searchapp.intake.formats import spreadsheet  # noqa: F401
# isort: on
from searchapp.intake.formats.base import Reading, Row
from searchapp.intake.formats.registry import Format, find, listing, named, register

__all__ = ["Format", "Reading", "Row", "find", "listing", "named", "register"]
