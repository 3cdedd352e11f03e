"""Where sentences start inside one block of prose: full stops that end a sentence, not the
dots of abbreviations, numbers, file names, URLs or ellipses in the middle of one.

A block is prose already freed of the text's structure (``sentences`` cuts headings, list
items, table rows and code lines apart, and joins lines wrapped inside a sentence); here a
sentence ends at ``.``, ``!``, ``?`` or ``…`` (closing quotes and brackets after it belong to
it) followed by white space and then by something that can start a sentence: a capital, a
digit or an opening bracket or quote. Never inside a word (``2.39.5``, ``gitfaq.txt``,
``https://example.org/a.html``: no space after the dot), never before a lower-case word
(``e.g. the file``, ``what is Debian... what is Linux``), never after a known abbreviation
that does not end sentences (``Dr.``, ``vs.``, ``No. 5``, ``U.S.``, ``Fig. 3``) or a single
capital (``A. U. Thor``), nor inside a caption number (``Table 73.2. Overall Page Layout``).
The full-width ``。！？`` end a sentence without a space after them.

Measured against pysbd, syntok, BlingFire and the passages' old regex in
``benchmarks/sentence_split.py`` (docs/search.md): as accurate on the manuals' prose and
several times faster.

Example:
    >>> text = "Use e.g. gitfaq.txt, v2.39.5. Dr. Who said so. It works!"
    >>> [text[i:i + 9] for i in sentence_starts(text)]
    ['Dr. Who s', 'It works!']
"""

from __future__ import annotations

import re

# Words followed by "." that do not end a sentence even before a capital (lower-cased).
NOT_ENDS = frozenset((
    "dr", "mr", "mrs", "ms", "prof", "st", "sr", "jr", "vs", "cf", "fig", "figs", "eq", "eqs",
    "sec", "ch", "vol", "pp", "ed", "eds", "approx", "ca", "e.g", "i.e", "u.s", "u.k", "a.k.a",
    "resp", "incl", "esp", "viz", "al", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec", "mt", "ft"))
NUMBER_BEFORE = frozenset({"no", "nr", "nos", "p", "vol", "ch", "sec", "art", "op", "v", "ver"})
CAPTIONS = ("table", "figure", "example", "fig", "listing")

_END = re.compile(r"(?:[.!?…]+|。|！|？)[\"'”’)\]»]*")
_WORD_BEFORE = re.compile(r"([\w.]+)\.$")
_OPENING = "\"'“‘([«¿¡"


def sentence_starts(block: str) -> list[int]:
    """Offsets in ``block`` where a sentence other than the first starts, ascending.

    Example:
        >>> sentence_starts("It broke etc. Moreover, it ran at 3.5 GB vs. 2 GB. Fine.")
        [14, 51]
    """
    starts = []
    n = len(block)
    for m in _END.finditer(block):
        end = m.end()
        start = _next_start(block, end, n)
        if start is None or start >= n:
            continue
        if _is_end(block, m, start):
            starts.append(start)
    return starts


def _next_start(block: str, end: int, n: int) -> int | None:
    """The first character after the white space that follows ``end`` (None: no space)."""
    i = end
    while i < n and block[i].isspace():
        i += 1
    if i == end and not _wide(block[end - 1]):
        return None
    return i


def _wide(char: str) -> bool:
    return char in "。！？"


def _is_end(block: str, m: re.Match, start: int) -> bool:
    """Whether the stop ``m``, with the next sentence at ``start``, ends a sentence."""
    if _wide(m.group()[0]):
        return True
    nxt = block[start]
    if nxt in _OPENING and start + 1 < len(block):
        nxt = block[start + 1]
    if not (nxt.isupper() or nxt.isdigit() or (nxt.isalpha() and not nxt.islower())):
        return False  # a lower-case word, a comma, a symbol: the sentence goes on
    if not m.group().startswith(".") or m.group().startswith(".."):
        return True  # ! ? … and ellipses before a capital
    return not _abbreviation(block, m.start(), nxt)


def _abbreviation(block: str, dot: int, nxt: str) -> bool:
    """Whether the word ending at the ``.`` at ``dot`` is one that does not end sentences."""
    word = _WORD_BEFORE.search(block, max(0, dot - 24), dot + 1)
    if not word:
        return False
    token = word.group(1)
    lower = token.lower()
    if lower in NOT_ENDS or lower.rstrip(".") in NOT_ENDS:
        return True
    if len(token) == 1 and token.isupper():
        return True  # an initial: A. U. Thor
    if lower in NUMBER_BEFORE and nxt.isdigit():
        return True  # No. 5, p. 12
    if token[0].isdigit() and "." in token:
        before = block[max(0, word.start() - 12):word.start()].rstrip().lower()
        return before.endswith(CAPTIONS)  # Table 73.2. Overall Page Layout
    return False
