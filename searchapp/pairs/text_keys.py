"""Exact duplicates: the normalised text two documents are compared on, as a 64-bit key.

Keys are hashes so that a million documents take 8 MB, not a dict of strings;
two different texts share a key with probability about n²/2⁶⁵ (10⁻⁸ at a
million documents).

Example:
    >>> normalise("  How do I   reset my password?? ")
    'how do i reset my password'
    >>> text_key("How do I reset my password?") == text_key("how do i reset my password")
    True
    >>> text_key("...")
    0
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The text duplicates are compared on: NFKC, casefolded, whitespace collapsed,
    punctuation stripped at both ends (inner punctuation is kept).

    Example:
        >>> normalise("Can't log in") == normalise("Cant log in")
        False
    """
    text = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    start, end = 0, len(text)
    while start < end and (unicodedata.category(text[start])[0] == "P" or text[start] == " "):
        start += 1
    while end > start and (unicodedata.category(text[end - 1])[0] == "P" or text[end - 1] == " "):
        end -= 1
    return text[start:end]


def text_key(text: str) -> int:
    """A signed 64-bit key of the normalised text; 0 for a text with nothing left."""
    norm = normalise(text)
    if not norm:
        return 0
    key = int.from_bytes(hashlib.blake2b(norm.encode("utf-8"), digest_size=8).digest(),
                         "little", signed=True)
    return key or 1
