"""A shard's vectors kept compressed: 8-bit scalar quantization or product quantization (faiss).

``make_index(kind, dim)`` gives the index a shard holds, with the interface of
``VectorIndex`` that the shard server uses (add with replacement, delete,
search, vectors, vectors_of, labels, count, memory_bytes):

- ``"float32"``: the app's own hnswlib ``VectorIndex`` (dim*4 bytes a vector plus its graph);
- ``"sq8"``: faiss ``IndexIVFScalarQuantizer`` (8 bits a dimension, residuals to the
  list's centroid): dim + 8 bytes a vector, about 4x less than float32;
- ``"pq"``: faiss ``IndexIVFPQ`` (``pq_m`` codes of 8 bits, residuals): pq_m + 8 bytes a
  vector; its top ``rerank * k`` candidates are scored again on full vectors from
  ``full_vectors(labels) -> (labels, matrix)`` when given (the shard reads the
  ``embeddings`` table), so the scores returned for them are exact.

Why IVF and not HNSW over the codes: faiss's HNSW indexes cannot remove a vector
(a deleted or replaced passage would stay until a rebuild), IVF's ``remove_ids``
does, so replacing a label is remove + add and a deleted label is never returned.
``benchmarks/shards.py --compare-sq8`` measures the two on one shard of 200,000 clustered
384-d vectors: HNSW-SQ8 recall@10 0.986 at 0.35 ms p50, built in 66 s; IVF-SQ8 0.960 at
0.83 ms, built in 1.7 s. HNSW searches better; a shard kept current from the database
needs removal more (tombstones over HNSW would grow with every re-embedded passage).

The coarse centroids and codebooks are trained once, on the first vectors added
(all those of the add that brings the index to ``train_at`` vectors, at most
``TRAIN_MAX``); until then the vectors are held as float32 and searched exactly,
so a small corpus works (at 100,000 x 384 that is 150 MB). Later adds are encoded with
the trained codes. faiss runs on ``threads`` threads (1 unless told otherwise).

Example:
    >>> import numpy as np
    >>> idx = make_index("sq8", dim=2)
    >>> idx.add(np.array([7, 8]), np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    >>> idx.search(np.array([[0.9, 0.1]], dtype=np.float32), k=5)[0].tolist()
    [[7, 8]]
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from searchapp.base.shard_layout import COMPRESSIONS
from searchapp.errors import ConfigError, InvalidParameterError
from searchapp.vectors.index import VectorIndex

KINDS = COMPRESSIONS  # the kinds a shard may keep its vectors as
FAISS_PIN = "faiss-cpu==1.15.1"
TRAIN_AT = 10_000  # vectors held (float32, exact search) before the codes are trained
# (the lists are as many as the training set allows: trained on a shard server's first
# chunk of 20,000, 512 lists; at 1M vectors 1/8 of them hold only 80% of the true top 10,
# recall@10 0.80 at 2.4 ms; trained on 100,000, 2,564 lists: sq8 0.955, pq 0.965 at 2.6-3.9
# ms; benchmarks/results/shards_1000000*.json. So an index that has grown ``OUTGROWN``
# times past its training set is rebuilt by its shard, trained anew: ``outgrown``.)
OUTGROWN = 8
TRAIN_MAX = 100_000  # at most this many of them train the centroids and codebooks
POINTS_PER_LIST = 39  # faiss's k-means wants at least 39 training points per centroid
NLIST_MAX = 4_096
PROBE_SHARE = 1 / 8  # lists a query scans (benchmarks/shards.py, 200k x 384, nlist 512:
# recall@10 sq8 0.934 / 0.958 / 0.975 / 0.983 at 1/16, 1/8, 1/4, 1/2; pq re-ranked 0.948 /
# 0.971 / 0.989 / 0.998; latency about linear: 0.4 / 0.8 / 1.5 / 2.9 ms)
NPROBE_MIN = 16
RERANK = 10  # pq: candidates re-scored on full vectors = RERANK * k (4: recall 0.908 at
# 1/8 of the lists, 10: 0.971, for 0.04 ms more)
PQ_M = 48  # pq: sub-quantizers of 8 bits (384 / 48 = 8 dimensions each). At 200k x 384,
# one shard: m=48 recall@10 0.528 by codes alone, 0.971 re-ranked, 0.60 ms, built in 4.3 s;
# m=64 0.598 and 0.971, 0.78 ms, 36.8 s, 26% more memory
PQ_CENTROIDS = 256  # 8 bits
SQ_MARGIN = 0.05  # sq8: each dimension's trained range widened by this share at both ends
# (a later vector outside it is clipped: 0.35 error at 0 after 300 training vectors, 0.05 at
# 0.2; at 200k, a quarter of the lists scanned: recall@10 0.977 at 0 and 0.05, 0.975 at 0.2)

FullVectors = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class CompressedParams:
    """How a compressed index is trained and searched (the defaults are the measured ones)."""

    train_at: int = TRAIN_AT
    pq_m: int = PQ_M
    rerank: int = RERANK
    nprobe_min: int = NPROBE_MIN
    probe_share: float = PROBE_SHARE
    threads: int = 1


def load_faiss(threads: int = 1):
    """faiss, imported on first use, running on ``threads`` threads.

    Example:
        >>> load_faiss().__name__
        'faiss'
    """
    try:
        import faiss
    except ImportError as exc:
        raise ConfigError(f"Compressed shard vectors need faiss: pip install {FAISS_PIN}") from exc
    faiss.omp_set_num_threads(threads)
    return faiss


def make_index(kind: str, dim: int, full_vectors: FullVectors | None = None,
               params: CompressedParams | None = None):
    """The index of one shard's vectors: kind is ``float32``, ``sq8`` or ``pq``.

    Example:
        >>> type(make_index("float32", 4)).__name__, type(make_index("pq", 4)).__name__
        ('VectorIndex', 'CompressedIndex')
    """
    if kind not in KINDS:
        raise InvalidParameterError(f"Unknown vector compression {kind!r}; use one of "
                                    f"{', '.join(KINDS)}.")
    if kind == "float32":
        return VectorIndex(dim)
    return CompressedIndex(kind, dim, full_vectors, params or CompressedParams())


def sub_quantizers(dim: int, wanted: int) -> int:
    """PQ's sub-quantizer count: the largest divisor of ``dim`` up to ``wanted``.

    Example:
        >>> sub_quantizers(384, 48), sub_quantizers(10, 48), sub_quantizers(7, 4)
        (48, 10, 1)
    """
    return max(m for m in range(1, min(wanted, dim) + 1) if dim % m == 0)


class CompressedIndex:
    """Vectors in faiss IVF codes (sq8 or pq), float32 and exact until trained."""

    def __init__(self, kind: str, dim: int, full_vectors: FullVectors | None = None,
                 params: CompressedParams | None = None):
        self.kind, self.dim, self.full_vectors = kind, dim, full_vectors
        self.params = params or CompressedParams()
        self.pq_m = sub_quantizers(dim, self.params.pq_m)
        self._faiss = load_faiss(self.params.threads)
        self._ivf = None  # the trained faiss index, None while the vectors are held raw
        self._raw: dict[int, np.ndarray] = {}  # label -> float32 vector, until trained
        self._raw_matrix: tuple[np.ndarray, np.ndarray] | None = None  # (ids, matrix) cache
        self._expected = 0  # vectors a build is about to add (``expect``)
        self._lock = threading.RLock()

    # ---- size and contents ---------------------------------------------------
    @property
    def trained(self) -> bool:
        return self._ivf is not None

    @property
    def outgrown(self) -> bool:
        """Whether training again on the vectors held now would give it more lists: it holds
        ``OUTGROWN`` times the vectors it was trained on, and those were fewer than
        ``TRAIN_MAX`` (its owner rebuilds it then; ``shard.Shard.catch_up``).

        Example:
            >>> import numpy as np
            >>> idx = CompressedIndex("sq8", 2, params=CompressedParams(train_at=300))
            >>> idx.add(np.arange(300), np.random.default_rng(0).random((300, 2), np.float32))
            >>> idx.outgrown
            False
            >>> idx.add(np.arange(300, 2400), np.random.default_rng(1).random((2100, 2),
            ...                                                              np.float32))
            >>> idx.outgrown
            True
        """
        trained_on = getattr(self, "trained_on", 0)
        return (self.trained and trained_on < TRAIN_MAX
                and self._ivf.ntotal >= OUTGROWN * trained_on)

    @property
    def count(self) -> int:
        """Vectors held."""
        return int(self._ivf.ntotal) if self.trained else len(self._raw)

    def labels(self) -> np.ndarray:
        """Labels held, sorted (int64)."""
        with self._lock:
            if not self.trained:
                return np.sort(np.fromiter(self._raw, dtype=np.int64, count=len(self._raw)))
            return np.sort(np.concatenate([ids for _, ids in self._lists()] or
                                          [np.zeros(0, np.int64)]))

    def memory_bytes(self) -> int:
        """Bytes the index holds: codes + ids in the lists, centroids and codebooks.

        Trained: count * (code_size + 8) + nlist * dim * 4 + the quantizer's tables
        (sq8: 2 * dim * 4; pq: 256 * dim * 4). Untrained: count * (dim * 4 + 8).
        """
        if not self.trained:
            return self.count * (self.dim * 4 + 8)
        ivf = self._ivf
        tables = 2 * self.dim * 4 if self.kind == "sq8" else PQ_CENTROIDS * self.dim * 4
        return self.count * (ivf.code_size + 8) + ivf.nlist * self.dim * 4 + tables

    def vectors(self, labels: np.ndarray) -> np.ndarray:
        """Vectors of labels (n, dim) float32, decoded from their codes; KeyError if absent."""
        found, matrix = self.vectors_of(labels)
        if len(found) != len(labels):
            missing = sorted(set(np.asarray(labels).tolist()) - set(found.tolist()))
            raise KeyError(f"labels not in the index: {missing[:5]}")
        return matrix

    def vectors_of(self, labels) -> tuple[np.ndarray, np.ndarray]:
        """(labels found (m,), their decoded vectors (m, dim)): absent labels are skipped."""
        labels = np.asarray(labels, dtype=np.int64)
        with self._lock:
            if not self.trained:
                found = np.asarray([x for x in labels.tolist() if x in self._raw], np.int64)
                matrix = np.asarray([self._raw[x] for x in found.tolist()], np.float32)
                return found, matrix.reshape(len(found), self.dim)
            places = self._places(labels)
            found = np.asarray([x for x in labels.tolist() if x in places], np.int64)
            matrix = np.empty((len(found), self.dim), np.float32)
            for row, label in enumerate(found.tolist()):
                self._ivf.reconstruct_from_offset(*places[label], self._faiss.swig_ptr(matrix[row]))
            return found, matrix

    # ---- changes ---------------------------------------------------------------
    def add(self, labels: np.ndarray, vectors: np.ndarray) -> None:
        """Add or replace vectors (n, dim); the add reaching ``train_at`` vectors trains."""
        labels, vectors = self._checked(labels, vectors)
        if len(labels) == 0:
            return
        with self._lock:
            if self.trained:
                self._ivf.remove_ids(self._faiss.IDSelectorBatch(labels))
                self._ivf.add_with_ids(vectors, labels)
                return
            self._raw.update(zip(labels.tolist(), vectors, strict=True))
            self._raw_matrix = None
            if len(self._raw) >= self._train_at():
                self._train()

    def delete(self, labels: np.ndarray) -> None:
        """Remove labels; unknown ones are ignored."""
        labels = np.asarray(labels, dtype=np.int64)
        with self._lock:
            if not self.trained:
                for label in labels.tolist():
                    self._raw.pop(label, None)
                self._raw_matrix = None
            elif len(labels):
                self._ivf.remove_ids(self._faiss.IDSelectorBatch(labels))

    # ---- queries ---------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels and inner-product scores per query (q, dim), best first; k clamped.

        pq with ``full_vectors``: the ``rerank * k`` best by their codes are scored on
        their full vectors (a candidate ``full_vectors`` does not return keeps its code
        score).
        """
        if k < 1:
            raise InvalidParameterError(f"k must be at least 1; got {k}.")
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        with self._lock:
            k = min(k, self.count)
            if k == 0:
                empty = np.zeros((len(queries), 0))
                return empty.astype(np.int64), empty.astype(np.float32)
            if not self.trained:
                return self._exact(queries, k)
            if self.kind == "pq" and self.full_vectors is not None:
                wide = min(self.params.rerank * k, self.count)
                return self._rerank(queries, *self._ivf_search(queries, wide), k)
            return self._ivf_search(queries, k)

    # ---- inside --------------------------------------------------------------
    def _checked(self, labels, vectors) -> tuple[np.ndarray, np.ndarray]:
        """Labels (int64) and vectors (float32, C order), the last of a repeated label kept."""
        labels = np.asarray(labels, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(labels), self.dim):
            raise InvalidParameterError(
                f"Expected vectors of shape ({len(labels)}, {self.dim}); got {vectors.shape}.")
        _, last = np.unique(labels[::-1], return_index=True)
        if len(last) == len(labels):
            return labels, vectors
        keep = np.sort(len(labels) - 1 - last)
        return labels[keep], np.ascontiguousarray(vectors[keep])

    def expect(self, count: int) -> None:
        """A build is about to add ``count`` vectors: the codes wait for ``min(count,
        TRAIN_MAX)`` of them before training, so a shard built from the database is trained
        on as many as it may be (not on its first chunk, with few lists: recall@10 0.80 at
        1 M vectors trained on 20,000 against 0.955 on 100,000). Fewer arriving (documents
        deleted while the build reads) leave it exact over the raw vectors until the next add.

        Example:
            >>> import numpy as np
            >>> idx = CompressedIndex("sq8", 2, params=CompressedParams(train_at=300))
            >>> idx.expect(1000)
            >>> idx.add(np.arange(600), np.random.default_rng(0).random((600, 2), np.float32))
            >>> idx.trained
            False
            >>> idx.add(np.arange(600, 1000), np.random.default_rng(1).random((400, 2),
            ...                                                               np.float32))
            >>> idx.trained, idx.trained_on
            (True, 1000)
        """
        if not self.trained:
            self._expected = int(count)

    def _train_at(self) -> int:
        """Vectors that start the training: at least ``train_at`` (pq's 256 centroids per
        sub-quantizer need 256), or what a build said to expect, up to ``TRAIN_MAX``."""
        floor = max(self.params.train_at, PQ_CENTROIDS if self.kind == "pq" else 1)
        return max(floor, min(self._expected, TRAIN_MAX))

    def _train(self) -> None:
        """Train the IVF index on the held vectors (at most TRAIN_MAX), then encode them all."""
        labels = np.fromiter(self._raw, dtype=np.int64, count=len(self._raw))
        matrix = np.asarray(list(self._raw.values()), dtype=np.float32)
        sample = matrix[:TRAIN_MAX]
        nlist = int(np.clip(len(sample) // POINTS_PER_LIST, 1, NLIST_MAX))
        quantizer = self._faiss.IndexFlatIP(self.dim)
        metric = self._faiss.METRIC_INNER_PRODUCT
        if self.kind == "sq8":
            ivf = self._faiss.IndexIVFScalarQuantizer(
                quantizer, self.dim, nlist, self._faiss.ScalarQuantizer.QT_8bit, metric)
            ivf.sq.rangestat_arg = SQ_MARGIN  # RS_minmax widened: later vectors not clipped
        else:
            ivf = self._faiss.IndexIVFPQ(quantizer, self.dim, nlist, self.pq_m, 8, metric)
        ivf.cp.min_points_per_centroid = 1  # small training sets: no warning, still trained
        ivf.train(sample)
        ivf.add_with_ids(matrix, labels)
        self._ivf, self._quantizer, self._raw, self._raw_matrix = ivf, quantizer, {}, None
        self.trained_on = len(sample)

    def _nprobe(self) -> int:
        """Lists a query scans: ``probe_share`` of them, at least ``nprobe_min``.

        A share rather than a count of codes: recall follows the share of the corpus
        scanned, so it holds as a shard grows past its training set (latency grows
        with it: a shard trained on few vectors has few, long lists).
        """
        share = int(np.ceil(self._ivf.nlist * self.params.probe_share))
        wanted = max(self.params.nprobe_min, share)
        return min(wanted, self._ivf.nlist)

    def _ivf_search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """faiss's search; rows that found fewer than k (-1 labels) are searched again
        over every list, so each row has k labels."""
        self._ivf.nprobe = self._nprobe()
        scores, labels = self._ivf.search(queries, k)
        short = (labels < 0).any(axis=1)
        if short.any():
            self._ivf.nprobe = self._ivf.nlist
            scores[short], labels[short] = self._ivf.search(queries[short], k)
        return labels.astype(np.int64), scores.astype(np.float32)

    def _rerank(self, queries: np.ndarray, labels: np.ndarray, scores: np.ndarray,
                k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best of the candidates once scored on their full vectors."""
        wanted = np.unique(labels)
        found, matrix = self.full_vectors(wanted)
        exact = scores.copy()
        if len(found):
            rows = {label: i for i, label in enumerate(np.asarray(found).tolist())}
            matrix = np.asarray(matrix, dtype=np.float32)
            for q in range(len(queries)):
                hit = [(j, rows[x]) for j, x in enumerate(labels[q].tolist()) if x in rows]
                cols, idx = (np.asarray(v, np.int64) for v in zip(*hit, strict=True)) \
                    if hit else (np.zeros(0, np.int64),) * 2
                exact[q, cols] = matrix[idx] @ queries[q]
        order = np.argsort(-exact, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(labels, order, 1), np.take_along_axis(exact, order, 1)

    def _exact(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top k over the held float32 vectors (before training)."""
        if self._raw_matrix is None:
            self._raw_matrix = (np.fromiter(self._raw, dtype=np.int64, count=len(self._raw)),
                                np.asarray(list(self._raw.values()), np.float32))
        ids, matrix = self._raw_matrix
        scores = queries @ matrix.T
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return ids[top], np.take_along_axis(scores, top, 1).astype(np.float32)

    def _lists(self):
        """(list number, ids (n,) int64) of every non-empty inverted list."""
        invlists = self._ivf.invlists
        for list_no in range(self._ivf.nlist):
            size = invlists.list_size(list_no)
            if size:
                ids = self._faiss.rev_swig_ptr(invlists.get_ids(list_no), size)
                yield list_no, np.array(ids, dtype=np.int64)

    def _places(self, labels: np.ndarray) -> dict[int, tuple[int, int]]:
        """label -> (list number, offset) for the wanted labels that are held."""
        wanted = set(labels.tolist())
        places = {}
        for list_no, ids in self._lists():
            for offset in np.flatnonzero(np.isin(ids, labels)).tolist():
                label = int(ids[offset])
                if label in wanted:
                    places[label] = (list_no, offset)
        return places
