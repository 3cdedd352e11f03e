"""The vector index over one (corpus, model): hnswlib, inner product on unit vectors.

Labels are document primary keys. The index is a cache derived from the
embeddings in the database (see ``searchapp.vectors.index_cache``, which keeps it at the
corpus' generation).

Files: ``DATA_DIR/indexes/c{corpus}-m{model}.hnsw`` plus ``.json`` metadata
(format version, model, dimension, count, M, ef_construction, deleted labels,
the generation it reflects, the file's size and CRC-32), each written to a
temporary name and renamed into place. A lock file beside them (``flock``)
makes the pair change together: two processes saving the same index never
leave one's metadata beside the other's graph, and a reader never sees half of
a save. The CRC-32 is checked on every load (about 0.4 s per GB): a file
damaged inside, or another index of the same size copied over it, is refused,
never served.

Below ``EXACT_MAX`` live vectors, search is exact (a matrix product over the
stored vectors) rather than approximate.

Example:
    >>> import numpy as np
    >>> idx = VectorIndex(dim=2)
    >>> idx.add(np.array([7, 8]), np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    >>> labels, scores = idx.search(np.array([[0.9, 0.1]], dtype=np.float32), k=5)
    >>> labels.tolist(), len(scores[0])
    ([[7, 8]], 2)
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import hnswlib
import numpy as np

from searchapp.base.private_files import open_private_file
from searchapp.errors import IndexCorruptError, InvalidParameterError

FORMAT_VERSION = 2  # 2: the metadata carries the file's CRC-32
CHUNK = 1 << 24  # bytes read at a time for the checksum
EXACT_MAX = 5_000
DEFAULT_M = 16
LABEL_MAP_BYTES = 40  # hnswlib's label -> slot map, per entry (libstdc++ node + bucket)
VECTORS_CHUNK = 10_000  # labels per hnswlib get_items call (see VectorIndex.vectors)
DEFAULT_EF_CONSTRUCTION = 100  # as good as 200 here, half the build (hnsw_params.json)
# ef_search by index size: recall@10 falls as the graph grows (clustered 384-d vectors:
# 0.960 at ef 128 and 1M, 0.981 at 192, 0.990 at 256 for 1.3 ms; 1.000 at 128 and 200k).
EF_SEARCH_STEPS = ((250_000, 128), (2_000_000, 256))
EF_SEARCH_LARGEST = 384


@dataclass(frozen=True)
class IndexParams:
    M: int = DEFAULT_M
    ef_construction: int = DEFAULT_EF_CONSTRUCTION
    ef_search: int | None = None  # None: by the index size (``ef_search_for``)


def ef_search_for(count: int) -> int:
    """The search breadth for an index of ``count`` vectors (see EF_SEARCH_STEPS).

    Example:
        >>> ef_search_for(10_000), ef_search_for(1_000_000), ef_search_for(5_000_000)
        (128, 256, 384)
    """
    return next((ef for limit, ef in EF_SEARCH_STEPS if count <= limit), EF_SEARCH_LARGEST)


def scores_against(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Dot products of the rows of ``matrix`` (n, dim) with one ``vector`` (dim,): (n,).

    Computed on the calling thread (``np.einsum``), not by the BLAS thread pool: for
    one query the product is a fraction of a millisecond of work, and waking
    OpenBLAS's threads on a busy 2-core machine took 12-16 ms for 1,539 rows
    (einsum: 0.16 ms; 20,000 rows 4.6 ms against matmul's 9.9).

    Example:
        >>> scores_against(np.eye(2, dtype=np.float32), np.array([0.5, 2.0], np.float32))
        array([0.5, 2. ], dtype=float32)
    """
    return np.einsum("ij,j->i", matrix, vector)


class VectorIndex:
    """hnswlib index with deletions tracked, k clamped, and exact search when small."""

    def __init__(self, dim: int, params: IndexParams | None = None, capacity: int = 1024,
                 _empty: bool = True):
        self.dim = dim
        self.params = params or IndexParams()
        self._hnsw = hnswlib.Index(space="ip", dim=dim)
        if _empty:  # load() fills it from a file instead
            self._hnsw.init_index(max_elements=max(capacity, 16),
                                  ef_construction=self.params.ef_construction, M=self.params.M)
        self._deleted: set[int] = set()
        self._exact: tuple[np.ndarray, np.ndarray] | None = None  # (labels, matrix) cache
        self._lock = threading.RLock()  # hnswlib forbids add/search at the same time
        self.meta: dict = {}  # what the file it was loaded from said (empty when built here)

    # ---- size and contents ---------------------------------------------------
    @property
    def count(self) -> int:
        """Live (not deleted) vectors."""
        return self._hnsw.element_count - len(self._deleted)

    def labels(self) -> np.ndarray:
        """Live labels, sorted (int64)."""
        ids = np.asarray(self._hnsw.get_ids_list(), dtype=np.int64)
        if self._deleted:
            ids = ids[~np.isin(ids, np.fromiter(self._deleted, dtype=np.int64))]
        return np.sort(ids)

    def memory_bytes(self) -> int:
        """Bytes the hnswlib index holds (its own layout, hnswalg.h), capacity included.

        capacity * (dim*4 + (2M+1)*4 + 8)   level 0: vector, 2M links + their count, label
        + count * (8 + 4)                   a pointer to upper links and a level per element
        + count * (M+1)*4 / (M-1)           upper levels: an element is on level l w.p. M^-l
        + count * LABEL_MAP_BYTES           the label lookup (a std::unordered_map node, ~40)

        Example:
            >>> VectorIndex(dim=4, capacity=16).memory_bytes()
            2496
        """
        m, count = self.params.M, self._hnsw.element_count
        level0 = self._hnsw.get_max_elements() * (self.dim * 4 + (2 * m + 1) * 4 + 8)
        upper = count * (12 + (m + 1) * 4 / (m - 1) + LABEL_MAP_BYTES)
        return int(level0 + upper)

    def vectors(self, labels: np.ndarray) -> np.ndarray:
        """Stored vectors for labels, (n, dim) float32.

        Fetched in chunks into one array: hnswlib's ``get_items`` builds nested
        C++ vectors before it makes the array, which for a million labels at once
        peaked at 20 GB (and left 7 GB of fragmented heap behind).
        """
        out = np.empty((len(labels), self.dim), dtype=np.float32)
        for start in range(0, len(labels), VECTORS_CHUNK):
            part = labels[start:start + VECTORS_CHUNK]
            out[start:start + len(part)] = self._hnsw.get_items(np.asarray(part).tolist())
        return out

    # ---- changes ---------------------------------------------------------------
    def add(self, labels: np.ndarray, vectors: np.ndarray) -> None:
        """Add or replace vectors (n, dim); grows the index first when needed."""
        if len(labels) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(labels), self.dim):
            raise InvalidParameterError(
                f"Expected vectors of shape ({len(labels)}, {self.dim}); got {vectors.shape}.")
        with self._lock:
            revived = [int(x) for x in labels if int(x) in self._deleted]
            for label in revived:
                self._hnsw.unmark_deleted(label)
                self._deleted.discard(label)
            needed = self._hnsw.element_count + len(labels)
            if needed > self._hnsw.get_max_elements():
                self._hnsw.resize_index(max(needed, 2 * self._hnsw.get_max_elements()))
            self._hnsw.add_items(vectors, np.asarray(labels, dtype=np.int64))
            self._exact = None

    def reserve(self, capacity: int) -> None:
        """Make room for ``capacity`` vectors at once: a build whose size is known does not
        grow by doubling, which can leave up to half of the index' memory unused.

        Example:
            >>> idx = VectorIndex(dim=2); idx.reserve(5000); idx._hnsw.get_max_elements()
            5000
        """
        with self._lock:
            if capacity > self._hnsw.get_max_elements():
                self._hnsw.resize_index(int(capacity))

    def delete(self, labels: np.ndarray) -> None:
        """Mark labels deleted; unknown or already deleted labels are ignored.

        Costs O(len(labels)), not O(count): hnswlib looks each label up itself.
        """
        with self._lock:
            for label in (int(x) for x in labels):
                if label in self._deleted:
                    continue
                try:
                    self._hnsw.mark_deleted(label)
                except RuntimeError:  # "Label not found": never added
                    continue
                self._deleted.add(label)
            self._exact = None

    # ---- queries ---------------------------------------------------------------
    @property
    def ef_search(self) -> int:
        return self.params.ef_search or ef_search_for(self.count)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels and cosine scores for each query (q, dim); k clamped to the count.

        Returns (labels (q, k'), scores (q, k')) with k' = min(k, count), best first.
        """
        if k < 1:
            raise InvalidParameterError(f"k must be at least 1; got {k}.")
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        k = min(k, self.count)
        if k == 0:
            empty = np.zeros((len(queries), 0))
            return empty.astype(np.int64), empty.astype(np.float32)
        with self._lock:
            if self.count <= EXACT_MAX:
                return self._exact_search(queries, k)
            self._hnsw.set_ef(max(self.ef_search, k))
            labels, distances = self._hnsw.knn_query(queries, k=k)
        return labels.astype(np.int64), (1.0 - distances).astype(np.float32)

    def search_accepting(self, query: np.ndarray, k: int, accept) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels and scores for one query (dim,) among labels where ``accept(label)``.

        hnswlib skips refused labels inside its graph search, so k results come
        back whenever k accepted labels exist (exact search below ``EXACT_MAX``).
        """
        query = np.asarray(query, dtype=np.float32)[None, :]
        k = min(k, self.count)
        if k == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        with self._lock:
            if self.count <= EXACT_MAX:
                labels, scores = self._exact_search(query, self.count)
                keep = [i for i, label in enumerate(labels[0]) if accept(int(label))][:k]
                return labels[0][keep], scores[0][keep]
            self._hnsw.set_ef(max(self.ef_search, k))
            while True:
                try:
                    labels, distances = self._hnsw.knn_query(query, k=k, filter=accept)
                    break
                except RuntimeError:  # it found fewer than k accepted labels: ask for fewer
                    if k == 1:
                        return np.zeros(0, np.int64), np.zeros(0, np.float32)
                    k //= 2
        return labels[0].astype(np.int64), (1.0 - distances[0]).astype(np.float32)

    def vectors_of(self, labels) -> tuple[np.ndarray, np.ndarray]:
        """(labels found (m,), their vectors (m, dim)): labels not in the index are skipped."""
        labels = np.asarray(labels, dtype=np.int64)
        try:
            return labels, self.vectors(labels)
        except RuntimeError:  # some label is not (or no longer) here: keep the others
            found = []
            for label in labels.tolist():
                try:
                    found.append((label, self._hnsw.get_items([label])[0]))
                except RuntimeError:
                    continue
            if not found:
                return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
            return (np.asarray([f[0] for f in found], np.int64),
                    np.asarray([f[1] for f in found], np.float32))

    def iter_neighbours(self, k: int, batch_size: int = 8192, ef: int | None = None,
                        labels: np.ndarray | None = None):
        """The k nearest *other* items of every live item (or of ``labels``), in batches.

        Yields ``(labels (b,), neighbours (b, k'), scores (b, k'))`` with
        k' = min(k, count - 1), best first, the item itself left out. Exact below
        ``EXACT_MAX``; above it one batched hnswlib query per batch (it runs on all
        cores), with ``ef`` (default ``max(2k, 32)``) trading speed for recall.

        Example:
            >>> idx = VectorIndex(dim=2)
            >>> idx.add(np.array([1, 2, 3]),
            ...         np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32))
            >>> [(a.tolist(), n.tolist()) for a, n, _ in idx.iter_neighbours(k=1)]
            [([1, 2, 3], [[2], [1], [2]])]
        """
        if k < 1:
            raise InvalidParameterError(f"k must be at least 1; got {k}.")
        ids = self.labels() if labels is None else np.asarray(labels, dtype=np.int64)
        k = min(k, self.count - 1)
        if k < 1:
            return
        for start in range(0, len(ids), batch_size):
            batch = ids[start:start + batch_size]
            with self._lock:
                queries = self.vectors(batch)  # (b, dim)
                if self.count <= EXACT_MAX:
                    found, scores = self._exact_search(queries, k + 1)
                else:
                    self._hnsw.set_ef(max(ef or 2 * k, k + 1, 32))
                    found, distances = self._hnsw.knn_query(queries, k=k + 1)
                    found, scores = found.astype(np.int64), (1.0 - distances).astype(np.float32)
            yield (batch, *_drop_self(batch, found, scores))

    def knn_graph(self, k: int, batch: int = 8192, on_batch=None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest other items of every live item, rows in ``labels()`` order.

        Returns (labels (n, k'), scores (n, k')) with k' = min(k, count - 1), best
        first; an item is never its own neighbour (``iter_neighbours``, gathered).
        ``on_batch(done)`` is called after each batch (for progress).

        Example:
            >>> idx = VectorIndex(dim=2)
            >>> idx.add(np.array([1, 2, 3]),
            ...         np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32))
            >>> idx.knn_graph(1)[0].tolist()
            [[2], [1], [2]]
        """
        parts = []
        for part in self.iter_neighbours(k, batch_size=batch):
            parts.append(part)
            if on_batch is not None:
                on_batch(sum(len(p[0]) for p in parts))
        if not parts:
            empty = np.zeros((self.count, 0))
            return empty.astype(np.int64), empty.astype(np.float32)
        return np.vstack([p[1] for p in parts]), np.vstack([p[2] for p in parts])

    def _exact_search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._exact is None:
            ids = self.labels()
            self._exact = (ids, self.vectors(ids))
        ids, matrix = self._exact
        # one query: on this thread (see scores_against); many: BLAS
        scores = scores_against(matrix, queries[0])[None, :] if len(queries) == 1 \
            else queries @ matrix.T  # (q, n)
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        top_scores = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        top = np.take_along_axis(top, order, axis=1)
        return ids[top], np.take_along_axis(top_scores, order, axis=1)

    # ---- files -----------------------------------------------------------------
    def save(self, path: Path, meta: dict) -> None:
        """Write index and metadata atomically (temporary names, renamed under the file lock).

        A failed write (disk full, read-only folder) raises its OSError and leaves
        the files as they were: no temporary file stays behind.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, file_lock(path, exclusive=True):
            temporaries = [_temp_name(path), _temp_name(meta_path(path))]
            tmp_index, tmp_meta = temporaries
            try:
                self._hnsw.save_index(str(tmp_index))
                full_meta = {
                    **meta,
                    "format_version": FORMAT_VERSION,
                    "dimension": self.dim,
                    "count": self.count,
                    "element_count": self._hnsw.element_count,
                    "file_size": tmp_index.stat().st_size,
                    "crc32": file_crc32(tmp_index),
                    "M": self.params.M,
                    "ef_construction": self.params.ef_construction,
                    "deleted": sorted(self._deleted),
                }
                tmp_meta.write_text(json.dumps(full_meta), encoding="utf-8")
                os.replace(tmp_index, path)
                os.replace(tmp_meta, meta_path(path))
            except BaseException:
                for tmp in temporaries:
                    tmp.unlink(missing_ok=True)
                raise

    @classmethod
    def load(cls, path: Path, expect: dict) -> VectorIndex:
        """Load a saved index; IndexCorruptError when missing, unreadable or not ``expect``."""
        with file_lock(path, exclusive=False):
            return cls._load(path, expect)

    @classmethod
    def _load(cls, path: Path, expect: dict) -> VectorIndex:
        try:
            meta = json.loads(meta_path(path).read_text(encoding="utf-8"))
            size = path.stat().st_size
        except (OSError, ValueError) as exc:
            raise IndexCorruptError(f"{path}: {exc}") from exc
        wanted = {"format_version": FORMAT_VERSION, "file_size": size, **expect}
        wrong = {k: meta.get(k) for k, v in wanted.items() if meta.get(k) != v}
        if wrong:
            raise IndexCorruptError(f"{path}: metadata does not match ({wrong}).")
        if file_crc32(path) != meta.get("crc32"):
            raise IndexCorruptError(f"{path}: its content does not match its checksum.")
        params = IndexParams(M=meta["M"], ef_construction=meta["ef_construction"])
        index = cls(meta["dimension"], params, _empty=False)
        try:
            index._hnsw.load_index(str(path), max_elements=meta["element_count"] + 16)
        except RuntimeError as exc:
            raise IndexCorruptError(f"{path}: {exc}") from exc
        if index._hnsw.element_count != meta["element_count"]:
            raise IndexCorruptError(f"{path}: element count differs from its metadata.")
        index._deleted = set(meta["deleted"])
        index.meta = meta
        return index


def _drop_self(labels: np.ndarray, found: np.ndarray, scores: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Remove each row's own label from its k+1 results (or its last one when absent)."""
    keep = found != labels[:, None]  # (b, k+1): False where the item found itself
    keep[keep.all(axis=1), -1] = False  # an identical twin may push the item out of its list
    width = found.shape[1] - 1
    return found[keep].reshape(-1, width), scores[keep].reshape(-1, width)


def file_crc32(path: Path) -> int:
    """CRC-32 of a file, read in chunks (an index file can be gigabytes)."""
    crc = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def meta_path(path: Path) -> Path:
    return path.with_suffix(".json")


def _temp_name(path: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(name)


@contextmanager
def file_lock(path: Path, exclusive: bool) -> Iterator[None]:
    """An advisory lock on ``path`` + ``.lock`` (shared for readers, exclusive for writers).

    In a folder this process may not write (a read-only data folder), a reader
    locks the lock file read-only if it is there, and goes without a lock if
    not: no one can be writing the index there.
    """
    lock_path = path.with_suffix(".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open_private_file(lock_path, os.O_RDWR | os.O_CREAT, "r+b")  # not via a link
    except OSError:
        if exclusive:
            raise
        try:
            handle = open(lock_path, "rb")  # noqa: SIM115 - closed below
        except OSError:
            yield
            return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
