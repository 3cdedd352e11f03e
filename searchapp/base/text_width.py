"""How wide a text is on screen, for cutting snippets and titles the same length in any script.

A Chinese, Japanese or Korean character (East Asian Width "W" or "F") takes the room of
two Latin letters and carries about as much as a short English word, so a limit counted in
characters that suits English (300 for a snippet) shows a Japanese page almost whole. Limits
are counted in columns instead: a wide character is two, any other one.

Example:
    >>> columns("abc"), columns("日本語")
    (3, 6)
    >>> chars_within("日本語のテキスト", 6)
    3
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

WIDE = frozenset({"W", "F"})


@lru_cache(maxsize=65536)
def char_columns(char: str) -> int:
    """Two for a wide (CJK, full-width) character, one for any other.

    Example:
        >>> char_columns("a"), char_columns("語"), char_columns("ア")
        (1, 2, 2)
    """
    return 2 if unicodedata.east_asian_width(char) in WIDE else 1


def columns(text: str) -> int:
    """The columns ``text`` takes: its characters, wide ones counted twice.

    Example:
        >>> columns("Excel 表")
        8
    """
    if text.isascii():
        return len(text)
    return sum(map(char_columns, text))


def chars_within(text: str, width: int) -> int:
    """How many of ``text``'s first characters fit in ``width`` columns.

    Example:
        >>> chars_within("abcdef", 4), chars_within("日本語", 5), chars_within("ab", 9)
        (4, 2, 2)
    """
    if text[:width].isascii():
        return min(len(text), width)
    used = 0
    for i, char in enumerate(text):
        used += char_columns(char)
        if used > width:
            return i
    return len(text)


def chars_for(text: str, width: int, sample: int = 20_000) -> int:
    """About how many characters of ``text`` make ``width`` columns: ``width`` for Latin
    text, half of it for Japanese (measured on its first ``sample`` characters: a long page
    is not read whole for a snippet).

    Example:
        >>> chars_for("word " * 100, 300), chars_for("日本語の文章です。" * 100, 300)
        (300, 150)
    """
    head = text[:sample]
    if not head or head.isascii():
        return width
    return max(1, round(width * len(head) / columns(head)))
