"""JSON Lines: one JSON object per line.

Lines end at "\\n" only, so a U+2028 or U+2029 inside a string (valid JSON) is
part of its value. A line of JSON whitespace only is skipped. Each object's
values become cells as the file wrote them (``json_values``); the columns are
the keys the objects use.

Example:
    >>> from searchapp.intake.source import Source
    >>> raw = '{"id": 7, "text": "a\\u2028b"}\\n\\n{"id": 8, "text": "c"}\\n'.encode()
    >>> list(read_jsonl(Source(raw, "a.jsonl", 100), "jsonl").rows)
    [(1, {'id': '7', 'text': 'a\\u2028b'}), (3, {'id': '8', 'text': 'c'})]
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from searchapp.errors import IngestError
from searchapp.intake.cells import NestingError
from searchapp.intake.formats.base import Reading, Row
from searchapp.intake.formats.json_values import DECODER, problem, record
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.source import Source

JSON_SPACE = " \t\r\n"


def read_jsonl(source: Source, _fmt: str, wanted=None) -> Reading:
    """The objects of a JSON Lines file as rows; columns come from the objects' keys."""
    return Reading(None, _rows(source))


def _rows(source: Source) -> Iterator[Row]:
    name = source.filename
    for number, line in source.lines():
        if not line.strip(JSON_SPACE):
            continue
        try:
            obj = DECODER.decode(line)
            cells = record(obj) if isinstance(obj, dict) else None
        except json.JSONDecodeError as exc:
            raise IngestError(f"{name}: line {number} is not valid JSON ({exc.msg}, column "
                              f"{exc.colno}).") from None
        except (ValueError, RecursionError, NestingError) as exc:
            what = problem(exc)
            if what is None:
                raise
            raise IngestError(f"{name}: line {number} {what}.") from None
        if cells is None:
            raise IngestError(f"{name}: line {number} is not a JSON object.")
        yield number, cells


# This module's format (``registry``): what names it and what reads it.
register(Format("jsonl", "table", ("jsonl", "ndjson"), "JSON Lines", "a JSON Lines file",
                read_jsonl, unit="line"))
