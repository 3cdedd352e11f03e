"""The semantic candidates of one set of indexes: documents by their vector, split documents
by their passages and their whole (``searchapp.search.evidence``).

The one place that turns a query vector into scored documents, for the index a
process holds (``searchapp.search.service``) and for one shard's (``searchapp.search.shards``):
the same code on both paths is what makes a sharded search rank as the single
index ranks. Both functions take the document index (labels: document ids) and
the passage index (``None`` when no document is split).

Example:
    >>> import numpy as np
    >>> from searchapp.vectors.index import VectorIndex
    >>> idx = VectorIndex(dim=2)
    >>> idx.add(np.array([7, 8]), np.array([[1.0, 0.0], [0.0, 1.0]], np.float32))
    >>> [(c.doc, round(c.score, 2)) for c in nearest_documents(idx, None, np.array([0.0, 1.0],
    ...                                                          np.float32), 1)]
    [(8, 1.0)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from searchapp.base.timing import StageTimes
from searchapp.search.evidence import split_scores
from searchapp.vectors.index import VectorIndex, scores_against
from searchapp.vectors.passage_index import STRIDE, PassageIndex


@dataclass
class Candidate:
    """A document found by meaning: its id, its score, its best passage (split ones only)."""

    doc: int
    score: float
    passage: int | None = None


def nearest_documents(index: VectorIndex, passages: PassageIndex | None, vector: np.ndarray,
                      n: int, times: StageTimes | None = None, weight: float = 0.0
                      ) -> list[Candidate]:
    """The ``n`` best documents for ``vector``, best first: the document index's nearest
    and the passage index's, split documents scored by ``evidence.split_scores``
    (``weight`` 0: their best passage alone, the duplicates' check)."""
    times = times if times is not None else StageTimes()
    with times.stage("vector"):
        labels, scores = index.search(vector[None, :], n)
        best = {int(label): Candidate(int(label), float(score))
                for label, score in zip(labels[0], scores[0], strict=True)}
    with times.stage("passages"):
        _add_passages(passages, vector, n, best, weight)
    return sorted(best.values(), key=lambda c: -c.score)[:n]


def _add_passages(passages: PassageIndex | None, vector: np.ndarray, n: int,
                  best: dict[int, Candidate], weight: float) -> None:
    """Add the passage index's nearest documents to ``best``; split ones scored by passage."""
    if passages is not None and passages.count:
        plabels, _ = passages.search(vector[None, :], n)
        for label in plabels[0].tolist():
            best.setdefault(label // STRIDE, Candidate(label // STRIDE, -2.0))
        split = [d for d in best if d in passages.passage_counts]
        for doc, (number, score) in split_scores(passages, vector, split, weight).items():
            best[doc] = Candidate(doc, score, number)


def score_documents(index: VectorIndex, passages: PassageIndex | None, vector: np.ndarray,
                    docs: Iterable[int], weight: float) -> dict[int, Candidate]:
    """Exact scores of the given documents that the index holds (split ones by evidence):
    for hits found by words only, and for a filter's few passing documents."""
    labels, matrix = index.vectors_of(list(docs))
    scores = scores_against(matrix, vector) if len(labels) else np.zeros(0, np.float32)
    found = {int(d): Candidate(int(d), float(s)) for d, s in zip(labels, scores, strict=True)}
    if passages is not None:
        split = [d for d in found if d in passages.passage_counts]
        for doc, (number, score) in split_scores(passages, vector, split, weight).items():
            found[doc] = Candidate(doc, score, number)
    return found
