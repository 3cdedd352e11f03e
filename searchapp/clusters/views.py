"""What the map and the cluster list show: an even sample to draw, a cluster's members.

Everything here reads only the rows it shows: a map of 20,000 points out of a
million reads 20,000 texts; opening a cluster reads its first ``limit`` members.

Example:
    >>> rows = sample_evenly(np.repeat([0, 1, -1], [900, 90, 10]), 200)
    >>> np.bincount(np.repeat([0, 1, -1], [900, 90, 10])[rows] + 1).tolist()
    [10, 150, 41]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from searchapp.clusters.result import ClusterResult
from searchapp.context import App
from searchapp.store import repo

MAP_MAX_POINTS = 20_000  # more than this and a browser draws the scatter slowly
SAMPLE_FLOOR = 50  # every cluster keeps at least this many points (or all it has)


def sample_evenly(cluster: np.ndarray, max_points: int, seed: int = 0) -> np.ndarray:
    """Sorted rows to draw, at most about ``max_points``: every cluster keeps its share.

    Each cluster (and the outliers) first keeps a floor of points, ``SAMPLE_FLOOR``
    or less when there are so many clusters that floors alone would pass half
    the budget; the rest of the budget is shared in proportion to what each
    has beyond its floor (rounded up or down at random, fair on average). Small
    clusters stay visible and the map keeps its shape; the total stays bounded
    at 10,000 clusters as at 10. One sort, whatever the number of clusters.
    """
    n = len(cluster)
    if n <= max_points:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    order = np.argsort(cluster, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(cluster[order])) + 1)
    floor = min(SAMPLE_FLOOR, max_points // (2 * len(groups)))  # 0 past max_points/2 groups
    floors = np.array([min(len(g), floor) for g in groups])
    rest = np.array([len(g) for g in groups]) - floors  # (groups,) members beyond the floor
    extra = rest * max(0, max_points - floors.sum()) / max(rest.sum(), 1)
    extra = np.floor(extra) + (rng.random(len(groups)) < extra % 1)  # unbiased rounding
    keep = [rng.choice(g, size=int(min(len(g), f + e)), replace=False)
            for g, f, e in zip(groups, floors, extra, strict=True)]
    return np.sort(np.concatenate(keep))


def shorten(text: str, limit: int = 120) -> str:
    """One line of at most ``limit`` characters (for hover boxes)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def clusters_of(result: ClusterResult, doc_ids) -> list[int | None]:
    """The cluster of each document id (None: not in this result, e.g. added since)."""
    ids = np.asarray(list(doc_ids), dtype=np.int64)
    pos = np.clip(np.searchsorted(result.doc_ids, ids), 0, max(result.size - 1, 0))
    found = result.size > 0 and result.doc_ids[pos] == ids
    return [int(result.cluster[p]) if ok else None
            for p, ok in zip(pos, np.broadcast_to(found, ids.shape), strict=True)]


def _rows(app: App, result: ClusterResult, rows: np.ndarray) -> pd.DataFrame:
    """doc_id, id, cluster, label, x, y, text for the given rows of the result."""
    doc_ids = result.doc_ids[rows]
    with app.db.session() as s:
        docs = repo.documents_by_id(s, doc_ids.tolist())
    labels = result.labels()
    return pd.DataFrame({
        "doc_id": doc_ids,
        "id": [docs[i].external_id if i in docs else "" for i in doc_ids.tolist()],
        "cluster": result.cluster[rows],
        "label": [labels[int(c)] for c in result.cluster[rows]],
        "x": result.x[rows], "y": result.y[rows],
        "text": [shorten(docs[i].text) if i in docs else "(deleted since)"
                 for i in doc_ids.tolist()]})


def map_frame(app: App, result: ClusterResult, max_points: int = MAP_MAX_POINTS,
              highlight=()) -> pd.DataFrame:
    """The points to draw: an even sample per cluster plus every highlighted document.

    ``highlight`` holds document ids (``SearchHit.doc_id``). Returns a DataFrame
    (doc_id, id, cluster, label, x, y, text, highlight); ``result.size`` tells
    how many documents there are in all.
    """
    def sampled() -> pd.DataFrame:
        return _rows(app, result, sample_evenly(result.cluster, max_points))

    if result.generation >= 0:  # the same sample every rerun: made once per generation
        base = app.memo.get_or_make(result.corpus_id, result.generation,
                                    ("map", result.key, max_points), sampled)
    else:
        base = sampled()
    wanted = np.asarray(list(highlight), np.int64)
    extra = np.flatnonzero(np.isin(result.doc_ids, wanted[~np.isin(wanted, base.doc_id)]))
    frame = pd.concat([base, _rows(app, result, extra)], ignore_index=True) if len(extra) \
        else base.copy()
    frame["highlight"] = frame.doc_id.isin(wanted)
    return frame


def cluster_members(app: App, result: ClusterResult, cluster_id: int, limit: int = 1000
                    ) -> pd.DataFrame:
    """Documents of one cluster (-1: the outliers), nearest its centre on the map first."""
    rows = np.flatnonzero(result.cluster == cluster_id)
    xy = np.stack([result.x[rows], result.y[rows]], axis=1)
    centre = xy.mean(axis=0) if len(rows) else np.zeros(2)
    order = rows[np.argsort(((xy - centre) ** 2).sum(axis=1), kind="stable")][:limit]
    return _rows(app, result, order)[["id", "text"]].reset_index(drop=True)


def documents_frame(app: App, result: ClusterResult, doc_ids) -> pd.DataFrame:
    """id, cluster, label, text (whole) of the given documents, in the order given: a
    selection on the map, for its list and its CSV. Documents not in the result are left out.
    """
    wanted = np.asarray(list(doc_ids), dtype=np.int64)
    pos = np.searchsorted(result.doc_ids, wanted)
    ok = (pos < result.size) & (result.doc_ids[np.clip(pos, 0, max(result.size - 1, 0))]
                                == wanted) if result.size else np.zeros(len(wanted), bool)
    rows = pos[ok]
    with app.db.session() as s:
        docs = repo.documents_by_id(s, result.doc_ids[rows].tolist())
    labels = result.labels()
    ids = result.doc_ids[rows].tolist()
    return pd.DataFrame({
        "id": [docs[i].external_id if i in docs else "" for i in ids],
        "cluster": result.cluster[rows],
        "label": [labels[int(c)] for c in result.cluster[rows]],
        "text": [docs[i].text if i in docs else "(deleted since)" for i in ids]})


def find_documents(app: App, result: ClusterResult, external_ids) -> list[int]:
    """Document ids (primary keys) of the given external ids that are in the result."""
    with app.db.session() as s:
        found = [repo.document_by_external_id(s, result.corpus_id, str(e)) for e in external_ids]
        ids = [d.id for d in found if d is not None]
    return [i for i, c in zip(ids, clusters_of(result, ids), strict=True) if c is not None]


def clusters_table(result: ClusterResult) -> pd.DataFrame:
    """One row per cluster (and one for the outliers): id, label, size, terms, example."""
    rows = [{"cluster": c["id"], "label": c["label"], "size": c["size"],
             "terms": ", ".join(c.get("terms", [])), "example_id": c.get("example", ""),
             "example": c.get("example_text", "")} for c in result.clusters]
    rows.append({"cluster": -1, "label": "outliers", "size": result.outliers, "terms": "",
                 "example_id": "", "example": ""})
    return pd.DataFrame(rows)
