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

FSI, PDI = "\u2068", "\u2069"


def isolate(text: str) -> str:
    """``text`` between a first-strong isolate and its end: laid out in its own direction.

    Example:
        >>> [ord(c) for c in isolate("ab")]
        [8296, 97, 98, 8297]
    """
    return f"{FSI}{text}{PDI}"
