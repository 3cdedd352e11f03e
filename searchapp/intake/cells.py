"""Cells: every value of an upload as the text the file wrote, and the one check of its size.

A cell is a string, whatever the format: a CSV field as it stands, a JSON number
as its digits (``1`` stays ``"1"``, ``1.50`` stays ``"1.50"``, an id
``12345678901234567890`` keeps every digit), ``true``/``false`` as written, a
JSON ``null`` or a Parquet null as ``""``, and a nested value (a JSON object or
array, a Parquet list, struct or map) as JSON text. Nothing goes through a
float, so no value changes on the way in.

Sizes are checked here and only here (``check_cell``): a text of at most
``MAX_TEXT_CHARS``, an id of at most ``MAX_ID_CHARS`` (the database column's
width), other cells of at most ``MAX_META_CHARS``, column names of at most
``MAX_NAME_CHARS``; and no cell may hold a NUL or an unpaired surrogate (a
JSON ``"\\ud800"``), which a database cannot store.

Example:
    >>> cell_text(number("1.50")), cell_text(None), cell_text([1, {"a": True}])
    ('1.50', '', '[1, {"a": true}]')
    >>> check_cell("x" * 600, "id", "id", "line 3")
    Traceback (most recent call last):
    ...
    searchapp.errors.IngestError: line 3: the id (column 'id') has 600 characters; ids may ...
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import uuid

from searchapp.errors import IngestError

MAX_TEXT_CHARS = 100_000  # a document's text
MAX_ID_CHARS = 500  # documents.external_id is VARCHAR(500)
MAX_META_CHARS = 10_000  # any other cell: metadata is for filters and display
MAX_NAME_CHARS = 1_000  # a column name
MAX_DEPTH = 100  # levels of nesting in one JSON value
_UNSTORABLE = re.compile("[\0\ud800-\udfff]")  # NUL; surrogates (only JSON escapes make them)
LIMITS = {"text": MAX_TEXT_CHARS, "id": MAX_ID_CHARS, "metadata": MAX_META_CHARS}
ADVICE = {"text": "split documents longer than that",
          "id": "use shorter ids, or no id column (ids are then made from the text)",
          "metadata": "keep long texts in the text column, or leave that column out"}


class number(str):
    """A JSON number (or NaN / Infinity) as the digits the file wrote: a str that JSON
    output writes unquoted."""

    __slots__ = ()


def cell_text(value) -> str:
    """A parsed value (JSON, or Parquet's Python values) as the cell's text.

    Example:
        >>> cell_text("007"), cell_text(False), cell_text({"k": [number("2.0")]})
        ('007', 'false', '{"k": [2.0]}')
    """
    if isinstance(value, str):
        return str(value)
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple):
        return json_text(value)
    return _scalar(value)


def json_text(value, depth: int = 0) -> str:
    """A nested value as JSON (``", "`` and ``": "`` as separators, non-ASCII kept), with its
    numbers as the file wrote them; deeper than ``MAX_DEPTH`` is an error.

    Example:
        >>> json_text({"prix": [number("1.50"), "é", None]})
        '{"prix": [1.50, "é", null]}'
    """
    if depth > MAX_DEPTH:
        raise NestingError()
    if isinstance(value, number):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: "
                               f"{json_text(v, depth + 1)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(json_text(v, depth + 1) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal):
        return _scalar(value)
    return json.dumps(_scalar(value), ensure_ascii=False)  # dates, times, uuids: as strings


def _scalar(value) -> str:
    """A non-string scalar as text: numbers exactly, dates in ISO form, bytes as UTF-8."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int | decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8")  # a UnicodeDecodeError: the caller's binary column
    if isinstance(value, uuid.UUID | dt.timedelta):
        return str(value)
    return str(value)


class NestingError(IngestError):
    """A JSON value nested deeper than MAX_DEPTH (the caller names the row)."""

    def __init__(self):
        super().__init__(f"a value is nested more than {MAX_DEPTH} levels deep")


def check_cell(value: str, role: str, column: str, where: str) -> None:
    """Refuse a cell too long for its role ("text", "id", "metadata") or holding a character
    no database stores; ``where`` names the row ("line 3")."""
    limit = LIMITS[role]
    if len(value) > limit:
        what = f"column {column!r}" if role == "metadata" else f"the {role} (column {column!r})"
        unit = {"text": "texts", "id": "ids", "metadata": "metadata values"}[role]
        raise IngestError(f"{where}: {what} has {len(value):,} characters; {unit} may have at "
                          f"most {limit:,} ({ADVICE[role]}).")
    bad = _UNSTORABLE.search(value)
    if bad:
        char = bad.group()
        what = "a NUL character (\\0)" if char == "\0" else \
            f"an unpaired surrogate (\\u{ord(char):04x}), which is not a character"
        raise IngestError(f"{where}, column {column!r}, contains {what}. Remove it and upload "
                          "again.")


def check_name(name: str, where: str) -> None:
    """Refuse a column name that is too long or holds a character no database stores.

    Example:
        >>> check_name("k" * 1001, "line 1")
        Traceback (most recent call last):
        ...
        searchapp.errors.IngestError: line 1: a column name has 1,001 characters; names may ...
    """
    if not name.strip():
        raise IngestError(f"{where}: a column name (an object key) is empty; name it. (A "
                          "file's header names an empty column 'column N' by its place.)")
    if len(name) > MAX_NAME_CHARS:
        raise IngestError(f"{where}: a column name has {len(name):,} characters; names may "
                          f"have at most {MAX_NAME_CHARS:,}.")
    if _UNSTORABLE.search(name):
        raise IngestError(f"{where}: the column name {name!r} contains a NUL character or an "
                          "unpaired surrogate. Rename the column and upload again.")
