"""A document's text → the character spans of its sentences, for answers (issue 46).

The text is what the readers store (``intake/formats``): blocks on lines of their own, and
inside them prose wrapped over several lines, headings, list items, table rows
(" | "-joined cells), code and commands. A sentence splitter made for running prose would
glue a heading to the sentence under it, cut ``$ git reset --soft HEAD^`` at its dots, and
make one "sentence" of a whole table. So the lines are read first:

- a line of code is its own unit and never cut at its dots: a prompt line (``$ ``, ``# ``,
  ``postgres=# ``, ``>>> ``), a line inside a fence (```` ``` ````, ``----``), a line whose
  columns are aligned by a tab or three spaces (output, a table row in a text file), a line
  ending with a backslash, which goes on with the next;
- a table row (two " | " or more, or one on neighbouring lines) is its own unit;
- a list item ("- x", "* x", "• x", "1. x", "a) x", "(iv) x", "2.3. Heading") starts a unit;
- a line of only punctuation (an underline, "+", "§") is its own unit;
- a short line that does not end a sentence, standing after one that did and before one that
  does not go on in lower case, is a heading or a term ("Examples", "channel_binding");
- any other line continues the prose above it: a sentence wrapped over lines is one.

Prose is then cut into sentences by ``sentence_ends.sentence_starts`` (the engine chosen by
``benchmarks/sentence_split.py``; another can be passed for measuring), and a unit longer than
``MAX_SENTENCE_CHARS`` is cut at a clause boundary or a space, so no "sentence" is a page.
Spans are stripped of white space, in order, do not overlap and hold every non-space
character of the text exactly once.

Example:
    >>> text = "Examples\\nTo undo it, see e.g.\\ngitfaq.txt. Then run:\\n$ git reset --soft HEAD^"
    >>> [text[a:b] for a, b in sentence_spans(text)]
    ['Examples', 'To undo it, see e.g.\\ngitfaq.txt.', 'Then run:', '$ git reset --soft HEAD^']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import pairwise

from searchapp.embedding import sentence_ends

MAX_SENTENCE_CHARS = 400  # longer units are cut (an answer shows a sentence, not a page)
FENCE_LINES = 400  # a code fence closes within this many lines, else it is a rule
HEAD_WORDS, HEAD_CHARS = 8, 60  # at most, for a line to be read as a heading or a term
TERM_WORDS = 3  # a heading of more words is in title case

Cutter = Callable[[str], Iterable[int]]  # prose block -> offsets where sentences start

_PROMPT = re.compile(r"(?:[$%#]|>>>|[\w.-]+(?:=[#>]|>)|[\w.-]+@[\w.-]+(?::\S*)?[$#])[ \t]+\S")
_ALIGNED = re.compile(r"\S(?:\t|[ \u00a0]{3,})[ \t\u00a0]*\S")
_FENCE = re.compile(r"(`{3,}|~{3,})[\w+.-]*|(-{4,}|={4,}|\.{4,}|\*{4,}|_{4,})")
_ITEM = re.compile(r"(?:[-*•+·▪◦‣–—]|\d{1,3}[.)]|[a-zA-Z][.)]|\(\w{1,4}\)|\d+(?:\.\d+)+\.?)"
                   r"[ \t\u00a0]+\S")
_SQL = re.compile(r"(?:SELECT|FROM|WHERE|CREATE|ALTER|DROP|INSERT|UPDATE|DELETE|WITH|GRANT|"
                  r"REVOKE|BEGIN|COMMIT|ROLLBACK|SET|SHOW|VALUES|ORDER|GROUP|HAVING|LIMIT|JOIN|"
                  r"LEFT|UNION|RETURNING|EXPLAIN|COPY|VACUUM|ANALYZE|TRUNCATE|AND|OR|ON)\b")
_STOPS = re.compile(r"[.!?:][\"'”’)\]]*$")
_ALNUM = re.compile(r"[^\W_]")
_ENDS = re.compile(r"[.!?…。！？:;,][\"'”’)\]»]*$")
_GOES_ON = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or",
    "nor", "but", "as", "is", "are", "was", "were", "be", "that", "than", "if", "see", "named",
    "called", "using", "via", "per", "into", "onto"))
# line breaks as spaces (same length): engines made for running prose see a wrapped sentence
_BREAKS = str.maketrans(dict.fromkeys("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))
_CLAUSE = re.compile(r"[;:,—–][\"'”’)\]]*\s|\s[-–—]\s")

# line kinds
PROSE, ITEM, CODE, ROW, RULE, HEAD, BLANK = range(7)
_OWN = (CODE, ROW, RULE, HEAD)  # a unit by itself


def sentence_spans(text: str, cut: Cutter | None = None) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, in order (``cut``: another prose engine).

    Example:
        >>> text = "Fix No. 5 in v2.39.5. It works.\\n\\n- a list item\\n- another"
        >>> [text[a:b] for a, b in sentence_spans(text)]
        ['Fix No. 5 in v2.39.5.', 'It works.', '- a list item', '- another']
    """
    cut = cut or sentence_ends.sentence_starts
    bounds = set()
    for start, end, skip in blocks(text):
        bounds.add(start)
        if skip >= 0:  # prose: cut into sentences after a list item's marker
            flat = text[start + skip:end].translate(_BREAKS)
            bounds.update(start + skip + i for i in cut(flat) if 0 < i < end - start - skip)
    spans = []
    for a, b in pairwise([*sorted(bounds), len(text)]):
        spans.extend(capped(text, a, b))
    return spans


def sentences_within(spans: list[tuple[int, int]], start: int, end: int
                     ) -> list[tuple[int, int]]:
    """The spans that overlap the characters ``start:end`` (a passage's), clipped to them.

    Example:
        >>> sentences_within([(0, 5), (6, 12), (13, 20)], 4, 13)
        [(4, 5), (6, 12)]
    """
    return [(max(a, start), min(b, end)) for a, b in spans if a < end and b > start]


def blocks(text: str) -> list[tuple[int, int, int]]:
    """(start, end, skip) of the text's units before prose is cut into sentences: ``skip`` is
    -1 for a unit that is not prose, else the length of the list item's marker (0: none)."""
    lines = _lines(text)
    kinds = _kinds(lines)
    out: list[tuple[int, int, int]] = []
    joinable = False  # whether the last block takes a following prose line
    goes_on = False  # a code line ending with a backslash
    for (a, b, s, indent), kind in zip(lines, kinds, strict=True):
        if kind == BLANK:
            joinable = goes_on = False
            continue
        if goes_on or (kind == PROSE and joinable):
            out[-1] = (out[-1][0], b, out[-1][2])
        else:
            out.append((a, b, _skip(s, indent, kind)))
            joinable = kind in (PROSE, ITEM)
        goes_on = kind in (CODE, ROW) and s.endswith("\\")
    return out


def _skip(s: str, indent: int, kind: int) -> int:
    """What a unit starting with line ``s`` keeps from the prose engine (see ``blocks``)."""
    if kind == PROSE:
        return 0
    if kind == ITEM:
        return indent + _ITEM.match(s).end() - 1
    return -1


def _lines(text: str) -> list[tuple[int, int, str, int]]:
    """(start, end, stripped text, indent) of each line, line breaks as ``str.splitlines``
    knows them (``_BREAKS``)."""
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        s = line.strip()
        out.append((pos, pos + len(line), s, len(line) - len(line.lstrip())))
        pos += len(line)
    return out


def _kinds(lines: list[tuple[int, int, str, int]]) -> list[int]:
    """Each line's kind (PROSE, ITEM, CODE, ...), reading fences and neighbours."""
    kinds: list[int] = []
    fence: str | None = None
    for i, (_a, _b, s, _n) in enumerate(lines):
        if fence is not None:
            kinds.append(RULE if s.startswith(fence) and not _ALNUM.search(s) else CODE)
            fence = None if kinds[-1] == RULE else fence
            continue
        opened = _fence(s, kinds[-1] if kinds else BLANK)
        if opened and _closed(lines, i + 1, opened):
            fence = opened
            kinds.append(RULE)
            continue
        kinds.append(_kind(s))
    _rows(lines, kinds)
    _statements(lines, kinds)
    _heads(lines, kinds)
    return kinds


def _fence(s: str, before: int) -> str | None:
    """The fence ``s`` opens (its characters), if it opens one: after a blank line or a rule
    ("+" in AsciiDoc); under a line of text the same dashes are a heading's underline."""
    m = _FENCE.fullmatch(s)
    if not m or before not in (BLANK, RULE):
        return None
    return (m.group(1) or m.group(2))[:3]


def _closed(lines: list[tuple[int, int, str, int]], i: int, fence: str) -> bool:
    """Whether a fence opened before line ``i`` is closed within ``FENCE_LINES`` lines (an
    underline or a rule that is no fence must not make the rest of a text code)."""
    for _a, _b, s, _n in lines[i:i + FENCE_LINES]:
        if s.startswith(fence) and not _ALNUM.search(s):
            return True
    return False


def _kind(s: str) -> int:
    if not s:
        return BLANK
    if not _ALNUM.search(s):
        return RULE
    if _PROMPT.match(s) or _ALIGNED.search(s) or s.endswith("\\"):
        return CODE
    if s.endswith("::"):
        return HEAD
    if _ITEM.match(s):
        return ITEM
    return PROSE


def _rows(lines: list[tuple[int, int, str, int]], kinds: list[int]) -> None:
    """Table rows: two " | " or more, or one on a line next to another such line."""
    bars = [line[2].count(" | ") for line in lines]
    for i, n in enumerate(bars):
        if kinds[i] not in (PROSE, ITEM) or not n:
            continue
        if n >= 2 or (i and bars[i - 1]) or (i + 1 < len(bars) and bars[i + 1]):
            kinds[i] = ROW


def _statements(lines: list[tuple[int, int, str, int]], kinds: list[int]) -> None:
    """SQL kept as code where a web page lost its indentation: a line starting with a
    keyword in capitals, not ending a sentence, that ends with ";" or follows code or a line
    ending with ":" ("Create a view:" / "CREATE VIEW v AS" / "SELECT *" / "FROM t;")."""
    before = BLANK, ""
    for i, (_a, _b, s, _n) in enumerate(lines):
        if kinds[i] in (PROSE, ITEM) and _SQL.match(s) and not _STOPS.search(s) and (
                s.endswith(";") or before[0] == CODE or before[1].endswith(":")):
            kinds[i] = CODE
        if kinds[i] != BLANK:
            before = kinds[i], s


def _heads(lines: list[tuple[int, int, str, int]], kinds: list[int]) -> None:
    """Short prose lines between the end of a sentence and a capital: headings and terms."""
    for i, kind in enumerate(kinds):
        if kind not in (PROSE, ITEM) or not _head_shaped(lines[i][2]):
            continue
        before = lines[i - 1][2] if i else ""
        after = lines[i + 1][2] if i + 1 < len(lines) else ""
        ended = not before or kinds[i - 1] in _OWN or bool(_ENDS.search(before))
        if ended and not (after[:1].islower() and kinds[i + 1] == PROSE):
            kinds[i] = HEAD


def _head_shaped(s: str) -> bool:
    """A heading or a term: short, not ending a sentence nor going on (", ", "the"), and of
    at most ``TERM_WORDS`` words or in title case ("Overall Page Layout")."""
    words = s.split()
    if len(s) > HEAD_CHARS or len(words) > HEAD_WORDS or _ENDS.search(s):
        return False
    if words[-1].lower() in _GOES_ON:
        return False
    return len(words) <= TERM_WORDS or all(not w[:1].islower() for w in words if len(w) > 3)


def capped(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """``text[a:b]`` stripped, cut into pieces of at most ``MAX_SENTENCE_CHARS`` at a clause
    boundary (``;``, ``:``, ``,``, a dash) in the piece's second half, else at a space, else
    anywhere.

    Example:
        >>> capped("  one, two  ", 0, 12)
        [(2, 10)]
    """
    out = []
    while True:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a >= b:
            return out
        if b - a <= MAX_SENTENCE_CHARS:
            out.append((a, b))
            return out
        cut = _cut_at(text, a, a + MAX_SENTENCE_CHARS)
        out.extend(capped(text, a, cut))
        a = cut


def _cut_at(text: str, a: int, limit: int) -> int:
    """Where to cut a unit starting at ``a`` at or before ``limit``."""
    half = a + MAX_SENTENCE_CHARS // 2
    last = None
    for m in _CLAUSE.finditer(text, half, limit):
        last = m.end() - 1 if m.group()[-1].isspace() else m.end()
    if last is not None:
        return last
    for i in range(limit - 1, a, -1):
        if text[i].isspace():
            return i
    return limit
