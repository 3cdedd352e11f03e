"""TXT: one document per line, in the column ``text``.

Lines end at "\\n" only (a "\\r" before it is dropped): a form feed or a Unicode
line separator (U+2028) inside a line is part of that document, so line numbers
in messages are the ones an editor shows. A blank line is an empty document
(skipped and counted).

Example:
    >>> from searchapp.intake.source import Source
    >>> list(read_txt(Source("one\\u2028still one\\r\\n\\ntwo".encode(), "a.txt", 100), "txt").rows)
    [(1, {'text': 'one\\u2028still one'}), (2, {'text': ''}), (3, {'text': 'two'})]
"""

from __future__ import annotations

from collections.abc import Iterator

from searchapp.errors import IngestError
from searchapp.intake.formats.base import Reading, Row
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.source import Source


def read_txt(source: Source, _fmt: str, wanted=None) -> Reading:
    """The lines of a text file as rows of one column, ``text``."""
    return Reading(["text"], _rows(source))


def _rows(source: Source) -> Iterator[Row]:
    blank = True
    for number, line in source.lines():
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        blank = blank and not line.strip()
        yield number, {"text": line}
    if blank:
        raise IngestError(f"{source.filename} is empty: there is nothing to upload.")


# This module's format (``registry``): what names it and what reads it.
register(Format("txt", "table", ("txt", "text"), "plain text, a document per line",
                "a text file", read_txt, unit="line"))
