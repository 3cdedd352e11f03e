"""Duplicate groups from pairs: stars around representatives, so chains cannot merge.

Union-find would join a chain a≈b≈c≈…≈z into one group even when a and z mean
different things. Here the document with the highest summed cosine to its pair
partners becomes a representative and takes its partners (cosine ≥ threshold
to it, or the same normalised text), then the next unassigned one, and so on.
Every member is thus within the threshold of its representative. O(pairs).

Example:
    >>> vectors = np.array([[1.0, 0.0], [0.95, 0.31], [0.8, 0.6]], dtype=np.float32)
    >>> a, b, s = np.array([0, 1]), np.array([1, 2]), np.array([0.95, 0.95])
    >>> [(rep, m.tolist()) for rep, m, _ in group_pairs(a, b, s, lambda x: vectors[x], 0.9)]
    [(1, [1, 0, 2])]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import coo_matrix


def group_pairs(a: np.ndarray, b: np.ndarray, scores: np.ndarray, vectors_of,
                threshold: float, keys: dict[int, str] | None = None
                ) -> Sequence[tuple[int, np.ndarray, np.ndarray]]:
    """Duplicate groups from pairs: ``[(representative, members, cosine to it), ...]``.

    A star around each representative, not a whole connected component: documents
    are taken in order of their summed pair scores (the one most similar to the
    most others first); an unassigned one becomes a representative and takes its
    unassigned pair partners, i.e. those with cosine ≥ threshold to it (or the same
    normalised text). A document whose partners were all taken joins the group of
    its best partner if it is within the threshold of that group's representative.
    So every member is within the threshold of its representative, and a chain
    a≈b≈…≈z cannot join a and z. ``vectors_of(labels)`` gives unit vectors (m, dim).
    Runs in O(pairs); biggest groups first.
    """
    if len(a) == 0:
        return []
    nodes, inverse = np.unique(np.r_[a, b], return_inverse=True)
    m, u, v = len(nodes), inverse[:len(a)], inverse[len(a):]
    weights = np.asarray(scores, np.float64)
    graph = coo_matrix((np.r_[weights, weights], (np.r_[u, v], np.r_[v, u])), shape=(m, m)).tocsr()
    strength = np.asarray(graph.sum(axis=1)).ravel()  # (m,) summed cosine to partners
    owner = np.full(m, -1)  # the representative (local index) each node belongs to
    for i in np.argsort(-np.round(strength, 5), kind="stable"):  # ties: the lowest id first
        if owner[i] >= 0:
            continue
        partners = graph.indices[graph.indptr[i]:graph.indptr[i + 1]]
        free = partners[owner[partners] < 0]
        if len(free):
            owner[i], owner[free] = i, i
    _attach_leftovers(graph, owner, nodes, vectors_of, threshold, keys or {})
    return _finish_groups(graph, owner, nodes, vectors_of)


def _attach_leftovers(graph, owner: np.ndarray, nodes: np.ndarray, vectors_of,
                      threshold: float, keys: dict[int, str]) -> None:
    """Put each unassigned node in its best partner's group when close enough to that rep."""
    left = np.flatnonzero(owner < 0)
    if not len(left):
        return
    reps = np.array([owner[graph.indices[graph.indptr[i]:graph.indptr[i + 1]][
        np.argmax(graph.data[graph.indptr[i]:graph.indptr[i + 1]])]] for i in left])
    cosine = np.einsum("ij,ij->i", vectors_of(nodes[left]), vectors_of(nodes[reps]))
    same_text = np.array([bool(keys.get(int(x))) and keys.get(int(x)) == keys.get(int(r))
                          for x, r in zip(nodes[left], nodes[reps], strict=True)])
    ok = (cosine >= threshold) | same_text
    owner[left[ok]] = reps[ok]


def _finish_groups(graph, owner: np.ndarray, nodes: np.ndarray, vectors_of):
    """[(rep, members, cosine to rep)] in labels: rep first, then by cosine; biggest first."""
    m = len(owner)
    sims = np.full(m, np.nan)
    coo = graph.tocoo()
    to_rep = owner[coo.row] == coo.col  # edges from a member to its representative
    sims[coo.row[to_rep]] = coo.data[to_rep]
    is_rep = owner == np.arange(m)
    sims[is_rep] = np.inf  # sorts first
    attached = np.isnan(sims) & (owner >= 0)  # leftovers attached by cosine, not partners
    if attached.any():
        sims[attached] = np.einsum("ij,ij->i", vectors_of(nodes[attached]),
                                   vectors_of(nodes[owner[attached]]))
    grouped = np.flatnonzero(owner >= 0)
    g_owner, g_sims = owner[grouped], sims[grouped]
    size = np.bincount(g_owner, minlength=m)  # (m,) members per representative
    total = np.bincount(g_owner, np.where(np.isinf(g_sims), 0.0, g_sims), minlength=m)
    mean = total / np.maximum(size - 1, 1)
    order = np.lexsort((-g_sims, nodes[g_owner], -np.round(mean[g_owner], 6), -size[g_owner]))
    grouped, g_owner, g_sims = grouped[order], g_owner[order], g_sims[order]
    g_sims[np.isinf(g_sims)] = 1.0
    return Groups(nodes[grouped], nodes[g_owner], g_sims)


class Groups(Sequence):
    """The groups as ``(representative, members, cosines)``, each built when it is read.

    All groups live in three flat arrays, one row per member, grouped and
    ordered; a page that shows 20 of 127,869 groups (a million documents)
    builds 20 tuples, not 127,869 (measured: 1.0 s of the page's 2.9 s).

    Example:
        >>> g = Groups(np.array([7, 3, 5]), np.array([7, 7, 5]), np.array([1.0, 0.9, 1.0]))
        >>> len(g), g[0][0], g[0][1].tolist(), g[-1][0]
        (2, 7, [7, 3], 5)
    """

    def __init__(self, members: np.ndarray, reps: np.ndarray, cosines: np.ndarray):
        self._members, self._reps, self._cosines = members, reps, cosines
        cuts = np.flatnonzero(np.diff(reps)) + 1  # where a new representative's rows start
        self._starts = np.r_[0, cuts] if len(reps) else np.zeros(0, np.int64)
        self._ends = np.r_[cuts, len(reps)] if len(reps) else np.zeros(0, np.int64)

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        start, end = self._starts[i], self._ends[i]
        return (int(self._reps[start]), self._members[start:end], self._cosines[start:end])
