"""A shard's document and passage indexes with their vectors compressed (``compressed``), under
the interface search already uses (``VectorIndex``, ``PassageIndex``).

``CompressedStore`` is a ``VectorIndex`` whose vectors live in a compressed index
(``compressed.make_index``: sq8 or pq); ``CompressedPassageIndex`` is the passage
index on top of it, so a split document's passages are compressed too and its
evidence (``search.evidence``) is computed as on float32 vectors. Where vectors are
read back for an exact score (a hit found by words only, a selective filter, a
split document's passages), ``exact`` (a reader of the stored float32 vectors in
the database) gives them when set: pq's decoded vectors are too rough to score
by (sq8's are within about 1% and are used as they are).

Example:
    >>> import numpy as np
    >>> store = CompressedStore(2, "sq8")
    >>> store.add(np.array([7, 8]), np.eye(2, dtype=np.float32))
    >>> store.count, store.search(np.array([[0.0, 1.0]], np.float32), 1)[0].tolist()
    (2, [[8]])
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from searchapp.search.shards.compressed import make_index
from searchapp.vectors.index import VectorIndex
from searchapp.vectors.passage_index import PassageIndex

Reader = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]  # labels -> (found, (m, dim))


class CompressedStore(VectorIndex):
    """A VectorIndex whose vectors are kept by a compressed index; see the module."""

    def __init__(self, dim: int, kind: str, rerank: Reader | None = None,
                 exact: Reader | None = None):
        super().__init__(dim, capacity=16)  # hnswlib's own structure stays empty
        self.kind = kind
        self._store = make_index(kind, dim, rerank)
        self._exact_reader = exact

    @property
    def count(self) -> int:
        return self._store.count

    def labels(self) -> np.ndarray:
        return self._store.labels()

    def memory_bytes(self) -> int:
        return self._store.memory_bytes()

    @property
    def outgrown(self) -> bool:
        """Trained on far fewer vectors than it holds now (``CompressedIndex.outgrown``)."""
        return self._store.outgrown

    def reserve(self, capacity: int) -> None:
        """A build's count of what it will add: the codes are trained on as many of them as
        they may be (``CompressedIndex.expect``); nothing is allocated ahead."""
        self._store.expect(capacity)

    def add(self, labels: np.ndarray, vectors: np.ndarray) -> None:
        self._store.add(np.asarray(labels, np.int64), vectors)

    def delete(self, labels: np.ndarray) -> None:
        self._store.delete(np.asarray(labels, np.int64))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._store.search(queries, k)

    def vectors(self, labels: np.ndarray) -> np.ndarray:
        """Vectors of labels the index holds (all of them must be there)."""
        if self._exact_reader is None:
            return self._store.vectors(np.asarray(labels, np.int64))
        found, matrix = self._exact_reader(np.asarray(labels, np.int64))
        if len(found) != len(labels):
            return self._store.vectors(np.asarray(labels, np.int64))  # deleted meanwhile
        return matrix

    def vectors_of(self, labels) -> tuple[np.ndarray, np.ndarray]:
        """(the labels held, their vectors): exact ones where a reader is set."""
        found, decoded = self._store.vectors_of(np.asarray(labels, np.int64))
        if self._exact_reader is None or not len(found):
            return found, decoded
        return self._exact_reader(found)


class CompressedPassageIndex(PassageIndex, CompressedStore):
    """The passage index (labels ``document * STRIDE + number``) over a ``CompressedStore``.

    Example:
        >>> import numpy as np
        >>> from searchapp.vectors.passage_index import STRIDE
        >>> idx = CompressedPassageIndex(2, "sq8")
        >>> idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.eye(2, dtype=np.float32))
        >>> idx.passage_counts, idx.best_passages(np.array([0.0, 1.0], np.float32), [7])[7][0]
        ({7: 2}, 1)
    """
