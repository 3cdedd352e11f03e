"""Judgements as evaluation items: judged queries (query → graded documents) and judged pairs.

A corpus' judgements (``searchapp.judgements``: kind ``query`` with a grade 0-3,
kind ``pair`` with 1 duplicate / 0 not) and benchmark files
(``benchmark_files``) both become these two item lists, which is all the
evaluation needs. A query with no document judged relevant is left out (it
cannot be found, so it says nothing about a ranking) and counted.

Example:
    >>> from types import SimpleNamespace as J
    >>> items = from_judgements([J(kind="query", query="reset password", a="d1", b=None, label=2),
    ...                          J(kind="query", query="reset password", a="d2", b=None, label=0),
    ...                          J(kind="pair", query=None, a="d1", b="d3", label=1)])
    >>> items.queries[0].grades, items.pairs[0].label, items.skipped_queries
    ({'d1': 2, 'd2': 0}, 1, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class JudgedQuery:
    """A query and the grades of the documents judged for it (0 not relevant, 1-3 relevant)."""

    query: str
    grades: dict[str, int]
    id: str = ""  # the query id of a benchmark file ("" for the app's judgements)

    @property
    def relevant(self) -> list[str]:
        return [d for d, g in self.grades.items() if g >= 1]


@dataclass(frozen=True)
class JudgedPair:
    """Two documents of the corpus judged duplicate (1) or not (0)."""

    a: str
    b: str
    label: int


@dataclass
class Items:
    """What an evaluation runs on: judged queries, judged pairs, and what was left out why."""

    queries: list[JudgedQuery] = field(default_factory=list)
    pairs: list[JudgedPair] = field(default_factory=list)
    skipped_queries: int = 0  # no document judged relevant

    @property
    def judgements(self) -> int:
        """How many single judgements the items hold (a query's documents each count)."""
        return sum(len(q.grades) for q in self.queries) + len(self.pairs)

    def documents(self) -> set[str]:
        """Every document id the items name."""
        ids = {d for q in self.queries for d in q.grades}
        return ids | {p.a for p in self.pairs} | {p.b for p in self.pairs}


def from_judgements(judgements: Iterable) -> Items:
    """Group judgements (``kind``, ``query``, ``a``, ``b``, ``label``) into evaluation items.

    Query judgements of the same query text become one JudgedQuery.
    """
    by_query: dict[str, dict[str, int]] = {}
    items = Items()
    for j in judgements:
        if j.kind == "query":
            by_query.setdefault(j.query, {})[j.a] = int(j.label)
        elif j.kind == "pair":
            items.pairs.append(JudgedPair(j.a, j.b, int(j.label)))
    _add_queries(items, ((q, q, grades) for q, grades in by_query.items()))
    return items


def from_files(queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]]) -> Items:
    """Items from a benchmark's queries ({id: text}) and qrels ({id: {doc: grade}}).

    Example:
        >>> from_files({"q1": "a", "q2": "b"}, {"q1": {"d": 1}, "q2": {"e": 0}}).skipped_queries
        1
    """
    items = Items()
    _add_queries(items, ((qid, queries[qid], grades) for qid, grades in qrels.items()
                         if qid in queries))
    return items


def _add_queries(items: Items, rows) -> None:
    for qid, text, grades in rows:
        if any(g >= 1 for g in grades.values()):
            items.queries.append(JudgedQuery(text, dict(grades), qid))
        else:
            items.skipped_queries += 1
