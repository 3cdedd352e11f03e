"""Text of any direction inside a line the app writes: Unicode's first-strong isolates.

Where the app puts a document's text into a line of its own words and no element of its
own can carry ``dir="auto"`` (a plotly hover, a name written on the map), the text goes
between FIRST STRONG ISOLATE (U+2068) and POP DIRECTIONAL ISOLATE (U+2069): inside, the
text runs in the direction of its first letter (Arabic right to left, its full stop at its
left end); outside, the app's words keep their places, and a number or a bracket never
jumps from one side of the text to the other. The marks are invisible.

The CLI does not use them: its output guard (``cli/output``) escapes every bidi control so
that no file can reorder a terminal line, and a terminal lays out each line by itself.

Example:
    >>> isolate("مرحبا!") == "\\u2068مرحبا!\\u2069"
    True
"""

from __future__ import annotations

import re

FSI, PDI = "\u2068", "\u2069"


def isolate(text: str) -> str:
    """``text`` between a first-strong isolate and its end: laid out in its own direction.

    Example:
        >>> [ord(c) for c in isolate("ab")]
        [8296, 97, 98, 8297]
    """
    return f"{FSI}{text}{PDI}"


# Letters of the right-to-left scripts (bidi classes R and AL): Hebrew, Arabic, Syriac, Thaana,
# N'Ko, Samaritan, Mandaic, their presentation forms, and the historic ones beyond the BMP.
RTL_LETTER = ("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff"
              "\U0001e800-\U0001efff]")
_RTL = re.compile(RTL_LETTER)


def has_rtl(text: str) -> bool:
    """Whether ``text`` holds a letter of a right-to-left script.

    Example:
        >>> has_rtl("שלום"), has_rtl("café 日本")
        (True, False)
    """
    return _RTL.search(text) is not None


def isolate_rtl(text: object) -> object:
    """``text`` isolated (``isolate``) where it holds right-to-left letters; anything else as
    it is. For a table cell or a list's option, drawn where no style reaches (a data grid is
    a canvas): a text of left-to-right scripts keeps every character, so what a person
    copies or searches in the grid is unchanged.

    Example:
        >>> isolate_rtl("abc"), isolate_rtl(3), isolate_rtl("مرحبا.") == FSI + "مرحبا." + PDI
        ('abc', 3, True)
    """
    return isolate(text) if isinstance(text, str) and has_rtl(text) else text
