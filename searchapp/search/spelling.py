"""Did you mean: a query's misspelt words corrected to the corpus' own words.

A word of the query is corrected only when all of these hold:

- it is a plain word or a word inside a phrase (``"..."``), never an excluded word
  (``-word``, ``-"a phrase"``), an operator (``OR``), a field filter (``type:pdf``,
  ``year>=2024``, ``http://x``) or an option-like word (``--force``);
- it is letters only (edge punctuation aside): a word with digits, ``_``, ``-``, ``+``,
  ``#``, ``/``, ``.`` or ``'`` inside is a code, a number or a name (``XR-7``,
  ``pg_dump``, ``git-rebase``, ``C++``, ``v2``) and stays as typed; so does a word with
  a capital after its first letter (``PostgreSQL``, ``NASA``, ``iPhone``), a word of
  fewer than ``MIN_LENGTH`` letters, and a common English word;
- it is not in the corpus' vocabulary (``store/vocabulary.py``; compared with accents
  folded, so ``cafe`` is ``café``) and the full-text index finds no document for it as
  typed (so ``databases`` is left alone where the corpus says ``database``: the stemmer
  finds it);
- a word of the vocabulary lies within ``max_edit`` of it (Damerau-Levenshtein, the
  optimal-string-alignment kind: a swap of two neighbours is one edit; 1 edit up to
  ``LONG`` letters, 2 from there) and is frequent enough to be a confident choice: in at
  least ``MIN_DOCUMENTS`` documents, and ``LEAD`` times as many as the next candidate
  as near, if any. The nearest wins, then the most frequent.

The vocabulary of a corpus is loaded once per corpus generation and kept in the App's
memo (``Lexicon``): the words of at least ``MIN_DOCUMENTS`` documents are indexed by
their deletes (SymSpell: each word's prefix with up to one letter removed, as 64-bit
hashes in one sorted numpy array), so a word's candidates are a few binary searches of
its own deletes (up to two letters removed), never a scan of the vocabulary.

The correction keeps the query as typed (operators, filters, quotes, spacing) and
replaces only the corrected words (a capital first letter kept).

Example:
    >>> lex = Lexicon.from_counts([("postgres", 40), ("postgis", 3), ("replication", 9)])
    >>> propose("postgrse replicaton -postgrse type:pdf", lex).query
    'postgres replication -postgrse type:pdf'
    >>> propose("XR-7 pg_dump PostgrSQL", lex) is None
    True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from searchapp.base.words import has_unspaced
from searchapp.context import App
from searchapp.search.query_language import parse_query
from searchapp.store import fulltext, repo, vocabulary
from searchapp.vectors.handle import CorpusHandle

MIN_LENGTH = 4  # shorter words are never corrected (too many near words: "teh", "fro")
LONG = 7  # from this many letters, 2 edits are allowed; below, 1
MIN_DOCUMENTS = 2  # a correction is a word of at least this many documents
LEAD = 2.0  # ...and this many times as frequent as the next as near (else: ambiguous)
PREFIX = 7  # SymSpell's prefix: deletes are made of a word's first letters only
EDGE = "\"'.,;:!?()[]{}<>«»“”‘’"  # punctuation around a word that is not part of it
TOKEN = re.compile(r'(?:[^\s"]|"[^"]*(?:"|$))+')  # a whitespace chunk; quotes hold spaces
FILTER = re.compile(r"^[^\W\d][\w.]*(?::|<=|>=|<|>|=)")  # field:value, col>=x, http://
PART = re.compile(r"[^\s\"]+")


@dataclass(frozen=True)
class Correction:
    """A query with its misspelt words corrected: ``query`` (what is searched), ``original``
    (as typed) and ``words``, each (typed, corrected) in the query's order."""

    query: str
    original: str
    words: tuple[tuple[str, str], ...]

    def as_json(self) -> dict:
        """What the CLI's ``--json`` and the API say as ``did_you_mean``.

        Example:
            >>> Correction("postgres", "postgrse", (("postgrse", "postgres"),)).as_json()
            ... # doctest: +NORMALIZE_WHITESPACE
            {'query': 'postgres', 'original': 'postgrse',
             'corrected_words': [['postgrse', 'postgres']]}
        """
        return {"query": self.query, "original": self.original,
                "corrected_words": [list(w) for w in self.words]}


def fold(word: str) -> str:
    """A word lower-cased with its accents taken off: how words are compared.

    Example:
        >>> fold("Café"), fold("NAÏVE")
        ('cafe', 'naive')
    """
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Damerau-Levenshtein distance (optimal string alignment), ``limit + 1`` when above.

    Example:
        >>> edit_distance("postgrse", "postgres"), edit_distance("cat", "dog", 1)
        (1, 2)
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before, row = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = ca != cb
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return min(row[-1], limit + 1)


def _deletes(word: str, depth: int) -> set[str]:
    """The word's prefix with up to ``depth`` letters taken out (itself included)."""
    found, edge = {word[:PREFIX]}, {word[:PREFIX]}
    for _ in range(depth):
        edge = {w[:i] + w[i + 1:] for w in edge for i in range(len(w)) if len(w) > 1}
        found |= edge
    return found


def max_edit(word: str) -> int:
    """The edits a correction of ``word`` may be away: 1, or 2 from ``LONG`` letters.

    Example:
        >>> max_edit("port"), max_edit("postgresql")
        (1, 2)
    """
    return 2 if len(word) >= LONG else 1


class Lexicon:
    """A corpus' vocabulary in memory: every word (folded) to look up, and the frequent ones
    indexed by their deletes for finding near words. Build with ``from_counts``."""

    def __init__(self, known: dict[str, int], surface: dict[str, str],
                 candidates: list[str], keys: np.ndarray, owners: np.ndarray):
        self.known, self.surface, self.candidates = known, surface, candidates
        self.keys, self.owners = keys, owners

    @classmethod
    def from_counts(cls, counts: Iterable[tuple[str, int]],
                    min_documents: int = MIN_DOCUMENTS) -> Lexicon:
        """The lexicon of ``(word, documents)`` pairs (``vocabulary.words``); the forms of a
        word that differ by accents only count together, shown as the commonest."""
        known: dict[str, int] = {}
        best: dict[str, tuple[int, str]] = {}
        for word, n in counts:
            key = fold(word)
            known[key] = known.get(key, 0) + n
            if n > best.get(key, (0, ""))[0]:
                best[key] = (n, word)
        candidates = [w for w, n in known.items() if n >= min_documents and w.isalpha()]
        pairs = [(hash(d), i) for i, w in enumerate(candidates) for d in _deletes(w, 1)]
        table = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        order = np.argsort(table[:, 0], kind="stable")
        return cls(known, {k: v[1] for k, v in best.items()}, candidates,
                   table[order, 0].copy(), table[order, 1].astype(np.int32))

    def __len__(self) -> int:
        return len(self.known)

    def knows(self, word: str) -> bool:
        """Whether the corpus holds ``word`` (accents and case folded)."""
        return fold(word) in self.known

    def near(self, word: str) -> list[tuple[int, int, str]]:
        """(edits, documents, folded word) of the candidates within ``max_edit(word)``,
        nearest then commonest first.

        Example:
            >>> Lexicon.from_counts([("postgres", 9), ("postgis", 2)]).near("postgrse")
            [(1, 9, 'postgres'), (2, 2, 'postgis')]
        """
        target, limit = fold(word), max_edit(word)
        hashes = np.array([hash(d) for d in _deletes(target, limit)], dtype=np.int64)
        left = np.searchsorted(self.keys, hashes, "left")
        right = np.searchsorted(self.keys, hashes, "right")
        owners = {int(o) for lo, hi in zip(left, right, strict=True)
                  for o in self.owners[lo:hi]}
        out = []
        for o in owners:
            cand = self.candidates[o]
            d = edit_distance(target, cand, limit)
            if d <= limit and cand != target:
                out.append((d, self.known[cand], cand))
        return sorted(out, key=lambda t: (t[0], -t[1], t[2]))

    def best(self, word: str) -> str | None:
        """The confident correction of ``word`` as the corpus writes it, or None.

        Example:
            >>> lex = Lexicon.from_counts([("postgres", 9), ("postgis", 2), ("port", 5)])
            >>> lex.best("postgrse"), lex.best("pont")
            ('postgres', 'port')
        """
        near = self.near(word)
        if not near:
            return None
        d, n, cand = near[0]
        rivals = [m for e, m, _ in near[1:] if e == d]
        if rivals and n < LEAD * rivals[0]:
            return None
        return self.surface[cand]


# ---- the query's words ------------------------------------------------------------------
def candidate_words(query: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of the query's words that may be corrected (see the module's
    docstring): plain words and words of phrases, letters only, long enough, no inner
    capital; not excluded, not filters, not operators.

    Example:
        >>> [w for _, _, w in candidate_words('Postgrse "loggin setup" -rplica type:pdf XR-7')]
        ['Postgrse', 'loggin', 'setup']
    """
    out = []
    meant = set(fulltext.WORD.findall(parse_query(query).text.lower()))  # the language's words
    for m in TOKEN.finditer(query):
        chunk = m.group()
        if chunk.startswith("-") or chunk == "OR" or FILTER.match(chunk):
            continue
        for part in PART.finditer(chunk):
            word = part.group().strip(EDGE)
            if not word:
                continue
            start = m.start() + part.start() + part.group().index(word)
            if _correctable(word) and word.lower() in meant:
                out.append((start, start + len(word), word))
    return out


def _correctable(word: str) -> bool:
    """Letters of a spaced script only (a Japanese or Chinese run is a sentence: its words
    are searched as bigrams, and the vocabulary holds none), long enough, no inner capital."""
    return (len(word) >= MIN_LENGTH and word.isalpha() and not any(c.isupper() for c in word[1:])
            and word.lower() not in fulltext.STOPWORDS and not has_unspaced(word))


def propose(query: str, lexicon: Lexicon,
            found_as_typed: Callable[[str], bool] = lambda word: False) -> Correction | None:
    """The query with each correctable word the corpus lacks replaced by its confident
    correction; None when nothing changes. ``found_as_typed(word)``: whether the corpus'
    full-text index finds documents for the word anyway (then it stays).

    Example:
        >>> lex = Lexicon.from_counts([("replication", 9), ("logging", 4)])
        >>> propose('"replicaton" Loging', lex).words
        (('replicaton', 'replication'), ('Loging', 'Logging'))
    """
    pieces, changed, at = [], [], 0
    for start, end, word in candidate_words(query):
        if lexicon.knows(word):
            continue
        better = lexicon.best(word)
        if better is None or found_as_typed(word):
            continue
        if word[0].isupper():
            better = better[0].upper() + better[1:]
        pieces += [query[at:start], better]
        changed.append((word, better))
        at = end
    if not changed:
        return None
    return Correction("".join([*pieces, query[at:]]), query, tuple(changed))


# ---- a corpus' corrections ----------------------------------------------------------------
def lexicon(app: App, corpus: str | CorpusHandle) -> tuple[int, Lexicon]:
    """(corpus id, its Lexicon), loaded once per corpus generation (the App's memo)."""
    name = corpus.name if isinstance(corpus, CorpusHandle) else corpus
    with app.db.session() as s:
        state = repo.corpus_state(s, name)

    def load() -> Lexicon:
        with app.db.reader() as conn:
            return Lexicon.from_counts(vocabulary.words(conn, state.id))

    return state.id, app.memo.get_or_make(state.id, state.generation, ("lexicon",), load)


def correct(app: App, corpus: str | CorpusHandle, query: str) -> Correction | None:
    """The query's correction in this corpus (``propose``), or None.

    Example:
        >>> correct(app, "pg-manual", "postgrse replicaton").query       # doctest: +SKIP
        'postgres replication'
    """
    corpus_id, lex = lexicon(app, corpus)
    if not candidate_words(query):
        return None

    def found_as_typed(word: str) -> bool:
        with app.db.reader() as conn:
            return fulltext.count_matches(conn, corpus_id, word, 1) > 0

    return propose(query, lex, found_as_typed)


def query_to_run(app: App, corpus: str | CorpusHandle, query: str, as_typed: bool = False
                 ) -> tuple[str, Correction | None]:
    """The query a search runs and its correction: the corrected query when a word of it
    finds nothing and has a confident correction, else the query as typed (and always
    with ``as_typed``, the "search instead for" link).

    Example:
        >>> query_to_run(app, "pg-manual", "postgrse")                  # doctest: +SKIP
        ('postgres', Correction(query='postgres', original='postgrse', ...))
    """
    if as_typed:
        return query, None
    fixed = correct(app, corpus, query)
    return (fixed.query, fixed) if fixed else (query, None)
