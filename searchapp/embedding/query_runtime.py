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
- ``onnx-1``, ``onnx-2``: the same float32 network as an ONNX graph run by ONNX
  Runtime on 1 or 2 threads (``onnx_graph``), fed by the fast Rust tokenizer
  called directly (the same ids as the encoder's tokenizer, checked). CPU only.

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
import statistics
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchapp.embedding import speed
from searchapp.embedding.onnx_graph import OnnxQueryGraph, weights_hash
from searchapp.errors import ModelError
from searchapp.timing import StageTimes

log = logging.getLogger(__name__)
CACHE_SIZE = 1024  # query vectors kept per model (1.5 kB each for 384 dimensions)
ROUNDS = 7  # timed rounds per candidate at build (after two warm-up calls)
_GRAPHS: dict[tuple[str, int], OnnxQueryGraph] = {}  # (weights hash, threads) → shared session
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


class QueryRuntime:
    """The chosen query path of one encoder, its reason and timings, and the cache."""

    def __init__(self, chosen: Candidate, reason: str, timings_ms: dict[str, float],
                 model_key: str, cache_size: int = CACHE_SIZE,
                 candidates: tuple[Candidate, ...] = ()):
        self.chosen = chosen
        self.candidates = candidates or (chosen,)  # every exact candidate that was timed
        self.reason = reason
        self.timings_ms = timings_ms
        self.model_key = model_key
        self.cache = QueryCache(cache_size)

    @property
    def path(self) -> str:
        """The chosen candidate's name (``onnx-1``, ``onnx-2`` or ``torch``)."""
        return self.chosen.name

    def encode(self, text: str, times: StageTimes | None = None,
               use_cache: bool = True) -> np.ndarray:
        """The vector of one (cleaned) text, read-only, from the cache or the chosen path."""
        times = times if times is not None else StageTimes()
        key = (self.model_key, text)
        if use_cache:
            with times.stage("query-cache"):
                found = self.cache.get(key)
            if found is not None:
                return found
        vector = self.chosen.encode(text, times)
        times.describe("encode", self.path)
        self.cache.put(key, vector)
        return self.cache.get(key) if use_cache else vector

    @classmethod
    def build(cls, encoder, cache_dir: Path | None, torch_candidate: Candidate,
              threads: tuple[int, ...] = (1, 2)) -> QueryRuntime:
        """Check and time the candidates for ``encoder``; keep the fastest exact one.

        ``cache_dir`` holds exported graphs (None: exported into memory, not kept).
        A candidate that cannot be built or is not exact is left out, with why in
        the reason; ``torch_candidate`` is always there.
        """
        key = weights_hash(encoder)
        candidates, notes = [torch_candidate], []
        if encoder.device.type == "cpu":
            try:
                candidates += _onnx_candidates(encoder, cache_dir, key, threads)
            except ModelError as exc:
                notes.append(str(exc))
                log.warning("Query path: %s", exc)
        timings = _time_candidates(candidates)
        chosen = min(candidates, key=lambda c: timings[c.name])
        shown = ", ".join(f"{n} {ms:.1f} ms" for n, ms in sorted(timings.items(),
                                                                  key=lambda x: x[1]))
        reason = f"one query: {shown}" + "".join(f"; {n}" for n in notes)
        log.info("Query path: %s (%s)", chosen.name, reason)
        return cls(chosen, reason, timings, key, candidates=tuple(candidates))


def _onnx_candidates(encoder, cache_dir: Path | None, key: str,
                     threads: tuple[int, ...]) -> list[Candidate]:
    """ONNX Runtime candidates, if the Rust tokenizer and the graph are exact; else ModelError."""
    tokenizer = rust_tokenizer(encoder)
    probe = speed.probe_texts()
    token_ids = [tokenizer.encode(t).ids for t in encoder._clean(probe)]
    if token_ids != encoder._token_ids(probe):
        raise ModelError("the fast tokenizer's ids differ from the encoder's on the probe "
                         "texts; queries are encoded with torch")
    graphs = [_graph(encoder, cache_dir, key, n) for n in threads]
    reference = encoder._encode_on(speed.fp32_path(encoder.speed_path), probe, None)
    passed, lowest = speed.probe_verdict(reference,
                                         np.stack([graphs[0].run(i) for i in token_ids]))
    if not passed:
        raise ModelError(f"the ONNX graph's vectors reach only cosine {lowest:.6f} to float32 "
                         f"(needed {speed.PROBE_COSINE}); queries are encoded with torch")
    return [Candidate(f"onnx-{g.threads}", _onnx_encode(tokenizer, g)) for g in graphs]


def _graph(encoder, cache_dir: Path | None, key: str, threads: int) -> OnnxQueryGraph:
    """The process's session for these weights and threads (one per process, shared)."""
    with _GRAPHS_LOCK:
        graph = _GRAPHS.get((key, threads))
        if graph is None:
            graph = OnnxQueryGraph.load_or_export(encoder, cache_dir, threads, key)
            _GRAPHS[(key, threads)] = graph
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


def _time_candidates(candidates: list[Candidate]) -> dict[str, float]:
    """Median milliseconds of each candidate on ``speed.QUERY_PROBE``, rounds alternating."""
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
    return {name: round(statistics.median(v), 3) for name, v in ms.items()}
