"""What every reader returns, and the header checks the formats with a header share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from searchapp.errors import IngestError

Row = tuple[int, dict[str, str]]  # (line, item or row number; {column: cell text})


class Reading(NamedTuple):
    """A file being read: its columns (None where rows name their own, as JSON objects do),
    its rows as they are read, notes for the upload's summary, and whether the reader has
    already refused NUL and lone surrogates (text decoded as UTF-8 and checked line by line,
    JSON checked by value) so that only sizes are left to check."""

    columns: list[str] | None
    rows: Iterator[Row]
    notes: tuple[str, ...] = ()
    clean: bool = True


UNNAMED = "column"  # an empty column name becomes "column N"


def header_names(fields: list[str], filename: str, where: str, strip: bool = True) -> list[str]:
    """Column names of a header, stripped of surrounding spaces (``strip``); two alike are an
    error. An empty name (a spreadsheet's index column, ``,text``) is ``column N``, N its
    place from 1: the name the pages show, the metadata key stored, and what the API gives
    back and takes again (it refuses an empty key).

    Example:
        >>> header_names(["id", " text "], "a.csv", "line 1")
        ['id', 'text']
        >>> header_names(["", "text", " "], "a.csv", "line 1")
        ['column 1', 'text', 'column 3']
        >>> header_names(["text", " text"], "a.csv", "line 1")
        Traceback (most recent call last):
        ...
        searchapp.errors.IngestError: a.csv: line 1 names column 'text' twice (columns 1 and 2, ...
    """
    names = [f.strip() for f in fields] if strip else list(fields)
    names = [name if name.strip() else f"{UNNAMED} {i + 1}" for i, name in enumerate(names)]
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            trimmed = ", once spaces around names are removed" if fields[i] != name or \
                fields[first[name]] != name else ""
            raise IngestError(
                f"{filename}: {where} names column {name!r} twice (columns {first[name] + 1} "
                f"and {i + 1}{trimmed}). Rename one and upload again.")
        first[name] = i
    return names
