"""A person's pair judgements and merges as constraints on centroid clusterings (auto, k-means).

"Duplicate" pairs are must-links: the documents joined by them (transitively)
move together to the cluster whose centre is closest to their mean.
"Not duplicate" pairs are cannot-links: when both ends still share a cluster,
the end less typical of it (with the must-linked documents bound to it) moves
to its next-closest cluster. This is the assignment step of COP-k-means run
once after k-means, so the clusters' centres stay those the data chose;
constraints that contradict each other (a cannot-link inside a must-linked
group) cannot be met and are counted.

Example:
    >>> v = np.array([[1.0, 0], [0.9, 0.1], [0, 1.0], [0.1, 0.9]])
    >>> constrained(v, np.array([0, 0, 1, 1]), must=np.array([[1, 2]]),
    ...             cannot=np.zeros((0, 2), int))[0].tolist()
    [0, 1, 1, 1]
"""

from __future__ import annotations

import numpy as np

from searchapp.clusters.algorithms import rows_by_cluster


def _components(n: int, must: np.ndarray) -> np.ndarray:
    """(n,) a group id per row: rows joined by must-links share one."""
    parent = np.arange(n)

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in must:
        parent[root(int(a))] = root(int(b))
    return np.array([root(i) for i in range(n)])


def _centres(vectors: np.ndarray, assign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cluster ids, their unit mean directions)."""
    groups = rows_by_cluster(assign)
    ids = np.array(sorted(groups))
    means = np.stack([vectors[groups[c]].mean(axis=0) for c in ids])
    return ids, means / np.linalg.norm(means, axis=1, keepdims=True).clip(1e-12)


def constrained(vectors: np.ndarray, assign: np.ndarray, must: np.ndarray, cannot: np.ndarray
                ) -> tuple[np.ndarray, int]:
    """``assign`` with must-links (m, 2) and cannot-links (c, 2) of row pairs applied.

    Returns (new assignment, constraints still unmet). Outliers (-1) in a
    must-link group join its cluster. No cluster is added; one whose every
    document a must-link group took away is gone (a person's merge of two clusters
    leaves one).
    """
    assign = assign.copy()
    if (len(must) == 0 and len(cannot) == 0) or not (assign >= 0).any():
        return assign, 0
    ids, centres = _centres(vectors, assign)
    group = _components(len(assign), must)
    bound = np.unique(must.ravel()) if len(must) else np.zeros(0, int)
    for g in np.unique(group[bound]):
        rows = np.flatnonzero(group == g)
        assign[rows] = ids[int(np.argmax(centres @ vectors[rows].mean(axis=0)))]
    for a, b in cannot:
        if assign[a] < 0 or assign[a] != assign[b] or group[a] == group[b]:
            continue  # apart already, or must-linked together (then it cannot be met)
        here = int(np.searchsorted(ids, assign[a]))
        mover = min((a, b), key=lambda r: float(centres[here] @ vectors[r]))
        rows = np.flatnonzero(group == group[mover])
        scores = centres @ vectors[rows].mean(axis=0)
        scores[here] = -np.inf
        assign[rows] = ids[int(np.argmax(scores))]
    unmet = int((assign[must[:, 0]] != assign[must[:, 1]]).sum()) if len(must) else 0
    unmet += int(((assign[cannot[:, 0]] == assign[cannot[:, 1]]) & (assign[cannot[:, 0]] >= 0))
                 .sum()) if len(cannot) else 0
    return assign, unmet
