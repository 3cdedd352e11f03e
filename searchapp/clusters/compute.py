"""The whole clustering of an index: k-NN graph, clusters, map, names, in steps with progress.

Example:
    >>> out = compute(index, ClusterParams("kmeans", k=3), texts_of)   # doctest: +SKIP
    >>> out["clusters"][0]["label"]                                  # doctest: +SKIP
    'dog running on the beach'
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace

import numpy as np

from searchapp.clusters.algorithms import (
    Counts,
    by_size,
    community_detection,
    far_members,
    hdbscan_clusters,
    kmeans_clusters,
    lonely,
)
from searchapp.clusters.constraints import constrained
from searchapp.clusters.hierarchy import Tree, build_tree, choose_k, level_counts
from searchapp.clusters.names import cluster_names, title_of
from searchapp.clusters.naming import (
    NAMING_TERMS,
    TOP_TERMS,
    central_members,
    ctfidf_scored,
    naming_rows,
    term_counts,
)
from searchapp.clusters.params import CONSTRAINED, GRAPH_K, STEPS, ClusterParams
from searchapp.clusters.projection import Phase, reduce
from searchapp.errors import CorpusChangedError
from searchapp.vectors.index import VectorIndex

Progress = Callable[..., None]  # (step, STEPS, message, items=(done, total) | None, unit=None)
TextsOf = Callable[[np.ndarray], list[str]]  # document ids -> their texts ("" if gone)
TitlesOf = Callable[[np.ndarray], list[str]]  # document ids -> their titles (``title_of``)


def first_lines(texts_of: TextsOf) -> TitlesOf:
    """Titles from the texts alone: each document's first line (``names.title_of``)."""
    return lambda ids: [title_of(None, text) for text in texts_of(ids)]


class _Titles:
    """Titles of the rows named so far, read once each: every level asks for its centres."""

    def __init__(self, ids: np.ndarray, titles_of: TitlesOf) -> None:
        self._ids, self._titles_of, self._known = ids, titles_of, {}

    def __call__(self, rows: list[int]) -> list[str]:
        wanted = sorted({r for r in rows if r not in self._known})
        if wanted:
            self._known.update(zip(wanted, self._titles_of(self._ids[wanted]), strict=True))
        return [self._known[r] for r in rows]


def _expander(index: VectorIndex, ids: np.ndarray, vectors: np.ndarray, k: int,
              threshold: float) -> Callable[[int], np.ndarray]:
    """``row → rows at cosine ≥ threshold``, asking the index for ever more neighbours."""

    def expand(row: int) -> np.ndarray:
        want = 4 * k
        while True:
            labels, scores = index.search(vectors[row:row + 1], want)
            if scores[0, -1] < threshold or want >= index.count:
                break
            want *= 4
        return np.searchsorted(ids, labels[0, scores[0] >= threshold])

    return expand


class IndexLoan:
    """An index lent to one computation, handed back as soon as the clusters are assigned.

    The map and the names need only the vectors; at a million documents the
    index is another 1.7 GB, so a job gives it back (``give_back`` drops it
    from the process' cache; it is loaded again when next needed) before UMAP.
    """

    def __init__(self, index: VectorIndex, give_back: Callable[[], None] | None = None):
        self.index: VectorIndex | None = index
        self._give_back = give_back

    def done(self) -> None:
        self.index = None
        if self._give_back is not None:
            self._give_back()


@contextlib.contextmanager
def _unchanged(index: VectorIndex, ids: np.ndarray) -> Iterator[None]:
    """Raise CorpusChangedError if the index's live labels stop being ``ids`` meanwhile.

    The k-NN graph and the clustering read the index again and again and map
    its labels to rows of ``ids``; an index caught up to a newer corpus version
    in the middle (another thread of the process opening the corpus) would
    make those rows wrong: an IndexError, or silently wrong clusters. Such
    errors, and a change found at the end, become one clear error instead.
    """
    try:
        yield
    except (RuntimeError, IndexError, ValueError) as exc:  # hnswlib, numpy on stale rows
        if not np.array_equal(index.labels(), ids):
            raise CorpusChangedError() from exc
        raise
    if not np.array_equal(index.labels(), ids):
        raise CorpusChangedError()


class _Laps:
    """Seconds per named step."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._clock = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self._clock, 3)
        self._clock = now


def _phase(report: Progress, step: int, head: str) -> Phase:
    """A reduction's ``Phase`` reported as ``step`` of the job: ``head: what``, with its counts."""
    return lambda what, items=None, unit=None: report(step, STEPS, f"{head}: {what}",
                                                      items=items, unit=unit)


def _kmeans_runs(report: Progress, k: int, n: int) -> Counts:
    """k-means' runs as step 2's counts; a single run (above 50,000 documents) has none."""

    def on_start(done: int, total: int) -> None:
        if total > 1:
            report(2, STEPS, f"Clustering by k-means (k={k}): {done} of {total} runs done",
                   items=(done, total), unit="runs")
        elif done == 0:
            report(2, STEPS, f"Clustering by k-means (k={k}): one run over {n:,} documents, "
                   "with no progress from scikit-learn to count")

    return on_start


def _auto(vectors: np.ndarray, report: Progress) -> tuple[np.ndarray, int, dict[int, float]]:
    """k-means with k chosen by silhouette; every document in a cluster (no outliers)."""
    report(2, STEPS, f"Choosing the number of clusters: k-means and silhouette on a sample of "
           f"{min(len(vectors), 4_000):,} documents")
    k, scores = choose_k(vectors)
    assign = kmeans_clusters(vectors, k, on_start=_kmeans_runs(report, k, len(vectors)),
                             outliers=False)
    return assign, k, scores


def _assign(index: VectorIndex, ids: np.ndarray, vectors: np.ndarray, params: ClusterParams,
            neighbours, scores, lap: _Laps, report: Progress) -> np.ndarray:
    """Cluster per row (-1: outlier), numbered from the biggest cluster down."""
    if params.method == "community":
        expand = _expander(index, ids, vectors, neighbours.shape[1], params.threshold)
        phase = _phase(report, 2, "Clustering by community detection")
        assign = community_detection(
            neighbours, scores, params.threshold, params.min_size, expand,
            on_rows=lambda done, total: phase(f"{done:,} of {total:,} candidate centres tried",
                                              items=(done, total), unit="documents"))
    elif params.method == "kmeans":
        assign = kmeans_clusters(vectors, params.k,
                                 on_start=_kmeans_runs(report, params.k, len(vectors)))
    else:
        reduced, _ = reduce(vectors, 5, params.projection, neighbours, scores, min_dist=0.0,
                            phase=_phase(report, 2, "Reducing to 5 dimensions for HDBSCAN"))
        lap("reduce_5d")
        report(2, STEPS, f"Clustering by HDBSCAN on the 5-d reduction of {len(vectors):,} "
               "documents, with no progress from scikit-learn to count")
        assign = hdbscan_clusters(reduced, params.min_size)
        assign[lonely(scores, min(params.min_size, 15))] = -1
        assign = far_members(vectors, assign)
    return by_size(assign)


def _graph(index: VectorIndex, ids: np.ndarray, params: ClusterParams, report: Progress
           ) -> tuple[np.ndarray, np.ndarray]:
    """The k-NN graph as (row positions (n, k) int32, cosines (n, k)), rows in ``ids`` order."""
    n = len(ids)
    report(1, STEPS, f"Finding the {GRAPH_K} nearest neighbours of {n:,} documents")
    graph_k = max(GRAPH_K, params.min_size or 0) if params.method == "community" else GRAPH_K
    labels, scores = index.knn_graph(graph_k, on_batch=lambda done: report(
        1, STEPS, f"Finding the {GRAPH_K} nearest neighbours: {done:,} of {n:,} documents",
        items=(done, n)))
    return np.searchsorted(ids, labels).astype(np.int32), scores  # labels → row positions


def _named(vectors: np.ndarray, assign: np.ndarray, counts, terms: np.ndarray,
           rows: np.ndarray, titles: _Titles) -> list[dict]:
    """The clusters of one level: id, label (``names``), terms, size and 3 central rows."""
    scored = ctfidf_scored(counts, terms, assign[rows], NAMING_TERMS)
    central = central_members(vectors, assign)
    order = sorted(central)
    found = iter(titles([r for c in order for r in central[c]]))
    names = cluster_names({c: scored.get(c, []) for c in order},
                          {c: [next(found) for _ in central[c]] for c in order})
    sizes = np.bincount(assign[assign >= 0], minlength=len(central))
    return [{"id": c, "label": names[c],
             "terms": [t.term for t in scored.get(c, [])][:TOP_TERMS],
             "size": int(sizes[c]), "central_rows": central[c]} for c in order]


def _levels(vectors: np.ndarray, tree: Tree, counts, terms: np.ndarray, rows: np.ndarray,
            titles: _Titles) -> tuple[list[dict], np.ndarray]:
    """Every level of the tree named: ([{count, clusters}], cuts (levels, L))."""
    out, cuts = [], []
    for m in level_counts(tree.base, tree.leaf_count):
        cut = tree.cut(m)
        assign = np.where(tree.leaf >= 0, cut[np.maximum(tree.leaf, 0)], -1)
        out.append({"count": m,
                    "clusters": _named(vectors, assign, counts, terms, rows, titles)})
        cuts.append(cut)
    return out, np.stack(cuts)


def _rows_to_ids(ids: np.ndarray, clusters: list[dict]) -> None:
    """Central rows become document ids (``example_id`` the first, ``central_ids`` all)."""
    for c in clusters:
        rows = c.pop("central_rows")
        c["central_ids"] = [int(ids[r]) for r in rows]
        c["example_id"] = c["central_ids"][0]


def merge_links(merged: list[np.ndarray]) -> np.ndarray:
    """Per merge, its documents linked in a chain: (p, 3) doc id, doc id, 1 ("together").

    Example:
        >>> merge_links([np.array([4, 9, 2])]).tolist()
        [[2, 4, 1], [4, 9, 1]]
    """
    links = [np.stack([m[:-1], m[1:], np.ones(len(m) - 1, np.int64)], axis=1)
             for m in (np.unique(np.asarray(m, np.int64)) for m in merged) if len(m) > 1]
    return np.vstack(links) if links else np.zeros((0, 3), np.int64)


def _pair_rows(ids: np.ndarray, pairs: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Judged pairs (p, 3: doc id, doc id, label 1/0) as (must-link, cannot-link) row pairs."""
    if pairs is None or len(pairs) == 0:
        return np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64)
    pos = np.clip(np.searchsorted(ids, pairs[:, :2]), 0, len(ids) - 1)
    known = (ids[pos] == pairs[:, :2]).all(axis=1)  # both documents in this clustering
    return pos[known & (pairs[:, 2] == 1)], pos[known & (pairs[:, 2] == 0)]


def compute(index: VectorIndex | IndexLoan, params: ClusterParams, texts_of: TextsOf,
            progress: Progress | None = None, pairs: np.ndarray | None = None,
            merged: list[np.ndarray] | None = None, titles_of: TitlesOf | None = None) -> dict:
    """Cluster every live vector of ``index`` (or of an ``IndexLoan``, returned after step 2).

    The documents are those of the index when it starts; texts of documents
    deleted since are empty to ``texts_of``. Raises CorpusChangedError when the
    index itself changes while it is read (lend the job an index no one else
    updates, as ``compute_and_store`` does for jobs, and that cannot happen).

    Returns ``params`` (resolved; for ``auto`` with the k it chose),
    ``projection``, ``ids`` (n,) document ids in index order, ``assign`` (n,)
    cluster or -1, ``coords`` (n, 2), ``clusters`` (id, label, terms, size,
    example_id, central_ids), the hierarchy (``leaf`` (n,), ``cuts`` (levels,
    L), ``levels``: count and clusters per level, ``level``: the count of
    ``clusters``), ``silhouettes`` (auto: the score of each k tried) and
    ``seconds`` per step.

    ``pairs`` (judged pairs) and ``merged`` (per merge a person made: the sorted
    document ids of the clusters joined) act as constraints on the centroid
    methods: a merge's documents are linked in a chain, so they move together to
    one cluster, as a "duplicate" pair's do.

    ``titles_of`` (document ids → titles; by default each text's first line)
    gives the central documents' titles that may name a cluster (``names``).

    ``progress(step, STEPS, message, items=(done, total), unit=...)`` hears
    what runs, with counts where the work has a unit to count: documents of
    the k-NN graph, candidate centres of community detection, k-means runs,
    UMAP epochs, documents PCA projected in chunks. HDBSCAN and UMAP's
    weighing of the graph report nothing to count; their messages say so.
    """
    report = progress or (lambda done, total, message, items=None, unit=None: None)
    loan = index if isinstance(index, IndexLoan) else IndexLoan(index)
    index = loan.index
    ids = index.labels()
    n = len(ids)
    params = params.resolved(n)
    lap = _Laps()
    silhouettes = None
    with _unchanged(index, ids):
        vectors = index.vectors(ids)  # (n, dim), unit length
        neighbours = scores = None
        if params.method not in ("kmeans", "auto") or params.projection == "umap":
            neighbours, scores = _graph(index, ids, params, report)
            lap("knn_graph")
        if params.method == "auto":
            assign, k, silhouettes = _auto(vectors, report)
            params = replace(params, k=k)
        else:
            assign = _assign(index, ids, vectors, params, neighbours, scores, lap, report)
        unmet, applied = 0, 0
        if params.method in CONSTRAINED:
            must, cannot = _pair_rows(ids, pairs)
            applied = len(must) + len(cannot)
            links = _pair_rows(ids, merge_links(merged or []))[0]
            assign, unmet = constrained(vectors, assign, np.vstack([must, links]), cannot)
        assign = by_size(assign)
        if params.method == "auto":  # identical vectors can leave fewer clusters than asked
            params = replace(params, k=int(assign.max(initial=0)) + 1)
    del index
    loan.done()
    lap("cluster")
    coords, projection = reduce(vectors, 2, params.projection, neighbours, scores,
                                phase=_phase(report, 3, "Drawing the map"))
    lap("map")
    report(4, STEPS, f"Building the tree of levels over the {len(np.unique(assign[assign >= 0]))}"
           " clusters: k-means inside each, Ward over their centres")
    tree = build_tree(vectors, assign)
    lap("hierarchy")
    report(4, STEPS, "Naming the clusters at every level")
    rows = naming_rows(assign)
    counts, terms = term_counts(texts_of(ids[rows]))
    titles = _Titles(ids, titles_of or first_lines(texts_of))
    levels, cuts = _levels(vectors, tree, counts, terms, rows, titles)
    clusters = _named(vectors, assign, counts, terms, rows, titles)
    for lv in [*levels, {"clusters": clusters}]:
        _rows_to_ids(ids, lv["clusters"])
    lap("labels")
    return {"params": asdict(params), "projection": projection, "ids": ids,
            "assign": assign, "coords": coords, "clusters": clusters,
            "levels": levels, "leaf": tree.leaf, "cuts": cuts, "level": tree.base,
            "silhouettes": silhouettes, "unmet_pairs": unmet, "applied_pairs": applied,
            "merges": len(merged or []) if params.method in CONSTRAINED else 0,
            "seconds": lap.seconds}
