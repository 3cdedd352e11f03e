"""JSON: an array of objects (or of strings, one text each), read one item at a time.

The array may also be the one list inside a top-level object
(``{"data": [...]}``). The file is read in chunks and each item is decoded on
its own (``json.JSONDecoder.raw_decode`` at the item's start, reading more text
while the item is incomplete), so memory holds one chunk and one item, never
the document: a minified 200 MB array costs what its largest item costs. An
item may be at most ``MAX_ITEM_CHARS`` long. Syntax errors name the line;
repeated keys, deep nesting, an array mixing objects and strings, a second
list in the top-level object or text after the document are errors too.

Example:
    >>> from searchapp.intake.source import Source
    >>> raw = b'{"count": 2, "rows": [{"id": 1, "text": "a"}, {"id": 2, "text": "b"}]}'
    >>> list(read_json_array(Source(raw, "a.json", 1000), "json").rows)
    [(1, {'id': '1', 'text': 'a'}), (2, {'id': '2', 'text': 'b'})]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from searchapp.errors import IngestError
from searchapp.intake.cells import NestingError
from searchapp.intake.formats.base import Reading, Row
from searchapp.intake.formats.json_values import DECODER, problem, record
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.source import MAX_LINE_BYTES, Source

MAX_ITEM_CHARS = MAX_LINE_BYTES  # one item of the array (or member of the top object)
_SPACE = re.compile(r"[ \t\n\r]*")
_SURE = 16  # a syntax error this far before the text read so far cannot be a cut-off token


def read_json_array(source: Source, _fmt: str, wanted=None) -> Reading:
    """The items of a JSON array (or of the one array in a top-level object) as rows."""
    return Reading(None, _rows(_Text(source.chunks(), source.filename)))


class _Text:
    """The document's text, read a chunk at a time; ``buf[pos:]`` is what is still unread."""

    def __init__(self, chunks: Iterator[str], filename: str):
        self.chunks, self.filename = chunks, filename
        self.buf, self.pos, self.eof, self.line0 = "", 0, False, 1  # line0: line of buf[0]

    def more(self) -> bool:
        """Drop what was read and append the next chunk; False at the end of the file."""
        if self.pos:
            self.line0 += self.buf.count("\n", 0, self.pos)
            self.buf, self.pos = self.buf[self.pos:], 0
        chunk = next(self.chunks, None)
        if chunk is None:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def peek(self) -> str | None:
        """The next character that is not JSON whitespace (not consumed); None at the end."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return None

    def line(self, pos: int | None = None) -> int:
        return self.line0 + self.buf.count("\n", 0, self.pos if pos is None else pos)

    def value(self, what: str):
        """Decode the JSON value at ``pos`` (reading on while it may be incomplete)."""
        if self.peek() is None:
            raise self.expected("a value")
        while True:
            error = None
            try:
                value, end = DECODER.raw_decode(self.buf, self.pos)
                if end < len(self.buf) or self.eof:  # a number at the very end may go on
                    self.pos = end
                    return value
            except json.JSONDecodeError as exc:
                error = exc
                if self.eof or (exc.pos < len(self.buf) - _SURE and
                                not exc.msg.startswith("Unterminated string")):
                    raise self.syntax(exc) from None
            except (ValueError, RecursionError, NestingError) as exc:
                said = problem(exc)
                if said is None:
                    raise
                raise IngestError(f"{self.filename}: {what} (line {self.line()}) {said}.") \
                    from None
            if len(self.buf) - self.pos > MAX_ITEM_CHARS:
                if error is not None:
                    raise self.syntax(error) from None
                raise IngestError(f"{self.filename}: {what} (line {self.line()}) is longer "
                                  f"than {MAX_ITEM_CHARS:,} characters.")
            wanted = 2 * (len(self.buf) - self.pos)  # read on until twice as much is there
            while len(self.buf) - self.pos < wanted and self.more():
                pass

    def syntax(self, exc: json.JSONDecodeError) -> IngestError:
        return IngestError(f"{self.filename}: not valid JSON at line {self.line(exc.pos)} "
                           f"({exc.msg}).")

    def expected(self, what: str) -> IngestError:
        at = "the end of the file" if self.pos >= len(self.buf) else f"line {self.line()}"
        return IngestError(f"{self.filename}: not valid JSON at {at} (expected {what}).")


def _rows(text: _Text) -> Iterator[Row]:
    first = text.peek()
    if first is None:
        raise IngestError(f"{text.filename} is empty: there is nothing to upload.")
    if first == "[":
        yield from _items(text)
    elif first == "{":
        yield from _members(text)
    else:
        raise IngestError(f"{text.filename}: expected a JSON array of objects (or strings).")
    if text.peek() is not None:
        raise IngestError(f"{text.filename}: line {text.line()} has more JSON after the "
                          "document's end; a .json file holds one array (JSON Lines: .jsonl).")


def _items(text: _Text) -> Iterator[Row]:
    """The array at ``pos``: each object (or string) as a row, numbered from 1."""
    text.pos += 1  # "["
    kind, n = None, 0
    if text.peek() == "]":
        text.pos += 1
        return
    while True:
        n += 1
        item = text.value(f"item {n}")
        this = dict if isinstance(item, dict) else str if type(item) is str else None
        kind = kind or this or dict
        if this is not kind:
            raise IngestError(f"{text.filename}: item {n} of the array is not "
                              + ("an object." if kind is dict else "a string, as item 1 is."))
        try:
            cells = record(item if kind is dict else {"text": item})
        except (ValueError, NestingError) as exc:
            raise IngestError(f"{text.filename}: item {n} {problem(exc)}.") from None
        yield n, cells
        after = text.peek()
        if after == "]":
            text.pos += 1
            return
        if after != ",":
            raise text.expected("',' or ']' after an item of the array")
        text.pos += 1


def _members(text: _Text) -> Iterator[Row]:
    """A top-level object: the rows of the one array among its values (others are skipped)."""
    text.pos += 1  # "{"
    keys: set[str] = set()
    array = None
    if text.peek() == "}":
        text.pos += 1
    else:
        while True:
            if text.peek() != '"':
                raise text.expected("a key in double quotes")
            key = text.value("a key")
            if key in keys:
                raise IngestError(f"{text.filename}: the top-level object names the key "
                                  f"{key!r} twice; keep one.")
            keys.add(key)
            if text.peek() != ":":
                raise text.expected("':' after a key")
            text.pos += 1
            if text.peek() == "[":
                if array is not None:
                    raise IngestError(
                        f"{text.filename}: the top-level object holds more than one array "
                        f"({array!r} and {key!r}); upload one array of objects.")
                array = key
                yield from _items(text)
            else:
                text.value(f"the value of {key!r}")
            after = text.peek()
            if after == "}":
                text.pos += 1
                break
            if after != ",":
                raise text.expected("',' or '}' after a value")
            text.pos += 1
    if array is None:
        raise IngestError(f"{text.filename}: expected a JSON array of objects (or strings).")


# This module's format (``registry``): what names it and what reads it.
register(Format("json", "table", ("json",), "JSON", "a JSON file", read_json_array, unit="item"))
