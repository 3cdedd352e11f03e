"""What duplicate detection returns: pairs, groups, a report over them, matches of a new text.

A ``DuplicateReport`` holds its pairs and groups as arrays of document ids and
turns them into rows with external ids and texts only when asked, and only for
the rows asked for: a page showing the 500 best of two million pairs reads 500
pairs' texts, not two million.

Example:
    >>> report.pair_count, report.top_pairs(1)[0].score          # doctest: +SKIP
    (11, 0.9938)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

TextLookup = Callable[[list[int]], dict[int, tuple[str, str]]]  # id -> (external id, text)


@dataclass(frozen=True)
class DuplicatePair:
    a: str  # external ids
    b: str
    score: float
    exact: bool
    a_text: str = ""
    b_text: str = ""

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "score": self.score, "exact": self.exact}


@dataclass(frozen=True)
class DuplicateGroup:
    representative: str
    members: list[str]  # the representative first, then by cosine to it
    scores: list[float]  # cosine of each member to the representative
    texts: list[str]

    @property
    def size(self) -> int:
        return len(self.members)

    def as_dict(self) -> dict:
        return {"representative": self.representative, "members": self.members,
                "size": self.size}


@dataclass(frozen=True)
class Match:
    id: str
    text: str
    score: float
    exact: bool = False
    meta: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "score": self.score}


@dataclass(eq=False)
class DuplicateReport:
    """Pairs and groups of a corpus at a threshold; rows are built on demand."""

    corpus: str
    model: str
    threshold: float
    k: int
    method: str
    documents: int
    seconds: float  # time the mining took (when it ran, or when the stored result was made)
    reused: bool  # True when the stored result was used
    pair_ids: np.ndarray  # (p, 2) int64 document ids, best first (exact pairs first)
    pair_scores: np.ndarray  # (p,) float32
    pair_exact: np.ndarray  # (p,) bool
    groups_ids: Sequence[tuple[int, np.ndarray, np.ndarray]]  # (rep, members, cosine to rep)
    lookup: TextLookup = field(repr=False, default=lambda ids: {})
    _texts: dict[int, tuple[str, str]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def pair_count(self) -> int:
        return len(self.pair_scores)

    @property
    def group_count(self) -> int:
        return len(self.groups_ids)

    @property
    def exact_count(self) -> int:
        return int(self.pair_exact.sum())

    def _rows(self, ids) -> dict[int, tuple[str, str]]:
        """(external id, text) of documents, fetched once per report; deleted ones are absent."""
        wanted = {int(i) for i in ids}
        with self._lock:
            missing = [i for i in wanted if i not in self._texts]
            if missing:
                self._texts.update(self.lookup(missing))
            return {i: self._texts[i] for i in wanted if i in self._texts}

    def top_pairs(self, n: int | None = None) -> list[DuplicatePair]:
        """The best ``n`` pairs (all with None), with external ids and texts."""
        ids, scores, exact = self.pair_ids[:n], self.pair_scores[:n], self.pair_exact[:n]
        docs = self._rows(ids.ravel())
        return [DuplicatePair(docs[x][0], docs[y][0], round(float(sc), 4), bool(ex),
                              docs[x][1], docs[y][1])
                for (x, y), sc, ex in zip(ids.tolist(), scores, exact, strict=True)
                if x in docs and y in docs]

    def top_groups(self, n: int | None = None, start: int = 0) -> list[DuplicateGroup]:
        """The ``n`` biggest groups from ``start`` on (all with None), with ids and texts."""
        chosen = self.groups_ids[start:None if n is None else start + n]
        docs = self._rows(np.concatenate([m for _, m, _ in chosen]) if chosen else [])
        out = []
        for rep, members, sims in chosen:
            kept = [(int(x), float(v)) for x, v in zip(members, sims, strict=True)
                    if int(x) in docs]
            if rep in docs and len(kept) > 1:
                out.append(DuplicateGroup(docs[rep][0], [docs[x][0] for x, _ in kept],
                                          [round(v, 4) for _, v in kept],
                                          [docs[x][1] for x, _ in kept]))
        return out

    @cached_property
    def pairs(self) -> list[DuplicatePair]:
        return self.top_pairs()

    @cached_property
    def groups(self) -> list[DuplicateGroup]:
        return self.top_groups()

    def as_dict(self) -> dict:
        return {"pairs": [p.as_dict() for p in self.pairs],
                "groups": [g.as_dict() for g in self.groups]}
