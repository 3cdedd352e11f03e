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

import re
import unicodedata
from functools import lru_cache

WIDE = frozenset({"W", "F"})
# Every wide character lies in one of these blocks (a superset: a text with none of them has
# as many columns as characters, found by one regular-expression search, not per character).
_MAYBE_WIDE = re.compile(
    "[\u1100-\u115f\u231a-\u23ff\u25fd-\u27bf\u2b1b-\u2b55\u2e80-\ua4cf\ua960-\ua97f"
    "\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe6f\uff00-\uffe6\U00016fe0-\U0001b2ff"
    "\U0001f000-\U0001faff\U00020000-\U0003fffd]")


def _narrow(text: str) -> bool:
    """Whether ``text`` certainly holds no wide character (ASCII, or none of their blocks)."""
    return text.isascii() or _MAYBE_WIDE.search(text) is None


@lru_cache(maxsize=65536)
def char_columns(char: str) -> int:
    """Two for a wide (CJK, full-width) character, one for any other.

    Example:
        >>> char_columns("a"), char_columns("語"), char_columns("ア")
        (1, 2, 2)
    """
    wide = unicodedata.east_asian_width(char) in WIDE and _MAYBE_WIDE.match(char) is not None
    return 2 if wide else 1  # (this Python calls some unassigned code points wide: not here)


def columns(text: str) -> int:
    """The columns ``text`` takes: its characters, wide ones counted twice.

    Example:
        >>> columns("Excel 表")
        8
    """
    if _narrow(text):
        return len(text)
    return sum(map(char_columns, text))


def chars_within(text: str, width: int) -> int:
    """How many of ``text``'s first characters fit in ``width`` columns.

    Example:
        >>> chars_within("abcdef", 4), chars_within("日本語", 5), chars_within("ab", 9)
        (4, 2, 2)
    """
    if _narrow(text[:width]):
        return min(len(text), width)
    used = 0
    for i, char in enumerate(text):
        used += char_columns(char)
        if used > width:
            return i
    return len(text)


def chars_for(text: str, width: int, sample: int = 2_000) -> int:
    """About how many characters of ``text`` make ``width`` columns: ``width`` for Latin
    text, half of it for Japanese (measured on its first ``sample`` characters: a long page
    is not read whole for a snippet).

    Example:
        >>> chars_for("word " * 100, 300), chars_for("日本語の文章です。" * 100, 300)
        (300, 150)
    """
    head = text[:sample]
    if not head or _narrow(head):
        return width
    return max(1, round(width * len(head) / columns(head)))
