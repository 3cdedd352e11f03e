"""Clusters within clusters: a tree over fine k-means groups, cut at any number of clusters.

The tree is built over centroids, never over documents, so it costs the same
at a million documents as at a thousand (O(n·k) for the k-means steps, O(L³)
over the L ≤ ``MAX_LEAVES`` leaves):

1. the chosen level: k-means on the documents (``choose_k`` picks k);
2. below it, each cluster split by k-means into leaves, as many as its share
   of ``leaf_count`` (the fine level);
3. merges: inside each cluster its leaves by Ward (weighted by size), cheapest
   first across all clusters; then the clusters themselves by Ward.

Cutting after the first ``L - m`` merges gives ``m`` clusters: above the chosen
level they are unions of its clusters, below it they split them, so zooming
never reshuffles documents between branches. A cut is a map leaf → cluster,
so a level is an array of L numbers and switching levels recomputes nothing.

Example:
    >>> rng = np.random.default_rng(0)
    >>> v = np.vstack([rng.normal(c, 0.05, size=(30, 2)) for c in ((0, 1), (1, 0), (0, -1))])
    >>> tree = build_tree(v, np.repeat([0, 1, 2], 30), leaves=6)
    >>> tree.leaf_count, len(np.unique(tree.cut(3)[tree.leaf]))
    (6, 3)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from searchapp.clusters.algorithms import rows_by_cluster

MAX_LEAVES = 200  # the finest level: enough to zoom to ~80 themes and beyond
AUTO_KS = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60)  # candidates for k
MIN_PER_CLUSTER = 20  # a candidate k leaves at least this many documents per cluster
SILHOUETTE_SAMPLE = 4_000  # documents the candidates are clustered and scored on
SPLIT_SAMPLE = 20_000  # rows a big cluster's split into leaves is fitted on (``_split``)
# Scores within this share of the best are a tie (one k-means run per k on a sample moves a
# score by about as much): the fewest clusters among them are chosen, the tree zooms finer.
TIE = 0.05
CATCH_ALL = 0.35  # a cluster holding more than this share of the documents is a catch-all


def candidate_ks(n: int) -> list[int]:
    """The numbers of clusters ``choose_k`` tries for ``n`` documents.

    Example:
        >>> candidate_ks(100), candidate_ks(100_000)[-1]
        ([2, 3, 4, 5], 60)
    """
    top = max(2, min(n // MIN_PER_CLUSTER, AUTO_KS[-1]))
    return [k for k in AUTO_KS if k <= top and k < n]


def choose_k(vectors: np.ndarray, seed: int = 0) -> tuple[int, dict[int, float]]:
    """The fewest clusters whose silhouette (cosine) ties the best without a catch-all
    (``tied_choice``), and every candidate's score.

    Each candidate k is a k-means run on the same random sample of at most
    ``SILHOUETTE_SAMPLE`` documents, scored there: separation against
    cohesion, high when the groups are real. Sentence vectors give a flat,
    noisy curve, so scores within ``TIE`` of the best count as equal and the
    smallest such k wins (benchmarks/clusters_quality.py measured this against
    the plain best score and other criteria; see
    benchmarks/results/clusters_quality.md).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> v = np.vstack([rng.normal(c, 0.1, size=(40, 3)) for c in np.eye(3) * 3])
        >>> choose_k(v)[0]
        3
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    n = len(vectors)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, SILHOUETTE_SAMPLE, replace=False)) if n > SILHOUETTE_SAMPLE \
        else np.arange(n)
    sample = vectors[rows]
    scores: dict[int, float] = {}
    largest: dict[int, float] = {}  # k → the largest cluster's share of the sample
    for k in candidate_ks(len(rows)):
        labels = KMeans(n_clusters=k, n_init=1, random_state=seed).fit_predict(sample)
        if len(np.unique(labels)) < 2:
            continue
        scores[k] = round(float(silhouette_score(sample, labels, metric="cosine")), 5)
        largest[k] = float(np.bincount(labels).max() / len(labels))
    if not scores:
        return min(2, n - 1), scores
    return tied_choice(scores, largest), scores


def tied_choice(scores: dict[int, float], largest: dict[int, float]) -> int:
    """The fewest clusters among the ks whose score ties the best (within ``TIE``) that leave
    no catch-all (a cluster of more than ``CATCH_ALL`` of the documents); the best k when
    every tied k leaves one.

    The tie rule alone chose 2 clusters wherever the curve was flat (400 licence files,
    a million vectors of 10,000 topics): two halves that tell a person nothing. A k
    that makes a catch-all wins only when its score is the best.

    Example:
        >>> tied_choice({2: 0.30, 3: 0.29, 8: 0.295}, {2: 0.55, 3: 0.40, 8: 0.20})
        8
        >>> tied_choice({2: 0.50, 3: 0.20}, {2: 0.55, 3: 0.40})
        2
    """
    top = max(scores.values())
    tied = sorted(k for k, score in scores.items() if score >= top - TIE * abs(top))
    spread = [k for k in tied if largest.get(k, 1.0) <= CATCH_ALL]
    return spread[0] if spread else max(tied, key=lambda k: (scores[k], -k))


def ward_merges(centres: np.ndarray, weights: np.ndarray) -> list[tuple[int, int, float]]:
    """Weighted Ward merges of ``centres``: (a, b, cost) with a, b any member of each side.

    The cost of joining two groups is the increase in within-group squared
    error, w_a·w_b / (w_a + w_b) · ‖c_a − c_b‖²; the cheapest pair is joined
    first. O(m³) for m centres (m ≤ a few hundred here).

    Example:
        >>> ward_merges(np.array([[0.0], [0.1], [5.0]]), np.array([1, 1, 1]))[0][:2]
        (0, 1)
    """
    c = centres.astype(np.float64).copy()
    w = weights.astype(np.float64).copy()
    m = len(c)
    live = np.ones(m, dtype=bool)
    sq = (c ** 2).sum(axis=1)
    cost = w[:, None] * w[None, :] / (w[:, None] + w[None, :]).clip(1e-12) * np.maximum(
        sq[:, None] + sq[None, :] - 2 * c @ c.T, 0)  # (m, m)
    np.fill_diagonal(cost, np.inf)
    merges = []
    for _ in range(m - 1):
        a, b = sorted(np.unravel_index(int(np.argmin(cost)), cost.shape))
        merges.append((int(a), int(b), float(cost[a, b])))
        c[a] = (w[a] * c[a] + w[b] * c[b]) / (w[a] + w[b])
        w[a] += w[b]
        live[b] = False
        cost[b, :] = cost[:, b] = np.inf
        others = np.flatnonzero(live & (np.arange(m) != a))
        row = w[others] * w[a] / (w[others] + w[a]) * ((c[others] - c[a]) ** 2).sum(axis=1)
        cost[a, others] = cost[others, a] = row
    return merges


@dataclass
class Tree:
    """Leaves per document and the merges over them; ``cut(m)`` maps leaves to m clusters.

    ``leaf`` (n,) is each document's leaf (-1: an outlier, in no cluster at any
    level); ``merges`` (L-1, 2) joins the groups holding two leaves, in order;
    ``base`` is the number of clusters of the chosen level.
    """

    leaf: np.ndarray
    merges: np.ndarray
    base: int

    @property
    def leaf_count(self) -> int:
        return len(self.merges) + 1

    def cut(self, m: int) -> np.ndarray:
        """(L,) cluster of each leaf at ``m`` clusters, numbered biggest first.

        Example:
            >>> Tree(np.array([0, 0, 1, 2]), np.array([[1, 2], [0, 1]]), 2).cut(2).tolist()
            [0, 1, 1]
        """
        size = self.leaf_count
        m = int(min(max(m, 1), size))
        parent = np.arange(size)

        def root(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b in self.merges[:size - m]:
            parent[root(int(b))] = root(int(a))
        roots = np.array([root(i) for i in range(size)])
        _, group = np.unique(roots, return_inverse=True)
        docs = np.bincount(self.leaf[self.leaf >= 0], minlength=size)  # documents per leaf
        weight = np.bincount(group, weights=docs)
        order = np.argsort(-weight, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return rank[group].astype(np.int64)

    def assign(self, m: int) -> np.ndarray:
        """(n,) cluster of each document at ``m`` clusters (-1 stays -1)."""
        return np.where(self.leaf >= 0, self.cut(m)[np.maximum(self.leaf, 0)], -1)


def level_counts(base: int, leaves: int) -> list[int]:
    """The levels offered: the chosen one, halved down to 2 and doubled up to the leaves.

    Example:
        >>> level_counts(12, 150)
        [3, 6, 12, 24, 48, 96, 150]
    """
    down = []
    k = base
    while k // 2 >= 2:
        k //= 2
        down.append(k)
    up = []
    k = base
    while k * 2 < leaves:
        k *= 2
        up.append(k)
    return sorted({*down, base, *up, leaves})


def leaf_total(n: int, base: int) -> int:
    """How many leaves: at least 4 per cluster and 80 in all, at most ``MAX_LEAVES`` or n/5.

    Example:
        >>> leaf_total(100_000, 12), leaf_total(300, 3)
        (80, 60)
    """
    return int(max(base, min(MAX_LEAVES, max(4 * base, 80), n // 5)))


def _split(vectors: np.ndarray, rows: np.ndarray, parts: int, seed: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """k-means of one cluster's rows into ``parts``: (label per row, centres).

    A cluster of more than ``SPLIT_SAMPLE`` rows is split by k-means fitted on a
    random sample of that many and every row then given its nearest centre: at a
    million documents, fitting on all rows took 198 of the job's 271 s, for leaves
    (at most ``MAX_LEAVES`` in all) that a sample of hundreds per leaf places as well.
    """
    if parts <= 1:
        return np.zeros(len(rows), np.int64), vectors[rows].mean(axis=0, keepdims=True)
    from sklearn.cluster import KMeans

    model = KMeans(n_clusters=parts, n_init=1, random_state=seed)
    if len(rows) <= SPLIT_SAMPLE:
        model.fit(vectors[rows])
        return model.labels_.astype(np.int64), model.cluster_centers_
    picked = np.sort(np.random.default_rng(seed).choice(len(rows), SPLIT_SAMPLE, replace=False))
    model.fit(vectors[rows[picked]])
    labels = np.concatenate([model.predict(vectors[part])
                             for part in np.array_split(rows, -(-len(rows) // SPLIT_SAMPLE))])
    return labels.astype(np.int64), model.cluster_centers_


def build_tree(vectors: np.ndarray, assign: np.ndarray, leaves: int | None = None,
               seed: int = 0) -> Tree:
    """The tree over ``assign``'s clusters (ids 0..k-1, -1 outliers) of unit ``vectors``.

    Example:
        >>> v = np.eye(4)[[0, 0, 1, 1, 2, 2, 3, 3]] + 0.01
        >>> build_tree(v, np.array([0, 0, 0, 0, 1, 1, 1, 1]), leaves=4).cut(2).tolist()
        [0, 0, 1, 1]
    """
    groups = rows_by_cluster(assign)
    base = len(groups)
    total = leaves or leaf_total(int((assign >= 0).sum()), base)
    clustered = sum(len(r) for r in groups.values())
    leaf = np.full(len(assign), -1, dtype=np.int64)
    centres, weights, inner, first_leaf = [], [], [], {}
    for c in sorted(groups):
        rows = groups[c]
        parts = int(min(len(rows), max(1, round(total * len(rows) / max(clustered, 1)))))
        labels, sub = _split(vectors, rows, parts, seed)
        offset = len(centres)
        first_leaf[c] = offset
        counts = np.bincount(labels, minlength=len(sub))
        keep = np.flatnonzero(counts)  # k-means may leave a part empty
        renumber = np.full(len(sub), -1)
        renumber[keep] = np.arange(len(keep)) + offset
        leaf[rows] = renumber[labels]
        centres.extend(sub[keep])
        weights.extend(counts[keep])
        inner += [(cost, a + offset, b + offset)
                  for a, b, cost in ward_merges(sub[keep], counts[keep])]
    merges = [(a, b) for _, a, b in sorted(inner)]
    if base > 1:
        ids = sorted(groups)
        tops = np.stack([vectors[groups[c]].mean(axis=0) for c in ids])
        sizes = np.array([len(groups[c]) for c in ids])
        merges += [(first_leaf[ids[a]], first_leaf[ids[b]])
                   for a, b, _ in ward_merges(tops, sizes)]
    return Tree(leaf, np.asarray(merges, dtype=np.int64).reshape(-1, 2), base)
