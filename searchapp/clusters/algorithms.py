"""The clustering methods, on unit vectors or their k-NN graph; -1 marks an outlier.

- ``community_detection``: sentence-transformers' communities over a k-NN graph.
- ``kmeans_clusters``: k-means, then ``far_members`` become outliers.
- ``hdbscan_clusters``: HDBSCAN on a low-dimensional reduction; ``lonely`` rows
  (isolated in the original space) stay outliers.
- ``by_size``: renumber clusters from the biggest down.

Example:
    >>> by_size(np.array([1, 0, 1, -1, 1])).tolist()
    [0, 1, 0, -1, 0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Counts = Callable[[int, int], None]  # (done, total) of a step's unit of work
ROWS_PER_REPORT = 1_000  # candidate centres between two reports of community detection


def rows_by_cluster(assign: np.ndarray) -> dict[int, np.ndarray]:
    """{cluster: its rows (sorted)} for clusters ≥ 0, in one sort: O(n log n), not O(n·k).

    Example:
        >>> {c: r.tolist() for c, r in rows_by_cluster(np.array([1, -1, 0, 1])).items()}
        {0: [2], 1: [0, 3]}
    """
    rows = np.flatnonzero(assign >= 0)
    order = rows[np.argsort(assign[rows], kind="stable")]
    labels = assign[order]
    cuts = np.flatnonzero(np.diff(labels)) + 1
    return {int(part_labels[0]): part for part, part_labels in
            zip(np.split(order, cuts), np.split(labels, cuts), strict=True) if len(part)}


def community_detection(neighbours: np.ndarray, scores: np.ndarray, threshold: float,
                        min_size: int, expand: Callable[[int], np.ndarray] | None = None,
                        on_rows: Counts | None = None) -> np.ndarray:
    """SBERT-style communities over a k-NN graph; returns a cluster per row (-1: none).

    ``neighbours`` (n, k) holds row positions, ``scores`` (n, k) their cosines,
    best first. A row with at least ``min_size - 1`` neighbours at ≥ threshold
    is a centre; centres are taken densest first, each claiming the still free
    members of its community. ``expand(row)`` returns all rows at ≥ threshold
    (used when all k neighbours pass, so big communities are not cut at k).
    ``on_rows(done, total)`` hears how many candidate centres have been tried,
    every ``ROWS_PER_REPORT`` and at the end.

    Example:
        >>> nb = np.array([[1, 2], [0, 2], [0, 1], [0, 1]])
        >>> sc = np.array([[.9, .8], [.9, .8], [.8, .8], [.1, .1]])
        >>> community_detection(nb, sc, threshold=0.7, min_size=3).tolist()
        [0, 0, 0, -1]
    """
    n, k = neighbours.shape
    above = scores >= threshold  # (n, k)
    counts = above.sum(axis=1)
    density = np.where(above, scores, 0).sum(axis=1)
    candidates = np.flatnonzero(counts + 1 >= min_size)
    order = candidates[np.lexsort((-density[candidates], -counts[candidates]))]
    assign = np.full(n, -1, dtype=np.int64)
    next_id = 0
    for tried, row in enumerate(order):
        if on_rows is not None and tried % ROWS_PER_REPORT == 0:
            on_rows(tried, len(order))
        if assign[row] != -1:
            continue  # already in a bigger community: its own would mostly overlap
        members = neighbours[row, above[row]]
        if expand is not None and counts[row] == k:
            members = expand(int(row))
        members = np.unique(np.append(members, row))
        members = members[assign[members] == -1]
        if len(members) >= min_size:
            assign[members] = next_id
            next_id += 1
    if on_rows is not None:
        on_rows(len(order), len(order))
    return assign


def kmeans_starts(n: int) -> int:
    """How many k-means runs (from different starts) keep the best: 3, or 1 above 50,000 rows.

    Example:
        >>> kmeans_starts(1_000), kmeans_starts(100_000)
        (3, 1)
    """
    return 3 if n <= 50_000 else 1


def kmeans_clusters(vectors: np.ndarray, k: int, seed: int = 0, on_start: Counts | None = None,
                    outliers: bool = True) -> np.ndarray:
    """k-means on unit vectors (then, with ``outliers``, ``far_members`` become outliers).

    ``on_start(done, total)`` hears of each run as it starts (``done`` runs
    are over) and once at the end: scikit-learn's KMeans offers no callback,
    but it calls a callable ``init`` once per run with its own random state,
    and ``kmeans_plusplus`` there draws the same starts as its default
    ``init="k-means++"`` (tests/test_clusters_progress.py checks the labels are equal).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> v = np.vstack([rng.normal(c, 0.1, size=(20, 2)) for c in (-1, 1)])
        >>> kmeans_clusters(v, 2, on_start=lambda done, total: print(done, total))[:3]
        0 3
        1 3
        2 3
        3 3
        array([1, 1, 1])
    """
    from sklearn.cluster import KMeans, kmeans_plusplus

    starts, started = kmeans_starts(len(vectors)), [0]

    def init(x: np.ndarray, n_clusters: int, random_state) -> np.ndarray:
        if on_start is not None:
            on_start(started[0], starts)
        started[0] += 1
        return kmeans_plusplus(x, n_clusters, random_state=random_state)[0]

    model = KMeans(n_clusters=k, n_init=starts, random_state=seed, init=init)
    labels = model.fit_predict(vectors).astype(np.int64)
    if on_start is not None:
        on_start(starts, starts)
    return far_members(vectors, labels) if outliers else labels


def lonely(scores: np.ndarray, m: int, z: float = 4.0) -> np.ndarray:
    """Rows whose m-th neighbour is far less similar than is typical (a boolean mask).

    ``scores`` (n, k) are k-NN cosines in the original space, best first. This
    is HDBSCAN's core distance, taken before any reduction: a low-dimensional
    map squeezes isolated documents together, so HDBSCAN there can see a
    "cluster" of them; here they stay apart.

    Example:
        >>> lonely(np.array([[.9, .8], [.9, .85], [.8, .8], [.85, .8], [.9, .8], [.2, .1]]), 2)
        array([False, False, False, False, False,  True])
    """
    core = scores[:, min(m, scores.shape[1]) - 1]  # (n,) cosine to the m-th neighbour
    median = np.median(core)
    spread = max(1.4826 * np.median(np.abs(core - median)), 0.01)
    return core < median - z * spread


def far_members(vectors: np.ndarray, assign: np.ndarray, z: float = 4.0) -> np.ndarray:
    """Mark as outliers (-1) the members far less similar to their cluster than is typical.

    A member is far when its cosine to the cluster's mean direction is more
    than ``z`` robust standard deviations (1.4826 × MAD, at least 0.01) under
    the cluster's median. Methods that place every document somewhere
    (k-means, HDBSCAN on a UMAP reduction, which glues isolated points to the
    nearest group) would otherwise hide outliers inside clusters.

    Example:
        >>> v = np.array([[1, 0], [1, 0.05], [0.99, -0.05], [1, 0.02], [0.98, 0], [0, 1.0]])
        >>> v = v / np.linalg.norm(v, axis=1, keepdims=True)
        >>> far_members(v, np.zeros(6, dtype=np.int64)).tolist()
        [0, 0, 0, 0, 0, -1]
    """
    assign = assign.copy()
    for members in rows_by_cluster(assign).values():
        if len(members) < 5:
            continue
        centre = vectors[members].mean(axis=0)
        sims = vectors[members] @ (centre / max(np.linalg.norm(centre), 1e-12))
        median = np.median(sims)
        spread = max(1.4826 * np.median(np.abs(sims - median)), 0.01)
        assign[members[sims < median - z * spread]] = -1
    return assign


def hdbscan_clusters(reduced: np.ndarray, min_size: int) -> np.ndarray:
    """scikit-learn HDBSCAN on a low-dimensional reduction; noise is -1.

    ``min_samples`` is capped at 15 so that big minimum sizes stay fast and do
    not turn most documents into noise.
    """
    from sklearn.cluster import HDBSCAN

    min_size = min(min_size, len(reduced))
    model = HDBSCAN(min_cluster_size=max(2, min_size), min_samples=min(min_size, 15),
                    copy=True)
    return model.fit_predict(reduced).astype(np.int64)


def by_size(assign: np.ndarray) -> np.ndarray:
    """Renumber clusters 0, 1, ... from the biggest down; -1 stays -1."""
    ids, sizes = np.unique(assign[assign >= 0], return_counts=True)
    order = ids[np.argsort(-sizes, kind="stable")]
    mapping = np.full(int(assign.max(initial=-1)) + 2, -1, dtype=np.int64)
    mapping[order] = np.arange(len(order))
    return np.where(assign >= 0, mapping[assign], -1)
