"""A query fanned out to one live replica of every shard, the answers merged as one index's.

``ShardSet`` holds, for each shard, its replicas (anything with ``name`` and
``call(method, args, timeout)``: a Ray actor in ``ray_shards``, a shard in this
process in ``LocalReplica``). A query goes to all shards at once (one thread per
shard); each shard is asked at one replica, taken in turn so replicas share the
load, and a replica that fails or does not answer within ``timeout`` is passed
over for the next, and skipped for ``SUSPECT_SECONDS`` after. A shard none of
whose replicas answers is reported (``searchapp.search.coverage``): the answer
is marked partial with the shard named, never silently short.

Merging: each shard returns its top n by the same scoring as the single index
(``searchapp.search.nearest``); a document's score does not depend on the other
documents of its shard, so the n best of the union are the single index's n best
(up to each index's own approximation).

Example:
    >>> from searchapp.search.nearest import Candidate
    >>> class Fixed:
    ...     def __init__(self, name, found): self.name, self.found = name, found
    ...     def call(self, method, args, timeout):
    ...         return self.found if method == "nearest" else len(self.found)
    >>> shards = ShardSet([[Fixed("a", [Candidate(1, 0.9), Candidate(3, 0.2)])],
    ...                    [Fixed("b", [Candidate(2, 0.5)])]], ["shard 1 of 2", "shard 2 of 2"])
    >>> [c.doc for c in shards.nearest(np.zeros(2, np.float32), 2, 0.5)], shards.count
    ([1, 2], 3)
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from searchapp.search.coverage import report_missing
from searchapp.search.nearest import Candidate

log = logging.getLogger(__name__)
TIMEOUT_SECONDS = 5.0  # a replica that takes longer is passed over for the next one
SUSPECT_SECONDS = 5.0  # a replica that failed is asked last for this long
COUNT_SECONDS = 1.0  # the shards' sizes are asked again after this long


class ReplicaUnavailable(Exception):
    """A replica that could not answer (dead, restarting, too slow): try another."""


class Replica(Protocol):
    name: str

    def call(self, method: str, args: tuple, timeout: float) -> Any:
        """The result of ``method(*args)`` on the replica; ReplicaUnavailable if it cannot."""


class ShardSet:
    """The shards of one corpus (``replicas[shard]``), asked in parallel; see the module."""

    def __init__(self, replicas: Sequence[Sequence[Replica]], labels: Sequence[str],
                 timeout: float = TIMEOUT_SECONDS):
        self.replicas = [list(r) for r in replicas]
        self.labels = list(labels)
        self.timeout = timeout
        self._turns = [itertools.count() for _ in self.replicas]
        self._suspect: dict[str, float] = {}  # replica name -> until (monotonic)
        self._count: tuple[float, int] | None = None
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.replicas)),
                                        thread_name_prefix="shard-fanout")

    # ---- what search asks (``vectors.handle.ShardedVectors``) --------------------
    def nearest(self, vector: np.ndarray, n: int, weight: float) -> list[Candidate]:
        """The ``n`` best documents of all shards, best first."""
        return _merged(self.ask("nearest", (np.asarray(vector, np.float32), n, weight)), n)

    def neighbours(self, vector: np.ndarray, n: int) -> list[Candidate]:
        """The ``n`` documents of all shards nearest ``vector`` by their own vector, best
        first (``Shard.neighbours``)."""
        return _merged(self.ask("neighbours", (np.asarray(vector, np.float32), n)), n)

    def lexical(self, query: str, n: int, stem_languages: Sequence[str] = ()
                ) -> list[tuple[int, float]] | None:
        """The ``n`` best (document id, BM25 score) of all shards' full text, best first,
        scored with the statistics of the whole corpus (``shard_words.merged``); None when
        the shards were served without it (then the database's full text).
        ``stem_languages``: the corpus' languages whose stems are searched too."""
        from searchapp.search.shards.shard_words import merged

        answers = self.ask("lexical", (query, n, tuple(stem_languages)))
        if any(a is not None and not a[0] for a in answers):
            return None
        return merged([a[1] for a in answers if a is not None], n)

    def score(self, vector: np.ndarray, docs: Iterable[int], weight: float
              ) -> dict[int, Candidate]:
        """Exact scores of ``docs``, each asked of the shards (a shard skips ids not its own)."""
        docs = [int(d) for d in docs]
        found: dict[int, Candidate] = {}
        for part in self.ask("score", (np.asarray(vector, np.float32), docs, weight)):
            found.update(part or {})
        return found

    @property
    def count(self) -> int:
        """The documents the shards hold (asked at most once a ``COUNT_SECONDS``)."""
        with self._lock:
            kept = self._count
        if kept is not None and time.monotonic() - kept[0] < COUNT_SECONDS:
            return kept[1]
        total = sum(c or 0 for c in self.ask("count", ()))
        with self._lock:
            self._count = (time.monotonic(), total)
        return total

    # ---- the fan-out ------------------------------------------------------------------
    def ask(self, method: str, args: tuple) -> list[Any]:
        """``method(*args)`` of one replica of every shard, in shard order (None where no
        replica answered; those shards are reported missing)."""
        try:
            futures = [self._pool.submit(self._ask_shard, s, method, args)
                       for s in range(len(self.replicas))]
            answers = [f.result() for f in futures]
        except RuntimeError:  # closed (the layout changed) while this query ran: one by one
            answers = [self._ask_shard(s, method, args) for s in range(len(self.replicas))]
        missing = [self.labels[s] for s, a in enumerate(answers) if a is _MISSING]
        if missing:
            report_missing(missing)
        return [None if a is _MISSING else a for a in answers]

    def _ask_shard(self, shard: int, method: str, args: tuple) -> Any:
        for replica in self._order(shard):
            try:
                return replica.call(method, args, self.timeout)
            except ReplicaUnavailable as exc:
                log.warning("%s (%s) did not answer: %s", self.labels[shard], replica.name, exc)
                with self._lock:
                    self._suspect[replica.name] = time.monotonic() + SUSPECT_SECONDS
        return _MISSING

    def _order(self, shard: int) -> list[Replica]:
        """The shard's replicas from the next one in turn, those that failed lately last."""
        replicas = self.replicas[shard]
        if not replicas:
            return []
        start = next(self._turns[shard]) % len(replicas)
        turn = replicas[start:] + replicas[:start]
        now = time.monotonic()
        with self._lock:
            return sorted(turn, key=lambda r: self._suspect.get(r.name, 0.0) > now)

    def close(self) -> None:
        self._pool.shutdown(wait=False)


_MISSING = object()


def _merged(answers: list[list[Candidate] | None], n: int) -> list[Candidate]:
    """The top ``n`` of the shards' answers (each best first; None: a missing shard)."""
    merged = [c for found in answers if found for c in found]
    return sorted(merged, key=lambda c: (-c.score, c.doc))[:n]


class LocalReplica:
    """A shard served in this process (tests, and one machine's shards without Ray).

    ``down`` makes it answer as a dead replica does.
    """

    def __init__(self, shard, name: str):
        self.shard, self.name, self.down = shard, name, False

    def call(self, method: str, args: tuple, timeout: float) -> Any:
        if self.down:
            raise ReplicaUnavailable("stopped")
        if method == "count":
            return self.shard.index.count
        return getattr(self.shard, method)(*args)
