"""JSON values as the file wrote them: numbers keep their digits, repeated keys are refused.

``DECODER`` is the standard library's decoder with three hooks: numbers (and
the NaN / Infinity it accepts) become ``cells.number`` (their digits, unrounded:
an id ``12345678901234567890`` or a price ``1.50`` stays as written), and an
object that names a key twice raises ``RepeatedKey`` instead of keeping the
last value silently. ``record`` turns a decoded object into a row's cells.

Example:
    >>> record(DECODER.decode('{"id": 1, "price": 1.50, "tags": ["a"], "x": null}'))
    {'id': '1', 'price': '1.50', 'tags': '["a"]', 'x': ''}
    >>> DECODER.decode('{"text": "a", "text": "b"}')
    Traceback (most recent call last):
    ...
    searchapp.intake.formats.json_values.RepeatedKey: text
"""

from __future__ import annotations

import json
import re

from searchapp.intake.cells import MAX_DEPTH, NestingError, cell_text, number

_UNSTORABLE = re.compile("[\0\ud800-\udfff]")  # "\\u0000", or half of a surrogate pair


class RepeatedKey(ValueError):
    """An object names a key twice (the key is the argument)."""


class Unstorable(ValueError):
    """A string holds NUL or half of a surrogate pair (valid JSON escapes, but no database
    stores them); the arguments: the key it is in or under, the character."""


def _object(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return obj


DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=number, parse_float=number,
                           parse_constant=number)


def record(obj: dict) -> dict[str, str]:
    """A JSON object as cells: each value as text (``cells.cell_text``); a NUL or a lone
    surrogate (``"\\u0000"``, ``"\\ud800"``: valid JSON, but no database stores them)
    is refused."""
    cells = {key: cell_text(value) for key, value in obj.items()}
    for key, value in cells.items():
        bad = _UNSTORABLE.search(key) or _UNSTORABLE.search(value)
        if bad:
            raise Unstorable(key, bad.group())
    return cells


def problem(exc: Exception) -> str | None:
    """What is wrong, in words, for the errors decoding a value can raise (else None)."""
    if isinstance(exc, RepeatedKey):
        return (f"names the key {exc.args[0]!r} twice in one object (which value is meant?); "
                "keep one")
    if isinstance(exc, Unstorable):
        key, char = exc.args
        what = "a NUL character (\\u0000)" if char == "\0" else \
            f"an unpaired surrogate (\\u{ord(char):04x}), which is not a character,"
        return f"has {what} in column {key!r}; remove it and upload again"
    if isinstance(exc, NestingError | RecursionError):
        return f"nests values more than {MAX_DEPTH} levels deep"
    return None
