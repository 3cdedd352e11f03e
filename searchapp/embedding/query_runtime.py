"""One query → its vector, on the fastest exact path this machine has, with a cache.

A search encodes one short text, where latency is framework overhead more than
arithmetic. At its first query an encoder builds its query runtime: the
candidates that are available here, each checked to give the document path's
vectors (cosine ≥ ``speed.PROBE_COSINE`` to float32 torch on
``speed.probe_texts()``, long ones included), then timed on one query in
alternating rounds; the fastest is kept, as the document path's speed path is
chosen (``searchapp/embedding/speed.py``). Candidates:

- ``torch``: the encoder itself (``SiameseEncoder.query_path``); always there,
  the fallback when another is unavailable or inexact.
- ``onnx-2``, ``onnx-2-spin``: the same float32 network as an ONNX graph run by ONNX
  Runtime on 2 threads (``onnx_graph``), whose pool sleeps between the graph's
  operators or spins there while the graph runs (``onnx-1`` on one thread, on a
  machine with one core), fed by the fast Rust tokenizer
  called directly (the same ids as the encoder's tokenizer, checked). CPU only.

The choice is not fixed at build: the load on the cores changes what is fastest
(the spinning pool wins on an idle machine or beside the app's niced embed job,
and loses to the sleeping one beside an un-niced load). ``PathChooser`` keeps
each candidate's recent times, runs the fastest by their median, and gives every
``EXPLORE``-th query to another candidate so its times stay current. A query
encoded while other searches run in the process takes the sleeping pool
(``CROWD``): threads spinning for one query would take the core another search
needs (16 API clients: 96-98 searches/s with the spinning pool, 103 without).

Recent query vectors are kept in an LRU cache (``QueryCache``) keyed by the
model's weights hash and the text, so a repeated query (paging, search-as-you-type
going back, the API's clients) costs a dictionary look-up.

Example:
    >>> runtime = QueryRuntime.build(enc, cache_dir)             # doctest: +SKIP
    >>> runtime.path, runtime.encode("reset my password").shape  # doctest: +SKIP
    ('onnx-1', (384,))
"""

from __future__ import annotations

import logging
import os
import statistics
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchapp.base.timing import StageTimes
from searchapp.embedding import speed
from searchapp.embedding.onnx_graph import OnnxQueryGraph, weights_hash
from searchapp.errors import ModelError

log = logging.getLogger(__name__)
CACHE_SIZE = 1024  # query vectors kept per model (1.5 kB each for 384 dimensions)
ROUNDS = 7  # timed rounds per candidate at build (after two warm-up calls)
WINDOW = 15  # recent times kept per candidate; the path is the lowest median of them
EXPLORE = 25  # every EXPLORE-th lone query runs another candidate (in turn) to re-time it
CROWD = "onnx-2"  # the path of a query encoded beside other searches (a pool that sleeps)
# (weights hash, threads, spin) → the process's session, shared by its runtimes
_GRAPHS: dict[tuple[str, int, bool], OnnxQueryGraph] = {}
_GRAPHS_LOCK = threading.Lock()


class QueryCache:
    """A thread-safe LRU map of (model key, text) → read-only vector.

    Example:
        >>> cache = QueryCache(2)
        >>> cache.put(("m", "a"), np.ones(2)); cache.put(("m", "b"), np.zeros(2))
        >>> cache.get(("m", "a")) is not None, cache.get(("m", "c"))
        (True, None)
        >>> cache.put(("m", "c"), np.ones(2)); cache.get(("m", "b")) is None  # b was oldest
        True
    """

    def __init__(self, size: int = CACHE_SIZE):
        self.size = size
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> np.ndarray | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is not None:
                self._items.move_to_end(key)
            return vector

    def put(self, key: tuple[str, str], vector: np.ndarray) -> None:
        vector = np.array(vector, dtype=np.float32)  # a copy the caller cannot change
        vector.flags.writeable = False
        with self._lock:
            self._items[key] = vector
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


@dataclass
class Candidate:
    """A way to encode one text: its name and its function (text, times) → vector."""

    name: str
    encode: Callable[[str, StageTimes], np.ndarray]


class PathChooser:
    """Which candidate encodes the next query: the lowest median of recent lone-query times,
    another one every ``explore``-th lone query, the ``crowd`` path beside another query.

    Only lone queries are timed: a query sharing the cores with another says nothing
    about either path.

    Example:
        >>> chooser = PathChooser({"a": [3.0], "b": [5.0]}, explore=3)
        >>> [chooser.pick(alone=True) for _ in range(3)]
        ['a', 'a', 'b']
        >>> for _ in range(15): chooser.record("a", 9.0)   # the machine got busy
        >>> chooser.best(), chooser.pick(alone=False)
        ('b', 'b')
    """

    def __init__(self, timings_ms: dict[str, list[float]], explore: int = EXPLORE,
                 window: int = WINDOW, crowd: str = CROWD):
        self._recent = {name: deque(ms[-window:], maxlen=window)
                        for name, ms in timings_ms.items()}
        self.explore = explore
        self.crowd = crowd if crowd in self._recent else None
        self._lone = 0
        self._lock = threading.Lock()

    def best(self) -> str:
        """The candidate with the lowest median of its recent times."""
        with self._lock:
            return self._best()

    def _best(self) -> str:
        return min(self._recent, key=lambda name: statistics.median(self._recent[name]))

    def pick(self, alone: bool) -> str:
        """The path of a query; ``alone``: no other query is being encoded."""
        with self._lock:
            if not alone:
                return self.crowd or self._best()
            self._lone += 1
            best, others = self._best(), sorted(set(self._recent) - {self._best()})
            if others and self._lone % self.explore == 0:
                return others[(self._lone // self.explore) % len(others)]
            return best

    def record(self, name: str, ms: float) -> None:
        """A lone query's time on ``name``."""
        with self._lock:
            self._recent[name].append(ms)

    def recent_ms(self) -> dict[str, float]:
        """Each candidate's median recent time (ms), as the choice sees it."""
        with self._lock:
            return {name: round(statistics.median(v), 3) for name, v in self._recent.items()}


class QueryRuntime:
    """The query paths of one encoder, how they are chosen (``PathChooser``), and the cache."""

    def __init__(self, chosen: Candidate, reason: str, timings_ms: dict[str, float],
                 model_key: str, cache_size: int = CACHE_SIZE,
                 candidates: tuple[Candidate, ...] = (),
                 rounds_ms: dict[str, list[float]] | None = None):
        self.candidates = candidates or (chosen,)  # every exact candidate that was timed
        self._by_name = {c.name: c for c in self.candidates}
        self.reason = reason
        self.timings_ms = timings_ms  # the build's medians
        self.model_key = model_key
        self.cache = QueryCache(cache_size)
        rounds = {c.name: list((rounds_ms or {}).get(c.name) or [timings_ms.get(c.name, 0.0)])
                  for c in self.candidates}
        self.chooser = PathChooser(rounds)
        self._encoding = 0  # queries being encoded now, to tell a lone query from a crowd
        self._encoding_lock = threading.Lock()

    @property
    def path(self) -> str:
        """The path a lone query takes now (``onnx-2-spin``, ``onnx-2``, ``torch``...)."""
        return self.chooser.best()

    def encode(self, text: str, times: StageTimes | None = None,
               use_cache: bool = True, alone: bool = True) -> np.ndarray:
        """The vector of one (cleaned) text, read-only, from the cache or a query path.

        ``alone`` False: the caller knows of other work in this process (other searches),
        so the query is encoded as one of a crowd even when no other is being encoded."""
        times = times if times is not None else StageTimes()
        key = (self.model_key, text)
        if use_cache:
            with times.stage("query-cache"):
                found = self.cache.get(key)
            if found is not None:
                return found
        vector = self._encode_on_a_path(text, times, alone)
        self.cache.put(key, vector)
        return self.cache.get(key) if use_cache else vector

    def _encode_on_a_path(self, text: str, times: StageTimes, alone: bool) -> np.ndarray:
        with self._encoding_lock:
            alone = alone and self._encoding == 0
            self._encoding += 1
        try:
            name = self.chooser.pick(alone)
            started = time.perf_counter()
            vector = self._by_name[name].encode(text, times)
            ms = (time.perf_counter() - started) * 1000
        finally:
            with self._encoding_lock:
                self._encoding -= 1
        if alone:
            self.chooser.record(name, ms)
        times.describe("encode", name)
        return vector

    @classmethod
    def build(cls, encoder, cache_dir: Path | None, torch_candidate: Candidate,
              graphs: tuple[tuple[int, bool], ...] | None = None) -> QueryRuntime:
        """Check and time the candidates for ``encoder``; keep the fastest exact one.

        ``cache_dir`` holds exported graphs (None: exported into memory, not kept).
        A candidate that cannot be built or is not exact is left out, with why in
        the reason; ``torch_candidate`` is always there.
        """
        key = weights_hash(encoder)
        candidates, notes = [torch_candidate], []
        if encoder.device.type == "cpu":
            try:
                candidates += _onnx_candidates(encoder, cache_dir, key,
                                               graphs or graph_specs(os.cpu_count() or 1))
            except ModelError as exc:
                notes.append(str(exc))
                log.warning("Query path: %s", exc)
        rounds = _time_candidates(candidates)
        timings = {name: round(statistics.median(ms), 3) for name, ms in rounds.items()}
        chosen = min(candidates, key=lambda c: timings[c.name])
        shown = ", ".join(f"{n} {ms:.1f} ms" for n, ms in sorted(timings.items(),
                                                                  key=lambda x: x[1]))
        reason = f"one query: {shown}" + "".join(f"; {n}" for n in notes)
        log.info("Query path: %s (%s)", chosen.name, reason)
        return cls(chosen, reason, timings, key, candidates=tuple(candidates),
                   rounds_ms=rounds)


def _onnx_candidates(encoder, cache_dir: Path | None, key: str,
                     specs: tuple[tuple[int, bool], ...]) -> list[Candidate]:
    """ONNX Runtime candidates, if the Rust tokenizer and the graph are exact; else ModelError."""
    tokenizer = rust_tokenizer(encoder)
    probe = speed.probe_texts()
    token_ids = [tokenizer.encode(t).ids for t in encoder._clean(probe)]
    if token_ids != encoder._token_ids(probe):
        raise ModelError("the fast tokenizer's ids differ from the encoder's on the probe "
                         "texts; queries are encoded with torch")
    graphs = [_graph(encoder, cache_dir, key, threads, spin) for threads, spin in specs]
    reference = encoder._encode_on(speed.fp32_path(encoder.speed_path), probe, None)
    passed, lowest = speed.probe_verdict(reference,
                                         np.stack([graphs[0].run(i) for i in token_ids]))
    if not passed:
        raise ModelError(f"the ONNX graph's vectors reach only cosine {lowest:.6f} to float32 "
                         f"(needed {speed.PROBE_COSINE}); queries are encoded with torch")
    return [Candidate(f"onnx-{g.threads}" + ("-spin" if g.spin else ""),
                      _onnx_encode(tokenizer, g)) for g in graphs]


def graph_specs(cores: int) -> tuple[tuple[int, bool], ...]:
    """The ONNX sessions (threads, spin) worth timing on a machine with ``cores``: two on 2
    threads, their pool sleeping or spinning between operators; on one core, one thread.

    Example:
        >>> graph_specs(2), graph_specs(1)
        (((2, False), (2, True)), ((1, False),))
    """
    return ((2, False), (2, True)) if cores >= 2 else ((1, False),)


def _graph(encoder, cache_dir: Path | None, key: str, threads: int,
           spin: bool) -> OnnxQueryGraph:
    """The process's session for these weights, threads and pool (one per process, shared)."""
    with _GRAPHS_LOCK:
        graph = _GRAPHS.get((key, threads, spin))
        if graph is None:
            graph = OnnxQueryGraph.load_or_export(encoder, cache_dir, threads, key, spin=spin)
            _GRAPHS[(key, threads, spin)] = graph
        return graph


def rust_tokenizer(encoder):
    """A ``tokenizers.Tokenizer`` of the encoder's own vocabulary and rules, truncating at
    its max length and never padding; configured once here and never changed after, so
    any number of threads may call its ``encode`` at once. ModelError if there is none.

    Example:
        >>> rust_tokenizer(enc).encode("hello world").ids      # doctest: +SKIP
        [101, 7592, 2088, 102]
    """
    backend = getattr(encoder.tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ModelError("the model has no fast (Rust) tokenizer; queries are encoded with torch")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(backend.to_str())
    tokenizer.no_padding()
    tokenizer.enable_truncation(encoder.max_seq_length)
    return tokenizer


def _onnx_encode(tokenizer, graph: OnnxQueryGraph) -> Callable[[str, StageTimes], np.ndarray]:
    def encode(text: str, times: StageTimes) -> np.ndarray:
        with times.stage("tokenize"):
            ids = tokenizer.encode(text).ids
        with times.stage("encode"):
            return graph.run(ids)
    return encode


def _time_candidates(candidates: list[Candidate]) -> dict[str, list[float]]:
    """Milliseconds of each candidate on ``speed.QUERY_PROBE`` per round, rounds alternating."""
    times = StageTimes()
    for c in candidates:  # warm-up: first calls allocate
        c.encode(speed.QUERY_PROBE, times)
        c.encode(speed.QUERY_PROBE, times)
    ms: dict[str, list[float]] = {c.name: [] for c in candidates}
    for _ in range(ROUNDS):  # alternate, so a burst of load hits all alike
        for c in candidates:
            started = time.perf_counter()
            c.encode(speed.QUERY_PROBE, times)
            ms[c.name].append((time.perf_counter() - started) * 1000)
    return ms
