"""The passage index of a (corpus, model): the passages of its documents longer than the window.

Documents that fit the model's window are in the document index only
(``searchapp.vectors.index``; labels are document ids). A longer document is there too,
with the mean of its passages (duplicates and clusters work on documents), and
each of its passages is here under the label ``document id * STRIDE + number``,
so a label always names one passage of one text (document ids are never reused).
The index is kept at the corpus' generation like the document index
(``PassageIndexCache``: the same files, locks and catch-up, with the passages
stored beside each document's vector); a tombstoned document takes its
passages with it.

Scoring a hit's passages exactly (``best_passages``) needs their vectors, and
hnswlib hands stored vectors back slowly (tens of microseconds each: 40-120 ms
for the passages of 50 manual pages on 2 busy cores). The vectors of recently
scored documents are therefore kept as one matrix per document in an LRU of
``PASSAGE_CACHE_BYTES`` (``_PassageMatrices``); the documents not there are
fetched in one ``get_items`` call. A document's entry goes when its passages are
added again or deleted, so a hit is always scored on the vectors the index holds.

Example:
    >>> import numpy as np
    >>> idx = PassageIndex(dim=2)
    >>> idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]),
    ...         np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    >>> idx.passage_counts, idx.best_passages(np.array([0.0, 1.0], np.float32), [7])
    ({7: 2}, {7: (1, 1.0)})
    >>> idx.delete_documents([7]); idx.count
    0
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from searchapp.embedding.passages import MAX_PASSAGES
from searchapp.store import repo
from searchapp.vectors.index import VectorIndex, scores_against
from searchapp.vectors.index_cache import IndexCache, IndexKey, _Entry

STRIDE = MAX_PASSAGES
PASSAGE_CACHE_BYTES = 64 * 2**20  # passage vectors of recent hits kept per index
SPANS_CACHE_BYTES = 4 * 2**20  # and their character spans (8 bytes a passage)
WHOLE_CACHE_BYTES = 2**20  # and the length of the sum of their vectors (one float a document)


class _PassageMatrices:
    """An LRU of document → an array of its passages (their vectors (p, dim), or their
    spans (p, 2)), bounded in bytes; thread-safe."""

    def __init__(self, budget: int = PASSAGE_CACHE_BYTES):
        self.budget, self.used = budget, 0
        self.version = 0  # bumped by every forget: a matrix read before one is not kept
        self._items: OrderedDict[int, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, doc: int) -> np.ndarray | None:
        with self._lock:
            matrix = self._items.get(doc)
            if matrix is not None:
                self._items.move_to_end(doc)
            return matrix

    def put(self, doc: int, matrix: np.ndarray, version: int) -> None:
        """Keep ``matrix``, read when ``self.version`` was ``version`` (else it may be stale)."""
        with self._lock:
            if version != self.version:
                return
            self._drop(doc)
            self._items[doc] = matrix
            self.used += matrix.nbytes
            while self.used > self.budget and self._items:
                self.used -= self._items.popitem(last=False)[1].nbytes

    def forget(self, docs: Iterable[int]) -> None:
        with self._lock:
            self.version += 1
            for doc in docs:
                self._drop(int(doc))

    def _drop(self, doc: int) -> None:
        old = self._items.pop(doc, None)
        if old is not None:
            self.used -= old.nbytes


class PassageIndex(VectorIndex):
    """A VectorIndex whose labels are passages; knows how many passages each document has."""

    def __init__(self, dim: int, *args, **kwargs):
        super().__init__(dim, *args, **kwargs)
        self.passage_counts: dict[int, int] = {}
        self._matrices = _PassageMatrices()
        self._spans = _PassageMatrices(SPANS_CACHE_BYTES)
        self._sums = _PassageMatrices(WHOLE_CACHE_BYTES)  # |sum of passage vectors| per doc

    def add(self, labels: np.ndarray, vectors: np.ndarray) -> None:
        labels = np.asarray(labels, dtype=np.int64)
        if len(labels) == 0:
            return
        docs, numbers = labels // STRIDE, labels % STRIDE
        new_counts: dict[int, int] = {}
        for doc, number in zip(docs.tolist(), numbers.tolist(), strict=True):
            new_counts[doc] = max(new_counts.get(doc, 0), number + 1)
        # a document embedded again with fewer passages: its extra labels go
        stale = [d * STRIDE + p for d, n in new_counts.items()
                 for p in range(n, self.passage_counts.get(d, 0))]
        super().delete(np.asarray(stale, dtype=np.int64))
        super().add(labels, vectors)
        self.passage_counts.update(new_counts)
        self._matrices.forget(new_counts)
        self._spans.forget(new_counts)
        self._sums.forget(new_counts)

    def delete(self, labels: np.ndarray) -> None:
        """Delete by *document* ids (the tombstones' ids): all of their passages."""
        self.delete_documents(labels)

    def delete_documents(self, doc_ids: Iterable[int]) -> None:
        doc_ids = [int(d) for d in doc_ids]
        labels = [d * STRIDE + p for d in doc_ids for p in range(self.passage_counts.pop(d, 0))]
        super().delete(np.asarray(labels, dtype=np.int64))
        self._matrices.forget(doc_ids)
        self._spans.forget(doc_ids)
        self._sums.forget(doc_ids)

    def passages_of(self, doc_id: int) -> np.ndarray:
        return doc_id * STRIDE + np.arange(self.passage_counts.get(doc_id, 0), dtype=np.int64)

    def best_passages(self, query: np.ndarray, doc_ids: Iterable[int]
                      ) -> dict[int, tuple[int, float]]:
        """{document: (best passage number, cosine)} exactly, for split documents among doc_ids.

        The passages' vectors come from the LRU of recent documents, the others
        from the index in one call (and are kept for the next query).
        """
        out: dict[int, tuple[int, float]] = {}
        for doc, scores in self.passage_scores(query, doc_ids).items():
            best = int(np.argmax(scores))
            out[doc] = (best, float(scores[best]))
        return out

    def passage_scores(self, query: np.ndarray, doc_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """{document: the cosine (p,) of each of its passages to ``query``} for the split
        documents among doc_ids (vectors as ``best_passages`` gets them).

        Example:
            >>> idx = PassageIndex(dim=2)
            >>> idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.eye(2, dtype=np.float32))
            >>> [round(float(x), 2) for x in idx.passage_scores(np.array([0.6, 0.8]), [7, 8])[7]]
            [0.6, 0.8]
        """
        return {doc: scores_against(matrix, query)
                for doc, matrix in self._passage_vectors([int(d) for d in doc_ids]).items()}

    def passage_evidence(self, query: np.ndarray, doc_ids: Iterable[int]
                         ) -> dict[int, tuple[int, float, float]]:
        """{document: (best passage number, its cosine, the cosine of the mean of all its
        passages)} for the split documents among doc_ids: what ``best_passages`` gives,
        and the document as a whole (its own vector is that normalised mean) from the
        same matrix, for one more sum per document (the length of the sum of its vectors is
        kept for the next query, like the vectors).

        Example:
            >>> idx = PassageIndex(dim=2)
            >>> idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.eye(2, dtype=np.float32))
            >>> n, best, whole = idx.passage_evidence(np.array([0.0, 1.0], np.float32), [7])[7]
            >>> n, best, round(whole, 4)
            (1, 1.0, 0.7071)
        """
        out: dict[int, tuple[int, float, float]] = {}
        version = self._sums.version  # before the vectors are read: a norm of stale ones goes
        for doc, matrix in self._passage_vectors([int(d) for d in doc_ids]).items():
            scores = scores_against(matrix, query)  # (p,)
            best = int(np.argmax(scores))
            kept = self._sums.get(doc)
            if kept is None:
                total = np.einsum("ij->j", matrix)
                kept = np.array([np.sqrt(total @ total)], dtype=np.float64)
                self._sums.put(doc, kept, version)
            norm = float(kept[0])
            whole = float(scores.sum()) / norm if norm > 0 else 0.0
            out[doc] = (best, float(scores[best]), whole)
        return out

    def spans_of(self, doc_ids: Iterable[int],
                 read: Callable[[list[int]], dict[int, np.ndarray]]) -> dict[int, np.ndarray]:
        """{document: its passages' (start, end) character spans (p, 2)} for the split
        documents among ``doc_ids``: those of recent hits from memory, the others from
        ``read(documents)`` (the database), kept when they count the passages the index
        holds (a document embedded again since is read again).

        Example:
            >>> idx = PassageIndex(dim=2)
            >>> idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.eye(2, dtype=np.float32))
            >>> read = lambda docs: {7: np.array([[0, 90], [80, 160]], np.int32)}
            >>> idx.spans_of([7, 8], read)[7].tolist()
            [[0, 90], [80, 160]]
            >>> idx.spans_of([7], lambda docs: {})[7].tolist()  # kept: not read again
            [[0, 90], [80, 160]]
        """
        found, missing, version = self._kept(self._spans, [int(d) for d in doc_ids])
        if missing:
            for doc, spans in read(missing).items():
                found[doc] = spans
                if len(spans) == self.passage_counts.get(doc):
                    self._spans.put(doc, spans, version)
        return found

    def _passage_vectors(self, docs: list[int]) -> dict[int, np.ndarray]:
        """{document: its passages' vectors (p, dim)} for the split documents among docs."""
        found, missing, version = self._kept(self._matrices, docs)
        if missing:
            labels = [self.passages_of(doc) for doc in missing]
            vectors = self.vectors(np.concatenate(labels))
            start = 0
            for doc, own in zip(missing, labels, strict=True):
                found[doc] = vectors[start:start + len(own)]
                start += len(own)
                self._matrices.put(doc, found[doc], version)
        return found

    def _kept(self, cache: _PassageMatrices, docs: list[int]
              ) -> tuple[dict[int, np.ndarray], list[int], int]:
        """(what ``cache`` keeps of ``docs``, the split documents among them it does not
        keep, its version before they are read: what is read is kept only if unchanged)."""
        version = cache.version
        found: dict[int, np.ndarray] = {}
        missing = []
        for doc in docs:
            kept = cache.get(doc)
            if kept is not None:
                found[doc] = kept
            elif self.passage_counts.get(doc, 0):
                missing.append(doc)
        return found, missing, version

    @classmethod
    def load(cls, path: Path, expect: dict) -> PassageIndex:
        index = super().load(path, expect)
        labels = index.labels()
        docs, counts = np.unique(labels // STRIDE, return_counts=True)
        index.passage_counts = dict(zip(docs.tolist(), counts.tolist(), strict=True))
        return index


class PassageIndexCache(IndexCache):
    """PassageIndexes by (corpus, model), kept at the corpus' generation (see IndexCache)."""

    suffix = "-passages"
    index_class = PassageIndex

    def _apply_changes(self, s, key: IndexKey, entry: _Entry, dimension: int) -> None:
        entry.index.delete_documents(repo.removed_since(s, key.corpus_id, entry.generation))
        for labels, vectors in repo.passages_since(s, key.corpus_id, key.model_id,
                                                   entry.generation, dimension, STRIDE):
            entry.index.add(labels, vectors)
