"""Mining: every pair of a corpus above a floor, from the k-NN graph instead of all pairs.

Each document asks the index for its k nearest other documents (exact below
``EXACT_MAX`` documents, HNSW above), and a pair is kept when its cosine is at
least the floor; each unordered pair once, however many of its two members
found it. Documents with the same normalised text (equal ``text_key``) are
exact duplicates: paired whatever their cosine or k.

Example:
    >>> idx = VectorIndex(dim=2)
    >>> idx.add(np.array([1, 2, 3]), np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32))
    >>> m = mine(idx, None, floor=0.7, k=2)
    >>> m.a.tolist(), m.b.tolist(), m.exact.tolist()
    ([1], [2], [False])
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from searchapp.duplicates.params import EXACT_CLIQUE_MAX, MAX_EXPANDED_K
from searchapp.vectors.index import EXACT_MAX, VectorIndex


@dataclass(frozen=True)
class Mined:
    """The threshold-independent result that is stored: k-NN pairs with cosine ≥ floor."""

    a: np.ndarray  # (p,) int64 document ids, a < b
    b: np.ndarray  # (p,)
    score: np.ndarray  # (p,) float32 cosine
    exact: np.ndarray  # (p,) bool: same normalised text
    floor: float
    k: int
    method: str  # "exact" or "hnsw"
    documents: int
    seconds: float = 0.0
    nodes: np.ndarray | None = None  # (m,) sorted ids of the documents in any pair
    node_keys: np.ndarray | None = None  # (m,) their text keys (0: none)

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"a": self.a, "b": self.b, "score": self.score, "exact": self.exact}
        if self.nodes is not None:
            out |= {"nodes": self.nodes, "node_keys": self.node_keys}
        return out

    def keys_of(self, ids: np.ndarray) -> dict[int, int]:
        """Text keys of documents in pairs (for the grouping's same-text rule)."""
        if self.nodes is None or not len(ids):
            return {}
        pos = np.clip(np.searchsorted(self.nodes, ids), 0, len(self.nodes) - 1)
        found = self.nodes[pos] == ids
        return dict(zip(ids[found].tolist(), self.node_keys[pos[found]].tolist(), strict=True))

    def info(self) -> dict:
        return {"floor": self.floor, "k": self.k, "method": self.method,
                "documents": self.documents}

    @classmethod
    def from_stored(cls, info: dict, arrays: dict[str, np.ndarray], seconds: float = 0.0
                    ) -> Mined:
        return cls(arrays["a"].astype(np.int64), arrays["b"].astype(np.int64),
                   arrays["score"].astype(np.float32), arrays["exact"].astype(bool),
                   info["floor"], info["k"], info["method"], info["documents"], seconds,
                   arrays.get("nodes"), arrays.get("node_keys"))

    def at(self, threshold: float) -> np.ndarray:
        """Indices of the pairs kept at ``threshold``: exact first, then by score, high first."""
        keep = np.flatnonzero(self.exact | (self.score >= threshold))
        order = np.lexsort((self.b[keep], self.a[keep], -self.score[keep], ~self.exact[keep]))
        return keep[order]


def knn_pairs(index: VectorIndex, floor: float, k: int, on_progress=None, ef: int | None = None,
              max_k: int = MAX_EXPANDED_K) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unordered pairs (a < b) of the k-NN graph with cosine ≥ floor: (a, b, score) arrays.

    A document whose k-th neighbour still scores ≥ floor may have more partners
    than k shows (a question asked 30 times), so those few are asked again with
    4k, 16k, ... neighbours (up to ``max_k``) until their list ends below the floor.
    """
    total, done = index.count, 0
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    saturated: list[np.ndarray] = []
    for labels, found, scores in index.iter_neighbours(k, ef=ef):
        parts.append(_above(labels, found, scores, floor))
        saturated.append(labels[scores[:, -1] >= floor] if scores.shape[1] else labels[:0])
        done += len(labels)
        if on_progress:
            on_progress(done, total, f"Nearest neighbours of {done:,} of {total:,} documents")
    todo, wider = np.concatenate(saturated) if saturated else np.zeros(0, np.int64), k
    while len(todo) and wider < min(max_k, total - 1):
        wider = min(4 * wider, max_k, total - 1)
        next_todo = []
        for labels, found, scores in index.iter_neighbours(wider, ef=ef, labels=todo):
            parts.append(_above(labels, found, scores, floor))
            next_todo.append(labels[scores[:, -1] >= floor])
        todo = np.concatenate(next_todo)
    a, b, s = (np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, t)
               for i, t in ((0, np.int64), (1, np.int64), (2, np.float32)))
    if len(a) == 0:
        return a, b, s
    order = np.lexsort((-s, b, a))  # for each (a, b), its highest score first
    a, b, s = a[order], b[order], s[order]
    first = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])]
    return a[first], b[first], s[first]


def _above(labels: np.ndarray, found: np.ndarray, scores: np.ndarray, floor: float):
    """The (a < b, score) pairs of one batch of neighbour lists that reach the floor."""
    keep = scores >= floor  # (batch, k)
    rows = np.broadcast_to(labels[:, None], found.shape)[keep]
    cols = found[keep]
    return np.minimum(rows, cols), np.maximum(rows, cols), scores[keep]


def exact_pairs(labels: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (a < b) of labels with equal keys (key 0: no text, never matches).

    A clique for a few copies; more than ``EXACT_CLIQUE_MAX`` copies form a star
    around the smallest label (n - 1 pairs instead of n(n - 1)/2). O(n log n).

    Example:
        >>> a, b = exact_pairs(np.array([5, 1, 3, 4]), np.array([7, 7, 7, 0]))
        >>> sorted(zip(a.tolist(), b.tolist()))
        [(1, 3), (1, 5), (3, 5)]
    """
    labels, keys = np.asarray(labels, np.int64), np.asarray(keys, np.int64)
    has = keys != 0
    labels, keys = labels[has], keys[has]
    order = np.lexsort((labels, keys))
    labels, keys = labels[order], keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    a: list[np.ndarray] = []
    b: list[np.ndarray] = []
    for start, size in zip(starts[sizes > 1], sizes[sizes > 1], strict=True):
        group = labels[start:start + size]
        if size <= EXACT_CLIQUE_MAX:
            i, j = np.triu_indices(size, k=1)
            a.append(group[i])
            b.append(group[j])
        else:
            a.append(np.repeat(group[0], size - 1))
            b.append(group[1:])
    if not a:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(a), np.concatenate(b)


def mine(index: VectorIndex, keys: tuple[np.ndarray, np.ndarray] | None, floor: float, k: int,
         on_progress=None) -> Mined:
    """k-NN pairs ≥ floor plus exact-text pairs, merged; see ``Mined``.

    ``keys`` is (labels, text keys) of the documents, or None for no exact pairs.
    """
    started = time.monotonic()
    a, b, s = knn_pairs(index, floor, k, on_progress)
    exact = np.zeros(len(a), bool)
    if keys is not None:
        ea, eb = exact_pairs(*keys)
        if len(ea):
            va, vb = index.vectors(ea), index.vectors(eb)
            es = np.einsum("ij,ij->i", va, vb).astype(np.float32)
            a, b = np.r_[ea, a], np.r_[eb, b]
            s, exact = np.r_[es, s], np.r_[np.ones(len(ea), bool), exact]
            first = np.unique(np.stack([a, b], axis=1), axis=0, return_index=True)[1]
            a, b, s, exact = a[first], b[first], s[first], exact[first]  # exact rows came first
    nodes = node_keys = None
    if keys is not None:
        order = np.argsort(keys[0])
        labels, all_keys = keys[0][order], keys[1][order]
        nodes = np.unique(np.r_[a, b])
        node_keys = all_keys[np.clip(np.searchsorted(labels, nodes), 0, max(len(labels) - 1, 0))]
    method = "exact" if index.count <= EXACT_MAX else "hnsw"
    return Mined(a, b, s.astype(np.float32), exact, floor, k, method, index.count,
                 round(time.monotonic() - started, 3), nodes, node_keys)
