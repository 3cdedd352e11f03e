"""Snippets: the part of a hit that matched, with the query's words marked, as plain text.

A hit's snippet is its matched passage (the whole text for a short document),
cut to about ``WIDTH`` columns around the densest run of query words (a Chinese or Japanese
character takes two: ``base/text_width``, so a Japanese snippet holds about 150 characters,
an English one 300), at a space or, in text written without spaces, after a sentence's or
clause's punctuation (``。``, ``、``). Words
match case-insensitively and across simple English endings (``runs`` marks
``running``) and accents (``cafe`` marks ``café`` and the other way round: each accented
Latin letter stands for its base letter, one character for one, so spans stay the
text's), like the full-text index's stemming and folding; a word of an unspaced script
(Japanese, Chinese, Thai: ``base/words``) is marked wherever it stands inside a
sentence. The result is text plus the character spans of the marked words;
``marked()`` writes them between « and » (what the CLI prints). Nothing here is HTML:
a page shows it as text.

Example:
    >>> s = make_snippet("The XR-7 firmware fails with ERR-40417 after an update.",
    ...                  ["err", "40417"])
    >>> s.marked()
    'The XR-7 firmware fails with «ERR»-«40417» after an update.'
    >>> s.highlights, s.at, s.region
    ([(29, 32), (33, 38)], 29, (0, 55))
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from searchapp.base import stems
from searchapp.base.stems import STEMMERS
from searchapp.base.text_width import chars_for, chars_within
from searchapp.base.words import has_unspaced

WIDTH = 300
STEMMED_CHARS = 20_000  # of a text, read for words of a query word's stem in its language
OPEN, CLOSE = "«", "»"
_WORD = re.compile(r"\w+", re.UNICODE)
_WORD_CHAR = re.compile(r"\w", re.UNICODE)
_ENDINGS = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A crude English stem for matching marks: ``running`` → ``runn``, ``cats`` → ``cat``.

    Example:
        >>> stem("Updates"), stem("updated"), stem("update")
        ('updat', 'updat', 'updat')
    """
    word = word.lower()
    for ending in _ENDINGS:
        if len(word) > len(ending) + 2 and word.endswith(ending):
            return word[:-len(ending)]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


@dataclass(frozen=True)
class Snippet:
    """Plain text and the (start, end) spans of the query's words in it."""

    text: str
    highlights: list[tuple[int, int]]
    at: int = 0  # where in the document its first marked word (else its text) begins
    region: tuple[int, int] = (0, 0)  # the document's characters the snippet shows

    def marked(self, open_mark: str = OPEN, close_mark: str = CLOSE) -> str:
        """The text with each highlight between the marks."""
        out, last = [], 0
        for start, end in self.highlights:
            out += [self.text[last:start], open_mark, self.text[start:end], close_mark]
            last = end
        out.append(self.text[last:])
        return "".join(out)

    def as_dict(self) -> dict:
        return {"text": self.text, "highlights": [list(h) for h in self.highlights]}


def word_spans(text: str, words: Sequence[str], language: str | None = None
               ) -> list[tuple[int, int]]:
    """Spans of the words of ``text`` that match one of ``words`` (after stemming).

    ``language``: the text's language; where it has a Snowball stemmer (``base/stems``),
    a word with the stem of a query word in that language is marked too, as the index
    found it (``Datei`` for ``Dateien``; ``language_spans``).

    A long page is not stemmed word by word. A word stems to a wanted stem only if it
    is that stem plus one of a few endings, so each stem's words are listed once per
    query (``_stem_pattern``: the stem as a literal, the regular expression engine's
    fast prefix search, then one of its endings and the word's end), and only a
    match's start is checked in Python. Where lower-casing changes the text's length
    (a dotted capital I), every word is stemmed instead.

    Example:
        >>> word_spans("Updates were updated; an update.", ["update"])
        [(0, 7), (13, 20), (25, 31)]
        >>> word_spans("Die Datei und die Dateien", ["dateien"], "de")
        [(4, 9), (18, 25)]
    """
    if language in STEMMERS:
        return _merged(word_spans(text, words) + language_spans(text, words, language))
    runs = [w for w in words if w and has_unspaced(w)]
    if runs:  # found anywhere inside a longer run, merged with the spaced words' spans
        rest = word_spans(text, [w for w in words if w and not has_unspaced(w)])
        return _merged(rest + _run_spans(text, runs))
    wanted = frozenset(stem(fold_accents(w)) for w in words if w)
    if not wanted:
        return []
    if all(w.isascii() for w in wanted) and not any(c in text for c in _LOWERS_TO_ASCII):
        return _ascii_word_spans(text, wanted)
    low = fold_accents(text.lower())
    if len(low) != len(text):
        return [m.span() for m in _WORD.finditer(text)
                if stem(fold_accents(m.group())) in wanted]
    found: list[tuple[int, int]] = []
    for pattern in filter(None, map(_stem_pattern, wanted)):
        found += [m.span() for m in pattern.finditer(low) if _starts_word(low, m.start())]
    return sorted(found)  # a word has one stem: no span is found twice


def language_spans(text: str, words: Sequence[str], language: str,
                   limit: int = STEMMED_CHARS) -> list[tuple[int, int]]:
    """Spans of the words of ``text`` (its first ``limit`` characters: a passage is far
    shorter) whose Snowball stem in ``language`` is that of one of ``words``.

    Example:
        >>> language_spans("Los archivos y el archivo", ["archivo"], "es")
        [(4, 12), (18, 25)]
    """
    stemmer = stems.stemmer(language)
    wanted = set(stemmer.stemWords([w.lower() for w in words if w and not has_unspaced(w)]))
    if not wanted:
        return []
    found = list(_WORD.finditer(text[:limit]))
    got = stemmer.stemWords([m.group().lower() for m in found])
    return [m.span() for m, s in zip(found, got, strict=True) if s in wanted]


def _run_spans(text: str, runs: Sequence[str]) -> list[tuple[int, int]]:
    """Spans of each of ``runs`` (words of an unspaced script, lower-cased) wherever they
    stand in ``text``: such a word has no spaces around it inside a sentence.

    Example:
        >>> _run_spans("東京都に住む。東京", ["東京"])
        [(0, 2), (7, 9)]
    """
    low = text.lower()
    if len(low) != len(text):
        low = text
    found = []
    for run in runs:
        at = low.find(run)
        while at >= 0:
            found.append((at, at + len(run)))
            at = low.find(run, at + len(run))
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans sorted, overlapping ones joined (a mark never starts inside another).

    Example:
        >>> _merged([(4, 6), (0, 2), (1, 3)])
        [(0, 3), (4, 6)]
    """
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


# the only characters beyond ASCII whose lower case holds an ASCII letter (İ → i̇, K → k)
_LOWERS_TO_ASCII = ("\u0130", "\u212a")  # `in`: a regex class scans ~40x slower


def _accent_table() -> dict[int, str]:
    """Each Latin letter with a diacritic (U+00C0-U+024F) to its base letter (``é`` → ``e``),
    one character for one; letters that do not decompose (``ß``, ``ø``) stay."""
    table = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFD", chr(code))[0]
        if base != chr(code) and base.isascii() and base.isalpha():
            table[code] = base
    return table


ACCENTS = _accent_table()


def fold_accents(text: str) -> str:
    """``text`` with its accented Latin letters as their base letters, the same length.

    Example:
        >>> fold_accents("Café Ångström")
        'Cafe Angstrom'
    """
    return text if text.isascii() else text.translate(ACCENTS)


def _ascii_word_spans(text: str, wanted: frozenset[str]) -> list[tuple[int, int]]:
    """``word_spans`` for ASCII stems, searched in the text's bytes.

    Python lower-cases a text with one character beyond ASCII (a curly quote, a dash)
    about ten times slower than an ASCII one, and searches it slower too. So each such
    character becomes ``?`` (one byte for one character: the offsets stay the text's),
    the bytes are lower-cased and searched by ``_ascii_pattern``, which checks a
    match's neighbours itself; only a neighbour that was beyond ASCII is looked up in
    the text, where a letter (``é`` in ``résumé``) still continues a word. No
    character lower-cases to an ASCII letter but the two of ``_LOWERS_TO_ASCII``,
    which send the caller the slow way.
    """
    folded = fold_accents(text).encode("ascii", "replace").lower()
    found: list[tuple[int, int]] = []
    for pattern in filter(None, map(_ascii_pattern, wanted)):
        found += [m.span() for m in pattern.finditer(folded)]
    if b"?" in folded:  # a match beside a '?' is beside a character beyond ASCII, or a '?'
        end = len(text)
        found = [(a, e) for a, e in found
                 if not (a and folded[a - 1] == QUESTION and _is_word(text[a - 1]))
                 and not (e < end and folded[e] == QUESTION and _is_word(text[e]))]
    return sorted(found)


QUESTION = ord("?")


def _is_word(char: str) -> bool:
    """Whether ``char`` is a word character (``\\w``: a letter or digit, or ``_``)."""
    return char.isalnum() or char == "_"


@lru_cache(maxsize=1024)
def _ascii_pattern(word_stem: str) -> re.Pattern | None:
    """``_stem_pattern`` over lower-case ASCII bytes, with the start of the word checked
    too: after the literal (a look-behind first would lose the regular expression
    engine's fast search for it), no ASCII word character before it. Compiled on its
    own (a new query's stems cost one compilation each, about 85 µs)."""
    endings = _endings(word_stem)
    if endings is None:
        return None
    literal = re.escape(word_stem)
    return re.compile(f"{literal}(?<![a-z0-9_]{literal}){endings}(?![a-z0-9_])"
                      .encode("ascii"))


def _starts_word(low: str, at: int) -> bool:
    """Whether ``low[at]`` starts a word: no ``\\w`` character (a letter or digit of any
    script, or ``_``) before it."""
    if at == 0:
        return True
    before = low[at - 1]
    return not (before.isalnum() or before == "_")


_SUFFIXES = ("", "e", *_ENDINGS)  # all that ``stem`` takes off a word


@lru_cache(maxsize=1024)
def _stem_pattern(word_stem: str) -> re.Pattern | None:
    """The stem as a literal, then an ending that ``stem`` takes off again (``updat`` +
    ``es``, ``ed``, ``e``, ...; longest first) and the end of the word: the words whose
    stem this is, but for their start, which the caller checks. None for a stem that
    no word has (one that is not a ``\\w+`` word)."""
    endings = _endings(word_stem)
    return None if endings is None else re.compile(
        re.escape(word_stem) + endings + r"(?!\w)", re.UNICODE)


def _endings(word_stem: str) -> str | None:
    """The regular expression of the endings that ``stem`` takes off ``word_stem`` again,
    ``(?:es|ed|e|...|)``; None for a stem that no word has."""
    if not _WORD.fullmatch(word_stem):
        return None
    endings = sorted((e for e in _SUFFIXES if stem(word_stem + e) == word_stem),
                     key=lambda e: (-len(e), e))
    return "(?:" + "|".join(map(re.escape, endings)) + ")" if endings else None


def make_snippet(text: str, words: Sequence[str], span: tuple[int, int] | None = None,
                 width: int = WIDTH, language: str | None = None) -> Snippet:
    """The snippet of ``text`` (or of its ``span``, a matched passage) for the query ``words``;
    ``language``: the text's, whose stems mark words too (``word_spans``)."""
    start, end = span if span is not None else (0, len(text))
    start, end = max(0, int(start)), min(len(text), int(end))
    if chars_within(text[start:start + width + 1], width) < end - start:
        marks = word_spans(text[start:end], words, language)
        chars = chars_for(text[start:end], width)  # about: to place the window
        centre = _densest(marks, chars) if marks else 0
        lo = start + max(0, min(centre - chars // 3, end - start - chars))
        hi = lo + chars_within(text[lo:lo + width + 1], width)  # exactly ``width`` columns
        lo, hi = _word_edges(text, lo, hi, start, end)
        start, end, cut_left, cut_right = lo, hi, lo > 0, hi < len(text)
    else:
        cut_left, cut_right = start > 0, end < len(text)
    region = text[start:end]
    body = region.strip()
    at = start + len(region) - len(region.lstrip())  # the body's offset in ``text``
    marks = word_spans(body, words, language)
    prefix = "…" if cut_left else ""
    spans = [(a + len(prefix), b + len(prefix)) for a, b in marks]
    return Snippet(prefix + body + ("…" if cut_right else ""), spans,
                   at + (marks[0][0] if marks else 0), (at, at + len(body)))


def _densest(marks: list[tuple[int, int]], width: int) -> int:
    """The offset of the mark that starts the window of ``width`` holding the most marks
    (the first such; a window holds the marks that end within two thirds of it).

    Example:
        >>> _densest([(0, 3), (500, 503), (520, 524), (560, 563), (900, 905)], 300)
        500
    """
    reach = width * 2 // 3
    ends = [b for _, b in marks]  # sorted: marks do not overlap
    held = [bisect_right(ends, a + reach) - i for i, (a, _) in enumerate(marks)]  # >= 0
    return marks[max(range(len(held)), key=held.__getitem__)][0]


def _word_edges(text: str, lo: int, hi: int, floor: int, ceiling: int) -> tuple[int, int]:
    """Move a window's ends to whitespace (within the region) so no word is cut in two;
    in text without spaces (Chinese, Japanese), to just after a clause's punctuation.

    Example:
        >>> text = "今日は晴れです。明日は雨が降るでしょう。"
        >>> lo, hi = _word_edges(text, 3, 15, 0, len(text))
        >>> text[lo:hi]
        '明日は雨が降る'
    """
    lo, hi = max(lo, floor), min(hi, ceiling)
    if lo > floor:
        space = text.find(" ", lo, min(lo + 20, hi))
        lo = space + 1 if space >= 0 else _after_break(text, lo, min(lo + 20, hi), lo)
    if hi < ceiling:
        space = text.rfind(" ", max(hi - 20, lo), hi)
        hi = space if space >= 0 else _last_break(text, max(hi - 20, lo), hi, hi)
    return lo, hi


# Where text written without spaces may be cut: after its sentence and clause marks.
_BREAKS = re.compile(r"[\u3001\u3002\uff0c\uff0e\uff01\uff1f\uff1b\uff1a\u300d\u300f\uff09]")


def _after_break(text: str, lo: int, hi: int, default: int) -> int:
    """Just after the first clause mark in ``text[lo:hi]``; ``default`` where there is none."""
    found = _BREAKS.search(text, lo, hi)
    return found.end() if found else default


def _last_break(text: str, lo: int, hi: int, default: int) -> int:
    """Just after the last clause mark in ``text[lo:hi]``; ``default`` where there is none."""
    ends = [m.end() for m in _BREAKS.finditer(text, lo, hi)]
    return ends[-1] if ends else default
