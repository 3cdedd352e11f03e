"""Table: an upload opened for reading, its columns known, its rows read on demand.

Opening reads the header (or schema) and the first rows (``HEAD_ROWS``, at most
``HEAD_CHARS`` of text): enough for a preview, for guessing the text and id
columns, and for the errors near the top of a file to show at once. ``rows()``
reads the whole file again from its start, a row at a time, each time it is
called; nothing keeps the rows. ``frame`` is the whole table as a DataFrame of
strings, for the small labelled files of calibration and training.

Example:
    >>> from searchapp.intake.ingest import read_table
    >>> table = read_table(b"id,text\\n1,hello\\n2,world\\n", "a.csv")
    >>> table.columns, [n for n, _ in table.rows()], table.label(3)
    (['id', 'text'], [2, 3], 'line 3')
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from itertools import islice

import pandas as pd

from searchapp.intake.formats import Reading, Row, named
from searchapp.intake.source import Source

HEAD_ROWS = 1_000  # rows read when a file is opened (preview, guesses)
HEAD_CHARS = 4 << 20  # ... and at most this much of their text


class Table:
    """An upload: its format, columns and first rows; ``rows()`` streams all of it."""

    def __init__(self, filename: str, fmt: str, read: Callable[[Collection[str] | None], Reading],
                 label: Callable[[int], str] | None = None):
        self.filename, self.format, self._read = filename, fmt, read
        self._label = label or (lambda n: f"{named(fmt, 'table').unit} {n}")
        reading = read(None)
        self.head: list[Row] = []
        size = 0
        for row in islice(reading.rows, HEAD_ROWS + 1):
            self.head.append(row)
            size += sum(len(v) for v in row[1].values())
            if size > HEAD_CHARS:
                break
        self.complete = len(self.head) <= HEAD_ROWS and size <= HEAD_CHARS  # head = every row
        self.head = self.head[:HEAD_ROWS]
        if hasattr(reading.rows, "close"):
            reading.rows.close()  # the file is closed; rows() opens it again
        self.notes = reading.notes  # for the upload's summary (a column left out, ...)
        self.clean = reading.clean  # no NUL or lone surrogate can be in a cell
        self.columns = reading.columns if reading.columns is not None else \
            list(dict.fromkeys(k for _, cells in self.head for k in cells))
        self._frame: pd.DataFrame | None = None
        self._frame_rows: list[int] = []

    @classmethod
    def open(cls, source: Source, fmt: str) -> Table:
        """The file behind ``source``, read by the reader of its format."""
        reader = named(fmt, "table").reader
        return cls(source.filename, fmt, lambda wanted: reader(source, fmt, wanted))

    @classmethod
    def from_records(cls, records: list[dict[str, str]], label: Callable[[int], str],
                     fmt: str = "txt") -> Table:
        """A table of rows already in memory (one question typed on a page)."""
        columns = list(dict.fromkeys(k for r in records for k in r))
        return cls("input", fmt, lambda wanted: Reading(columns, iter(enumerate(records, 1)),
                                                         clean=False), label)

    def rows(self, wanted: Collection[str] | None = None) -> Iterator[Row]:
        """Every row, read from the start of the file (``wanted``: the columns needed, a hint
        that lets a columnar format read only those)."""
        return self._read(wanted).rows

    def label(self, number: int) -> str:
        """How messages name the row with this number: 'line 3', 'item 2', 'row 7'."""
        return self._label(number)

    def preview(self, n: int = HEAD_ROWS) -> pd.DataFrame:
        """The first ``n`` rows (of those read on opening) as a DataFrame of strings."""
        return _frame([cells for _, cells in self.head[:n]], self.columns)

    @property
    def frame(self) -> pd.DataFrame:
        """Every row as a DataFrame of strings ("" where a row lacks a column); for small
        files (labelled pairs), not for corpora."""
        if self._frame is None:
            records = []
            for number, cells in self.rows():
                self._frame_rows.append(number)
                records.append(cells)
            self._frame = _frame(records, self.columns)
        return self._frame

    def row_label(self, i: int) -> str:
        """The label of the ``i``-th row of ``frame`` (from 0)."""
        _ = self.frame
        return self.label(self._frame_rows[i])


def _frame(records: list[dict[str, str]], columns: list[str]) -> pd.DataFrame:
    names = list(dict.fromkeys([*columns, *(k for r in records for k in r)]))
    rows = [[r.get(name, "") for name in names] for r in records]
    return pd.DataFrame(rows, columns=names, dtype=object)  # object: exactly the strings read
