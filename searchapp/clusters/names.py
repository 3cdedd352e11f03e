"""Cluster names a person would write: a short phrase, or the central document's title.

A list of c-TF-IDF words ("use, database, type") tells a reader what to guess;
a name says it. Each cluster gets, in this order of preference:

1. its most distinctive phrase (``phrases``): a term of two or three words
   (``naming.terms_of``: no stop word at either end) among its best c-TF-IDF
   terms, held by at
   least ``MIN_MEMBERS`` (and ``MIN_SHARE``) of its members and ``LIFT`` times as often by them
   as by the other documents: shared by many, rare elsewhere (a manual's
   "manual page", on every page, names no cluster of it);
2. a central document's title (``title_of``: the document's ``title``
   metadata, else its first line, section numbers dropped; of the three most
   central documents, the one holding most of the cluster's own words:
   ``best_title``) when the title holds more of the cluster's best words
   than the phrase does (``covers``): "String Functions and Operators" over
   "string functions";
3. with no such phrase: that title, or the central document's first words.

Names are unique among siblings (clusters of one level): a name that reads
like an earlier one (the same words, whatever their forms and order) gives way
to the cluster's next candidate (its next phrase, then its title), then to its
first name with its best word of its own in brackets. No cluster is ever
called "cluster N".

Example:
    >>> cluster_names({0: [Scored("database", 1.0, 9), Scored("database server", 0.8, 5)],
    ...                1: [Scored("database", 1.0, 8), Scored("backup", 0.9, 7)]},
    ...               {0: "Starting the server", 1: "Backup and Restore"})
    {0: 'database server', 1: 'Backup and Restore'}
"""

from __future__ import annotations

import re

from searchapp.base.text_width import chars_within, columns
from searchapp.clusters.naming import JOINERS, Scored
from searchapp.clusters.wordforms import same_words, stems

PHRASE_FLOOR = 0.2  # a phrase whose gap is below this share of the best term's names nothing
MIN_MEMBERS = 2  # members that must hold a phrase (in the naming sample)
MIN_SHARE = 0.05  # and the share of the cluster's members that must hold it
LIFT = 2.0  # a name's terms are this many times as common in the cluster as elsewhere
PHRASES = 3  # phrases tried per cluster before its title and its own words
WORDS_WEIGHT = 0.25  # of a phrase's words' own gap in its rank (``_phrase_rank``)
TOP_WORDS = 5  # the best single words a name is judged to cover
MAX_WORDS = 6  # a title or a first line longer than this is cut, with "…"
MAX_WIDE = 30  # columns of a title in Chinese or Japanese (15 characters; no spaces to count)
# Where a Japanese line may be cut: after a particle or an ending (hiragana), a space or a mark.
WIDE_BREAK = re.compile(r"[\u3041-\u309f\s\u3001\u3002\uff0c\uff01\uff1f]")
WORD = re.compile(r"(?u)\w+(?:[-'’]\w+)*")
# What numbers a part of a manual: "9.4. ", "F.37. ", "Chapter 43. ", "Part V. ", "IV. "
SECTION_NUMBER = re.compile(r"^\s*(?:(?i:chapter|part|appendix|section)\s+[\w.]+\s+"
                            r"|[A-Z]?\.?\d+(?:\.\d+)*\.?\s+|[IVX]+\.\s+)")
UNTITLED = "untitled documents"


def title_of(title: str | None, text: str) -> str:
    """What a document is called: its ``title`` metadata, else its first line with words.

    Whitespace is collapsed and a leading section number dropped ("9.4. String
    Functions" reads "String Functions", "Part V. Server Programming" "Server
    Programming"); at most ``MAX_WORDS`` words, then "…".

    Example:
        >>> title_of("9.4. String Functions and Operators", "...")
        'String Functions and Operators'
        >>> title_of("", "\\n\\nHow far is it from Denver to Aspen ?")
        'How far is it from Denver…'
    """
    for line in [title or "", *text.splitlines()]:
        line = SECTION_NUMBER.sub("", " ".join(line.split()))
        if WORD.search(line):
            return _cut(line)
    return ""


def _cut(line: str, most: int = MAX_WORDS) -> str:
    """``line`` up to its ``most``-th word, with "…" when more followed; a line of Chinese or
    Japanese (wide characters), whose sentence is one "word", to ``MAX_WIDE`` columns.

    Example:
        >>> _cut("データベースのバックアップは毎晩作成され、サーバーに保存されます。")
        'データベースのバックアップは…'
    """
    if columns(line) > max(len(line), MAX_WIDE):
        cut = line[:chars_within(line, MAX_WIDE)]
        ends = [m.end() for m in WIDE_BREAK.finditer(cut)]  # never inside a word
        cut = cut[:ends[-1]] if ends and ends[-1] > len(cut) // 2 else cut
        words = list(WORD.finditer(cut))
        cut = cut[:words[most - 1].end()] if len(words) > most else cut
        return cut.rstrip(" 、。,.:;-") + "…"
    found = list(WORD.finditer(line))
    if len(found) <= most:
        return line.strip(" :;,.-")
    return line[:found[most - 1].end()] + "…"


def words_of(name: str) -> list[str]:
    """The words of a name, lower case (what makes two names alike).

    Example:
        >>> words_of("Backup and Restore (pg_dump)")
        ['backup', 'and', 'restore', 'pg_dump']
    """
    return [w.lower() for w in WORD.findall(name)]


def phrases(scored: list[Scored]) -> list[str]:
    """The cluster's distinctive phrases, best first (see the module's rule 1).

    Example:
        >>> phrases([Scored("vacuum", 1.0, 9, 0.9, 0.1),
        ...          Scored("dead tuples", 0.5, 4, 0.4, 0.0),
        ...          Scored("manual page", 0.5, 9, 1.0, 0.9),  # on every page
        ...          Scored("free space", 0.1, 2, 0.2, 0.05)])  # not distinctive enough
        ['dead tuples']
    """
    own = sorted((t for t in scored
                  if _own(t) and t.members >= MIN_MEMBERS and t.share >= MIN_SHARE),
                 key=lambda t: (-_gap(t), t.term))
    if not own:
        return []
    floor = PHRASE_FLOOR * _gap(own[0])
    words = {t.term: _gap(t) for t in own if " " not in t.term}
    found = sorted((t for t in own if " " in t.term and _gap(t) >= floor and _gap(t) > 0),
                   key=lambda t: (-_phrase_rank(t, words), t.term))
    found = [t.term for t in found]
    return _distinct(found)[:PHRASES]


def _phrase_rank(phrase: Scored, words: dict[str, float]) -> float:
    """A phrase's gap, and a quarter of its words' mean gap: of two phrases held by the
    same members, "river bank" (two words of the cluster's own) beats "bank today"."""
    parts = [w for w in phrase.term.split() if w not in JOINERS]
    return _gap(phrase) + WORDS_WEIGHT * sum(words.get(w, 0.0) for w in parts) / len(parts)


def _gap(term: Scored) -> float:
    """How much more of the cluster than of the other documents holds ``term``."""
    return term.share - term.elsewhere


def _own(term: Scored) -> bool:
    """Whether the cluster holds ``term`` ``LIFT`` times as often as the other documents."""
    return term.share >= LIFT * term.elsewhere


def _distinct(terms: list[str]) -> list[str]:
    """``terms`` without those whose words are all in an earlier one ("credit card pin"
    then "credit card": the second goes)."""
    kept: list[str] = []
    for term in terms:
        words = set(term.split())
        if not any(words <= set(k.split()) or set(k.split()) <= words for k in kept):
            kept.append(term)
    return kept


def covers(name: str, scored: list[Scored]) -> float:
    """The share of the weight (the gap, see ``phrases``) of the cluster's ``TOP_WORDS``
    best own words that ``name`` holds (any form of each word counts).

    Example:
        >>> round(covers("String Functions", [Scored("string", 2.0, 9, 0.9, 0.3),
        ...                                   Scored("function", 1.0, 9, 0.9, 0.6),  # not own
        ...                                   Scored("regex", 1.0, 3, 0.3, 0.1)]), 2)
        0.75
    """
    top = sorted((t for t in scored if " " not in t.term and _own(t)),
                 key=lambda t: -_gap(t))[:TOP_WORDS]
    total = sum(_gap(t) for t in top)
    if total <= 0:
        return 0.0
    own = set().union(*(stems(w) for w in words_of(name)))
    return sum(_gap(t) for t in top if stems(t.term) & own) / total


def candidates(scored: list[Scored], title: str) -> list[str]:
    """The names a cluster may take, best first: phrases and its title (rules 1–3).

    Example:
        >>> candidates([Scored("string", 2.0, 10), Scored("operators", 1.0, 10),
        ...             Scored("string functions", 0.9, 5)], "String Functions and Operators")
        ['String Functions and Operators', 'string functions']
    """
    found = phrases(scored)
    if title and (not found or (not title.endswith("…")
                                and covers(title, scored) > covers(found[0], scored))):
        return [title, *(p for p in found if not same_words(words_of(p), words_of(title)))]
    return [*found, title] if title else found


def best_title(titles: str | list[str] | None, scored: list[Scored]) -> str:
    """Of the central documents' titles (most central first), the one that holds most of the
    cluster's own words (``covers``; ties: the more central), cleaned by ``title_of``.

    Example:
        >>> best_title(["What is Dick Clark's birthday ?", "Who directed the movie Jaws ?"],
        ...            [Scored("movie", 1.0, 9, 0.5, 0.05), Scored("directed", 0.5, 4, 0.2, 0.0)])
        'Who directed the movie Jaws ?'
    """
    found = [t for t in (title_of(x, "") for x in ([titles] if isinstance(titles, str)
                                                    else titles or [])) if t]
    return max(found, key=lambda t: covers(t, scored), default="")


def cluster_names(scored: dict[int, list[Scored]], titles: dict[int, str | list[str]]
                  ) -> dict[int, str]:
    """A name per cluster (``scored``: its ranked terms; ``titles``: its central document's
    title, or its central documents' titles, most central first: the one holding most of
    the cluster's own words is its title), unique among these clusters, given in id order
    (the biggest first).

    Example:
        >>> cluster_names({0: [Scored("dog", 1.0, 10), Scored("black dog", 0.9, 5)],
        ...                1: [Scored("dogs", 1.0, 10), Scored("black dogs", 0.9, 5),
        ...                    Scored("snow", 0.5, 3)]}, {})
        {0: 'black dog', 1: 'black dogs (snow)'}
    """
    given = _Given()
    out = {}
    for c in sorted(scored.keys() | titles.keys()):
        terms = scored.get(c, [])
        options = candidates(terms, best_title(titles.get(c), terms)) or [UNTITLED]
        name = next((o for o in options if not given.alike(words_of(o))), None)
        if name is None:
            name = apart(options[0], [t.term for t in terms], given)
        given.add(words_of(name))
        out[c] = name
    return out


def apart(name: str, terms: list[str], given: _Given | None = None,
          taken: set[str] | None = None) -> str:
    """``name`` told apart by its best term of its own in brackets, else by a number.

    Example:
        >>> apart("vacuum", ["vacuum", "autovacuum", "dead tuples"], taken={"vacuum"})
        'vacuum (autovacuum)'
    """
    def free(option: str) -> bool:
        if taken is not None and option.casefold() in taken:
            return False
        return given is None or not given.alike(words_of(option))

    own = set().union(*(stems(w) for w in words_of(name)))
    for term in terms:
        option = f"{name} ({term})"
        if not (stems(term.split()[-1]) & own) and free(option):
            return option
    number = 2
    while not free(f"{name} ({number})"):
        number += 1
    return f"{name} ({number})"


class _Given:
    """The names given so far, found through the stems of their words (not by a scan of all)."""

    def __init__(self) -> None:
        self._names: list[list[str]] = []
        self._by_stem: dict[str, set[int]] = {}

    def alike(self, words: list[str]) -> bool:
        """Whether a name given so far says the same as ``words``."""
        found: set[int] | None = None
        for word in words:  # names with a form of every word, then checked both ways
            near = set().union(*(self._by_stem.get(stem, ()) for stem in stems(word)))
            found = near if found is None else found & near
            if not found:
                return False
        return any(same_words(self._names[i], words) for i in found or ())

    def add(self, words: list[str]) -> None:
        for stem in {s for word in words for s in stems(word)}:
            self._by_stem.setdefault(stem, set()).add(len(self._names))
        self._names.append(words)
