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

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from searchapp.embedding.passages import MAX_PASSAGES
from searchapp.store import repo
from searchapp.vectors.index import VectorIndex
from searchapp.vectors.index_cache import IndexCache, IndexKey, _Entry

STRIDE = MAX_PASSAGES


class PassageIndex(VectorIndex):
    """A VectorIndex whose labels are passages; knows how many passages each document has."""

    def __init__(self, dim: int, *args, **kwargs):
        super().__init__(dim, *args, **kwargs)
        self.passage_counts: dict[int, int] = {}

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

    def delete(self, labels: np.ndarray) -> None:
        """Delete by *document* ids (the tombstones' ids): all of their passages."""
        self.delete_documents(labels)

    def delete_documents(self, doc_ids: Iterable[int]) -> None:
        labels = [int(d) * STRIDE + p for d in doc_ids
                  for p in range(self.passage_counts.pop(int(d), 0))]
        super().delete(np.asarray(labels, dtype=np.int64))

    def passages_of(self, doc_id: int) -> np.ndarray:
        return doc_id * STRIDE + np.arange(self.passage_counts.get(doc_id, 0), dtype=np.int64)

    def best_passages(self, query: np.ndarray, doc_ids: Iterable[int]
                      ) -> dict[int, tuple[int, float]]:
        """{document: (best passage number, cosine)} exactly, for split documents among doc_ids."""
        out: dict[int, tuple[int, float]] = {}
        for doc in doc_ids:
            labels = self.passages_of(int(doc))
            if len(labels) == 0:
                continue
            scores = self.vectors(labels) @ query  # (p,)
            best = int(np.argmax(scores))
            out[int(doc)] = (best, float(scores[best]))
        return out

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
