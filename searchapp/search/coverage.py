"""Which parts of a corpus answered a search: a search on shards whose replicas are all down
says so, never returning a silently partial answer.

``collecting()`` opens a record around one search (``search.service``); the shard
client (``searchapp.search.shards.fanout``) adds the name of every shard that did
not answer; the search returns its hits as ``SearchResults`` carrying them, and
the CLI, API and pages say which part of the corpus is missing.

Example:
    >>> with collecting() as missing:
    ...     report_missing(["shard 3 of 8"])
    >>> sorted(missing)
    ['shard 3 of 8']
    >>> report_missing(["ignored outside a search"])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_MISSING: ContextVar[set[str] | None] = ContextVar("missing_parts", default=None)


@contextmanager
def collecting() -> Iterator[set[str]]:
    """A set that gathers the parts of the corpus missing from the search inside it."""
    missing: set[str] = set()
    token = _MISSING.set(missing)
    try:
        yield missing
    finally:
        _MISSING.reset(token)


def report_missing(parts: Iterable[str]) -> None:
    """Note parts of the corpus that did not answer (outside ``collecting``: nothing)."""
    record = _MISSING.get()
    if record is not None:
        record.update(parts)


class SearchResults(list):
    """The hits of one search, best first (a list), and the parts of the corpus that did not
    answer (``missing``: empty when the answer is complete).

    Example:
        >>> r = SearchResults(["hit"], missing=["shard 2 of 4"])
        >>> list(r), r.missing, r.partial
        (['hit'], ('shard 2 of 4',), True)
    """

    def __init__(self, hits=(), missing: Iterable[str] = ()):
        super().__init__(hits)
        self.missing: tuple[str, ...] = tuple(sorted(missing))

    @property
    def partial(self) -> bool:
        return bool(self.missing)


def missing_of(hits) -> tuple[str, ...]:
    """The parts missing from a search's answer (none for a plain list).

    Example:
        >>> missing_of([]), missing_of(SearchResults([], ["shard 1 of 2"]))
        ((), ('shard 1 of 2',))
    """
    return tuple(getattr(hits, "missing", ()))


def partial_message(missing: Iterable[str]) -> str:
    """The line a front end shows over a partial answer.

    Example:
        >>> partial_message(["shard 2 of 4", "shard 1 of 4"])[:58]
        'Partial results: shard 1 of 4, shard 2 of 4 of this corpus'
    """
    parts = sorted(missing)
    return (f"Partial results: {', '.join(parts)} of this corpus did not answer (no live "
            "replica); documents there are missing until it is back.")
