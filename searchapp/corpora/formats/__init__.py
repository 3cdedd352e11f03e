"""One reader per upload format, each streaming rows of strings with explicit types.

A reader takes a ``Source`` (``searchapp.corpora.source``) and returns a
``Reading``: the column names when the format has a header or a schema, and an
iterator of rows ``(number, {column: cell})`` that reads the file as it goes
(``number`` is what a message names: the line of a CSV, TSV, JSONL or TXT file,
the item of a JSON array, the row of a Parquet file). Every cell is the text
the file wrote (``searchapp.corpora.cells``): no reader guesses a type.

- ``delimited``: CSV (the csv module's quoting, strictly) and TSV (no quoting:
  a field is what lies between two tabs).
- ``text``: TXT, one document per line.
- ``jsonl``: JSON Lines, one object per line; ``json_array``: a JSON array of
  objects or strings (or an object holding one), read item by item.
- ``parquet``: Parquet, a batch of rows at a time, each column cast to text by Arrow.
- ``spreadsheet``: Excel (.xlsx) and OpenDocument (.ods) workbooks, the first sheet's rows,
  each cell the text the sheet shows.

Example:
    >>> from searchapp.corpora.source import Source
    >>> reading = READERS["tsv"](Source(b'id\\ttext\\n1\\t"quoted"\\n', "a.tsv", 100), "tsv")
    >>> reading.columns, list(reading.rows)
    (['id', 'text'], [(2, {'id': '1', 'text': '"quoted"'})])
"""

from __future__ import annotations

from searchapp.corpora.formats.base import Reading, Row
from searchapp.corpora.formats.delimited import read_delimited
from searchapp.corpora.formats.json_array import read_json_array
from searchapp.corpora.formats.jsonl import read_jsonl
from searchapp.corpora.formats.parquet import read_parquet
from searchapp.corpora.formats.spreadsheet import read_spreadsheet
from searchapp.corpora.formats.text import read_txt

READERS = {"csv": read_delimited, "tsv": read_delimited, "jsonl": read_jsonl,
           "json": read_json_array, "txt": read_txt, "parquet": read_parquet,
           "xlsx": read_spreadsheet, "ods": read_spreadsheet}
UNITS = {"csv": "line", "tsv": "line", "jsonl": "line", "json": "item", "txt": "line",
         "parquet": "row", "xlsx": "row", "ods": "row"}  # what a row's number counts, for messages

__all__ = ["READERS", "UNITS", "Reading", "Row"]
