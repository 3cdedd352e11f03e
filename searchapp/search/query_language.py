"""The search box's small language: phrases, exclusions, OR and field filters in the query.

What a person types is read as the search tools they know read it, and
anything that merely looks like syntax stays text:

- ``"exact phrase"``: a phrase every hit must hold (its words in this order). A quotation
  of more than ``MAX_PHRASE_WORDS`` words is prose pasted with its quotes: its words are
  searched, nothing is required.
- ``-word`` and ``-"a phrase"``: must not appear. A dash inside a word
  (``a-b``, ``ERR-40417``), before a digit (``-5``) or doubled (``--force``)
  is text.
- ``a OR b``: either; the words of a query are OR-ed for ranking anyway, and
  a phrase OR-ed with another term is required as "one of them".
- ``field:value``, ``field:"two words"``, ``field<value`` (also ``<=``, ``>``,
  ``>=``), ``-field:value`` (not): a filter, when ``field`` is a known field:
  ``type``, ``folder``, ``file``, ``author``, ``lang``, ``after``, ``before``
  or a metadata column of the corpus (``fields``). ``word:value`` on an unknown
  field stays text, and the parse notes it (``unknown_fields``) so a front end
  can say which fields exist. A value starting with ``//`` (``http://x``)
  never makes a filter.

The parse never raises: an unbalanced quote is a character of the text. It
keeps each filter's place in the typed text (``span``), so a front end can
take one out and leave the rest as typed (``without_filter``), and it writes
itself back canonically (``str()``), which parses to the same thing.

What the filters mean (which column, which SQL) is
``searchapp.search.query_filters``; this module only reads the text.

Example:
    >>> q = parse_query('lease "notice period" -draft type:pdf after:2024-03')
    >>> q.text, q.phrases, q.excluded
    ('lease notice period', ('notice period',), ('draft',))
    >>> [(f.field, f.op, f.value) for f in q.filters]
    [('type', ':', 'pdf'), ('after', ':', '2024-03')]
    >>> parse_query("C++ ERR-40417 http://x").text
    'C++ ERR-40417 http://x'
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

BUILTIN_FIELDS = ("type", "folder", "file", "author", "lang", "after", "before")
OPERATORS = ("<=", ">=", ":", "<", ">")  # longest first
# A longer quotation is prose pasted with its quotes ("…," it said), not an exact phrase to
# require: its words are searched (a required 18-word quote found nothing for its paraphrase)
MAX_PHRASE_WORDS = 10
# a field's name as typed: a letter, then letters, digits, _ . - (a column like "due_date")
_FIELD = re.compile(r"(-?)([A-Za-z_][\w.\-]*?)(<=|>=|:|<|>)")
_SCHEMES = frozenset({"http", "https", "ftp", "ftps", "mailto", "ssh", "git", "s3", "urn"})


@dataclass(frozen=True)
class FieldFilter:
    """One filter as typed: ``field`` (as the corpus names it), ``op`` (``:`` or a
    comparison), ``value`` (quotes taken off), ``negated`` for ``-field:value``."""

    field: str
    op: str
    value: str
    negated: bool = False
    span: tuple[int, int] = field(default=(0, 0), compare=False)  # where it stood as typed

    def __str__(self) -> str:
        """The filter as it is written: ``type:pdf``, ``-author:"Jane Doe"``."""
        return ("-" if self.negated else "") + filter_text(self.field, self.value, self.op)


@dataclass(frozen=True)
class ParsedQuery:
    """A query as understood (see the module docstring); ``typed`` is the text as given."""

    typed: str
    text: str  # what meaning reads: the words and phrases, without operators or filters
    words: tuple[str, ...] = ()  # plain words, in order (not in a phrase, not excluded)
    phrases: tuple[str, ...] = ()  # required, each alone
    excluded: tuple[str, ...] = ()  # words and phrases that must not appear
    any_of: tuple[tuple[str, ...], ...] = ()  # OR groups holding a phrase: one required
    filters: tuple[FieldFilter, ...] = ()
    unknown_fields: tuple[str, ...] = ()  # ``word:value`` read as text, ``word`` unknown

    def __str__(self) -> str:
        """The query written canonically: text terms, then exclusions, then filters."""
        parts: list[str] = []
        grouped = {p for group in self.any_of for p in group}
        for word in self.words:
            if word not in grouped:
                parts.append(word)
        parts += [_quoted(p) for p in self.phrases]
        parts += [" OR ".join(_term(t) for t in group) for group in self.any_of]
        parts += ["-" + _term(e) for e in self.excluded]
        parts += [str(f) for f in self.filters]
        return " ".join(parts)

    @property
    def has_text(self) -> bool:
        """Whether anything is left to rank by (else the filters alone list documents)."""
        return bool(self.text.strip())


def filter_text(field_name: str, value: str, op: str = ":") -> str:
    """One filter written as a person types it, the value quoted when it must be.

    Example:
        >>> filter_text("type", "pdf"), filter_text("folder", "my contracts")
        ('type:pdf', 'folder:"my contracts"')
        >>> filter_text("year", "2024", ">=")
        'year>=2024'
    """
    value = value.replace('"', "")  # a typed value never holds one (quotes delimit it)
    needs = not value or any(c.isspace() for c in value) or value.startswith(("//", ":"))
    return f"{field_name}{op}" + (f'"{value}"' if needs else value)


def without_filter(query: str, drop: FieldFilter) -> str:
    """The query as typed with one of its filters taken out (a removed chip).

    Example:
        >>> q = parse_query("lease type:pdf   folder:contracts")
        >>> without_filter(q.typed, q.filters[0])
        'lease folder:contracts'
    """
    start, end = drop.span
    if end <= start or end > len(query):
        return query
    return " ".join((query[:start] + " " + query[end:]).split())


def with_filter(query: str, field_name: str, value: str, op: str = ":") -> str:
    """The query with one more filter at its end (a facet clicked), unless it is there.

    Example:
        >>> with_filter("lease", "type", "pdf")
        'lease type:pdf'
        >>> with_filter("lease type:pdf", "type", "pdf")
        'lease type:pdf'
    """
    new = FieldFilter(field_name, op, value)
    if any(f == new for f in parse_query(query, [field_name]).filters):
        return query
    return f"{query.rstrip()} {new}".strip()


def parse_query(typed: str | None, fields: Collection[str] = ()) -> ParsedQuery:
    """Read a typed query (never raises). ``fields``: the corpus' metadata columns, filters
    besides the built-in ones (``BUILTIN_FIELDS``); names compare case-insensitively.

    Example:
        >>> q = parse_query('"exact phrase" OR summary -"old draft" year>=2024', ["year"])
        >>> q.any_of, q.excluded, str(q.filters[0])
        ((('exact phrase', 'summary'),), ('old draft',), 'year>=2024')
        >>> parse_query('note:this is "unbalanced').text
        'note:this is unbalanced'
        >>> parse_query('note:this').unknown_fields
        ('note',)
    """
    typed = typed or ""
    known = _known_fields(fields)
    reader = _Reader(typed, known)
    reader.read()
    return reader.result()


def _known_fields(fields: Collection[str]) -> dict[str, str]:
    """lower-cased name → the name to use: the corpus' columns, then the built-in fields."""
    known = {str(f).lower(): str(f) for f in fields if str(f)}
    for name in BUILTIN_FIELDS:
        known.setdefault(name, name)
    return known


def _quoted(phrase: str) -> str:
    return f'"{phrase}"'


def _term(term: str) -> str:
    """A word as written, a phrase (any space in it) in quotes."""
    return _quoted(term) if " " in term or not term else term


@dataclass
class _Term:
    """One text term met while reading: a word or a phrase, maybe excluded."""

    text: str
    phrase: bool
    excluded: bool = False


class _Reader:
    """A left-to-right reading of the typed text into terms, OR marks and filters."""

    def __init__(self, typed: str, known: dict[str, str]) -> None:
        self.typed, self.known = typed, known
        self.items: list[_Term | str] = []  # terms and the "OR" marks between them
        self.filters: list[FieldFilter] = []
        self.unknown: list[str] = []

    def read(self) -> None:
        at, n = 0, len(self.typed)
        while at < n:
            if self.typed[at].isspace():
                at += 1
                continue
            at = self._token(at)

    def _token(self, at: int) -> int:
        """Read the token starting at ``at``; returns where the next one may start."""
        s = self.typed
        negated = s[at] == "-" and at + 1 < len(s) and s[at + 1] != "-"
        body = at + 1 if negated else at
        if body < len(s) and s[body] == '"':
            close = s.find('"', body + 1)
            if close > body + 1:
                phrase = " ".join(s[body + 1:close].split())
                if len(phrase.split()) > MAX_PHRASE_WORDS:  # a quotation in pasted prose
                    self.items += [_Term(w, False) for w in phrase.split()]
                elif phrase:
                    self.items.append(_Term(phrase, True, negated))
                return close + 1
        match = _FIELD.match(s, at)
        if match:
            end = self._filter(match)
            if end is not None:
                return end
        end = _bare_end(s, at)
        self._word(s[at:end], negated and s[body:body + 1].isalpha())
        return end

    def _filter(self, match: re.Match) -> int | None:
        """A field filter at ``match``: where it ends, or None when it is text after all."""
        s = self.typed
        negated, name, op = match.group(1) == "-", match.group(2), match.group(3)
        start, at = match.start(), match.end()
        if at < len(s) and s[at] == '"':
            close = s.find('"', at + 1)
            if close < 0:
                return None  # an unbalanced quote: text
            value, end = s[at + 1:close], close + 1  # as typed: compared with stored values
        else:
            end = _bare_end(s, at)
            value = s[at:end]
            if value.startswith(("//", '"', ":")):  # http://x, std::vector: text
                return None
        if not value or name.lower() in _SCHEMES:
            return None
        field_name = self.known.get(name.lower())
        if field_name is None:
            if op == ":" and name.isalpha() and len(name) > 1:
                self.unknown.append(name)
            return None
        if op != ":" and field_name in ("type", "folder", "file", "author", "lang"):
            return None  # "file<x" compares nothing: text
        self.filters.append(FieldFilter(field_name, op, value, negated, (start, end)))
        return end

    def _word(self, token: str, excluded: bool) -> None:
        if token == "OR":
            self.items.append("OR")
            return
        if excluded:
            token = token[1:]
        token = token.lstrip('"') if token.count('"') % 2 else token  # a stray opening quote
        if token:
            self.items.append(_Term(token, False, excluded))

    def result(self) -> ParsedQuery:
        groups = _or_groups(self.items)
        words, phrases, excluded, shown = [], [], [], []
        any_of = [tuple(t.text for t in g) for g in groups if len(g) > 1
                  and any(t.phrase for t in g)]
        grouped_phrases = {t for g in any_of for t in g}
        for group in groups:
            for term in group:
                if term.excluded:
                    excluded.append(term.text)
                    continue
                shown.append(term.text)
                if not term.phrase:
                    words.append(term.text)
                elif term.text not in grouped_phrases:
                    phrases.append(term.text)
        return ParsedQuery(self.typed, " ".join(shown), tuple(words), tuple(phrases),
                           tuple(excluded), tuple(any_of), tuple(self.filters),
                           tuple(dict.fromkeys(self.unknown)))


def _bare_end(s: str, at: int) -> int:
    """Where a bare token starting at ``at`` ends: the next whitespace."""
    end = at
    while end < len(s) and not s[end].isspace():
        end += 1
    return end


def _or_groups(items: list[_Term | str]) -> list[list[_Term]]:
    """Terms joined by ``OR`` marks into groups; an ``OR`` with nothing on a side is a word."""
    groups: list[list[_Term]] = []
    joining = False
    for i, item in enumerate(items):
        if item == "OR":
            left_ok = bool(groups) and not joining and not groups[-1][-1].excluded
            right = items[i + 1] if i + 1 < len(items) else None
            if left_ok and isinstance(right, _Term) and not right.excluded:
                joining = True
                continue
            item = _Term("OR", False)
        if joining and groups:
            groups[-1].append(item)
        else:
            groups.append([item])
        joining = False
    return groups
