"""Clusters of a corpus: groups, a 2-D map, and a name for each group.

Three methods, all on the corpus' unit vectors:

- ``community``: the community detection of sentence-transformers (a document
  with at least ``min_size - 1`` neighbours at cosine ≥ ``threshold`` is a
  centre; its neighbours form a community; the biggest communities are taken
  first and never overlap), computed over the HNSW k-NN graph instead of all
  pairs, so it scales to corpora of any size. A centre whose k neighbours all
  pass the threshold asks the index for more.
- ``hdbscan``: scikit-learn's HDBSCAN on a 5-D UMAP reduction (as BERTopic
  does; PCA when the map is PCA); documents isolated in the original space
  (see ``lonely``) stay outliers.
- ``kmeans``: k-means with a chosen k.

Documents that belong nowhere are outliers (cluster -1), never forced into a
cluster; k-means, which assigns everything, marks as outliers the documents far
less similar to their centre than the cluster's typical member.

The 2-D map is UMAP (on the same k-NN graph) or PCA, the fast fallback. Each
cluster is named by its top c-TF-IDF terms (BERTopic's class-based TF-IDF over
a CountVectorizer with English stop words removed), and shown by its most
central document. Results are stored per (corpus, model, parameters) in the
``analyses`` table and reused while the corpus' embeddings are unchanged.

Example:
    >>> result, job_id = request_clusters(app, "faq", ClusterParams("kmeans", 8)) # doctest: +SKIP
    >>> result.summary()["clusters"][0]                                      # doctest: +SKIP
    {'id': 0, 'label': 'password, reset, login', 'size': 412, 'example': 'q-1832'}
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import numpy as np

from searchapp.context import App
from searchapp.errors import InvalidParameterError, check_range
from searchapp.index import VectorIndex
from searchapp.jobs import queue
from searchapp.store import repo

KIND = "clusters"
METHODS = ("community", "hdbscan", "kmeans")
PROJECTIONS = ("umap", "pca")
MIN_DOCUMENTS = 3
MAX_K = 500
DEFAULT_THRESHOLD = 0.4  # topic-level groups; SBERT uses 0.75 for near paraphrases
GRAPH_K = 30  # neighbours per document in the k-NN graph (community detection, UMAP)
UMAP_MIN_DOCUMENTS = 30  # below this UMAP is unreliable: PCA instead
TOP_TERMS = 10
LABEL_TERMS = 4
STEPS = 6
# What the label tokenizer leaves of "don't", "we'll", ...: not words worth a label.
CONTRACTION_PARTS = frozenset({"don", "doesn", "didn", "isn", "wasn", "aren", "weren", "haven",
                               "hasn", "couldn", "wouldn", "shouldn", "won", "ll", "ve", "re"})

Progress = Callable[[int, int, str], None]


# ---- parameters ---------------------------------------------------------------
@dataclass(frozen=True)
class ClusterParams:
    """What to compute. ``None`` means "chosen from the corpus size" (see ``resolved``).

    Example:
        >>> ClusterParams("kmeans", k=5).validated().key()
        '{"k": 5, "method": "kmeans", "min_size": null, "projection": "umap", "threshold": null}'
    """

    method: str = "community"
    k: int | None = None  # k-means only
    min_size: int | None = None  # community, hdbscan
    threshold: float | None = None  # community only
    projection: str = "umap"

    @classmethod
    def from_dict(cls, d: dict) -> ClusterParams:
        fields = {k: d[k] for k in ("method", "k", "min_size", "threshold", "projection")
                  if d.get(k) is not None}
        return cls(**fields).validated()

    def validated(self) -> ClusterParams:
        """Checked, with the parameters the method ignores set to None (one key per result)."""
        if self.method not in METHODS:
            raise InvalidParameterError(
                f"Unknown clustering method {self.method!r}; use one of: {', '.join(METHODS)}.")
        if self.projection not in PROJECTIONS:
            raise InvalidParameterError(
                f"Unknown map projection {self.projection!r}; use one of: "
                f"{', '.join(PROJECTIONS)}.")
        if self.k is not None:
            check_range("k", self.k, 2, MAX_K)
        if self.min_size is not None:
            check_range("min_size", self.min_size, 2, 1_000_000)
        if self.threshold is not None:
            check_range("threshold", self.threshold, 0.0, 1.0)
        if self.method == "kmeans":
            return replace(self, min_size=None, threshold=None)
        if self.method == "hdbscan":
            return replace(self, k=None, threshold=None)
        # The default threshold is part of the key: a new default never reuses old results.
        return replace(self, k=None, threshold=DEFAULT_THRESHOLD if self.threshold is None
                       else self.threshold)

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def resolved(self, n: int) -> ClusterParams:
        """Automatic values filled in for a corpus of ``n`` documents.

        k-means: k ≈ √n / 4 within [2, 30]; HDBSCAN: min_size ≈ n / 200 within
        [5, 500]; community: min_size ≈ n / 1000 within [3, 25].
        """
        if n < MIN_DOCUMENTS:
            raise InvalidParameterError(
                f"Clustering needs at least {MIN_DOCUMENTS} embedded documents; there "
                f"{'is' if n == 1 else 'are'} {n}. Add documents first.")
        p = self.validated()
        if p.method == "kmeans" and p.k is None:
            p = replace(p, k=int(min(30, max(2, round(math.sqrt(n) / 4)))))
        if p.method == "hdbscan" and p.min_size is None:
            p = replace(p, min_size=int(min(500, max(5, n // 200))))
        if p.method == "community":
            p = replace(p, min_size=p.min_size or int(min(25, max(3, n // 1000))))
        if p.method == "kmeans" and p.k >= n:
            raise InvalidParameterError(
                f"k={p.k} needs more than {p.k} documents; the corpus has {n}. "
                f"Choose k between 2 and {n - 1}.")
        return p


# ---- the result -----------------------------------------------------------------
@dataclass(frozen=True)
class ClusterResult:
    """A stored clustering: clusters (biggest first) and one row per document.

    ``doc_ids``, ``ids``, ``cluster``, ``x``, ``y`` are parallel lists (document
    primary key, external id, cluster or -1, map position).
    """

    corpus: str
    params: dict  # as resolved for this corpus
    projection: str  # the map actually drawn (PCA where UMAP cannot run)
    clusters: list[dict]  # id, label, terms, size, example, example_text
    doc_ids: list[int]
    ids: list[str]
    cluster: list[int]
    x: list[float]
    y: list[float]
    seconds: dict

    @property
    def outliers(self) -> int:
        return sum(1 for c in self.cluster if c < 0)

    @property
    def outlier_share(self) -> float:
        return self.outliers / len(self.cluster) if self.cluster else 0.0

    def summary(self, assignments: bool = True) -> dict:
        """The CLI's JSON: clusters, outlier count and (optionally) every assignment."""
        out = {"clusters": [{k: c[k] for k in ("id", "label", "size", "example")}
                            for c in self.clusters],
               "outliers": self.outliers}
        if assignments:
            out["assignments"] = [{"id": i, "cluster": c, "x": x, "y": y} for i, c, x, y in
                                  zip(self.ids, self.cluster, self.x, self.y, strict=True)]
        return out

    def frame(self):
        """One row per document: doc_id, id, cluster, label, x, y (a pandas DataFrame)."""
        import pandas as pd

        labels = {c["id"]: c["label"] for c in self.clusters} | {-1: "outlier"}
        return pd.DataFrame({"doc_id": self.doc_ids, "id": self.ids, "cluster": self.cluster,
                             "label": [labels[c] for c in self.cluster],
                             "x": self.x, "y": self.y})

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> ClusterResult:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


# ---- the math: clusters ---------------------------------------------------------
def community_detection(neighbours: np.ndarray, scores: np.ndarray, threshold: float,
                        min_size: int, expand: Callable[[int], np.ndarray] | None = None
                        ) -> np.ndarray:
    """SBERT-style communities over a k-NN graph; returns a cluster per row (-1: none).

    ``neighbours`` (n, k) holds row positions, ``scores`` (n, k) their cosines,
    best first. A row with at least ``min_size - 1`` neighbours at ≥ threshold
    is a centre; centres are taken densest first, each claiming the still free
    members of its community. ``expand(row)`` returns all rows at ≥ threshold
    (used when all k neighbours pass, so big communities are not cut at k).

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
    for row in order:
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
    return assign


def kmeans_clusters(vectors: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """k-means on unit vectors (then ``far_members`` become outliers)."""
    from sklearn.cluster import KMeans

    model = KMeans(n_clusters=k, n_init=3 if len(vectors) <= 50_000 else 1, random_state=seed)
    return far_members(vectors, model.fit_predict(vectors).astype(np.int64))


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
    for c in np.unique(assign[assign >= 0]):
        members = np.flatnonzero(assign == c)
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


# ---- the math: map and reductions ---------------------------------------------------
def _umap_knn(neighbours: np.ndarray, scores: np.ndarray, n_neighbors: int):
    """The k-NN graph in UMAP's precomputed form: self first, cosine distances."""
    n = len(neighbours)
    idx = np.hstack([np.arange(n)[:, None], neighbours[:, :n_neighbors - 1]])
    dist = np.hstack([np.zeros((n, 1), np.float32), 1.0 - scores[:, :n_neighbors - 1]])
    return idx.astype(np.int64), dist.clip(0.0).astype(np.float32)


def reduce(vectors: np.ndarray, dims: int, method: str, neighbours: np.ndarray | None = None,
           scores: np.ndarray | None = None, min_dist: float = 0.1, seed: int = 0
           ) -> tuple[np.ndarray, str]:
    """Reduce (n, d) vectors to (n, dims) with UMAP (reusing the k-NN graph) or PCA.

    Returns the coordinates and the method used: PCA where UMAP cannot run
    (fewer than UMAP_MIN_DOCUMENTS documents, or no k-NN graph).
    """
    n = len(vectors)
    if method == "umap" and n >= UMAP_MIN_DOCUMENTS and neighbours is not None:
        import warnings

        import umap

        n_neighbors = min(15, neighbours.shape[1] + 1)
        with warnings.catch_warnings():  # "n_jobs overridden by random_state", "no search index"
            warnings.simplefilter("ignore")
            model = umap.UMAP(n_components=dims, n_neighbors=n_neighbors, metric="cosine",
                              min_dist=min_dist, random_state=seed,
                              precomputed_knn=(*_umap_knn(neighbours, scores, n_neighbors),
                                               None))
            return model.fit_transform(vectors).astype(np.float32), "umap"
    from sklearn.decomposition import PCA

    dims = min(dims, n, vectors.shape[1])
    coords = PCA(n_components=dims, random_state=seed).fit_transform(vectors)
    return coords.astype(np.float32), "pca"


# ---- the math: labels ------------------------------------------------------------
def ctfidf_terms(texts: list[str], assign: np.ndarray, top_n: int = TOP_TERMS
                 ) -> dict[int, list[str]]:
    """Top terms of each cluster by class-based TF-IDF (BERTopic's c-TF-IDF).

    Each cluster's texts are joined into one document; a term scores
    tf(term, cluster) / words(cluster) × log(1 + A / f(term)), with A the mean
    words per cluster and f(term) its count over all clusters. Outliers (-1)
    get no terms. English stop words and tokens without letters are dropped.

    Example:
        >>> ctfidf_terms(["red apple", "apple pie", "fast car", "car race"],
        ...              np.array([0, 0, 1, 1]), top_n=1)
        {0: ['apple'], 1: ['car']}
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    ids = [int(c) for c in np.unique(assign) if c >= 0]
    docs = [" ".join(texts[i] for i in np.flatnonzero(assign == c)) for c in ids]
    if not ids:
        return {}
    vectorizer = CountVectorizer(stop_words=sorted(ENGLISH_STOP_WORDS | CONTRACTION_PARTS),
                                 token_pattern=r"(?u)\b[^\W\d_]{2,}\b")
    try:
        counts = vectorizer.fit_transform(docs).astype(np.float64).tocsr()  # (clusters, V)
    except ValueError:  # nothing but stop words
        return {c: [] for c in ids}
    words = np.asarray(vectorizer.get_feature_names_out())
    per_class = np.asarray(counts.sum(axis=1)).ravel().clip(1)  # (clusters,)
    per_term = np.asarray(counts.sum(axis=0)).ravel()  # (V,)
    idf = np.log1p(per_class.mean() / per_term)
    out = {}
    for row, c in enumerate(ids):
        start, end = counts.indptr[row], counts.indptr[row + 1]
        cols, tf = counts.indices[start:end], counts.data[start:end]
        score = tf / per_class[row] * idf[cols]
        best = np.lexsort((words[cols], -score))[:top_n]  # ties: alphabetical
        out[c] = words[cols[best]].tolist()
    return out


def central_rows(vectors: np.ndarray, assign: np.ndarray) -> dict[int, int]:
    """For each cluster, the row of the member closest (cosine) to the cluster's mean."""
    out = {}
    for c in np.unique(assign[assign >= 0]):
        members = np.flatnonzero(assign == c)
        centre = vectors[members].mean(axis=0)
        out[int(c)] = int(members[np.argmax(vectors[members] @ centre)])
    return out


# ---- the whole computation ----------------------------------------------------------
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


def compute(index: VectorIndex, texts: list[str], params: ClusterParams,
            progress: Progress | None = None) -> dict:
    """Cluster every live vector of ``index``; ``texts`` are in ``index.labels()`` order.

    Returns a dict with ``params`` (resolved), ``projection``, ``clusters``
    (id, label, terms, size, example_row), ``rows`` (cluster per row),
    ``x``/``y`` and ``seconds`` per step.

    Example:
        >>> out = compute(index, texts, ClusterParams("kmeans", k=3))    # doctest: +SKIP
        >>> out["clusters"][0]["label"]                                  # doctest: +SKIP
        'dog, beach, running, sand'
    """
    report = progress or (lambda done, total, message: None)
    ids = index.labels()
    n = len(ids)
    params = params.resolved(n)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = round(now - clock, 3)
        clock = now

    vectors = index.vectors(ids)  # (n, dim), unit length
    need_graph = params.method != "kmeans" or params.projection == "umap"
    neighbours = scores = None
    if need_graph:
        report(1, STEPS, f"Finding the {GRAPH_K} nearest neighbours of {n:,} documents")
        graph_k = max(GRAPH_K, params.min_size or 0) if params.method == "community" else GRAPH_K
        labels, scores = index.knn_graph(graph_k)  # (n, k) labels and cosines
        neighbours = np.searchsorted(ids, labels)  # labels → row positions
        lap("knn_graph")
    report(2, STEPS, f"Clustering with {params.method}")
    if params.method == "community":
        expand = _expander(index, ids, vectors, neighbours.shape[1], params.threshold)
        assign = community_detection(neighbours, scores, params.threshold, params.min_size,
                                     expand)
    elif params.method == "kmeans":
        assign = kmeans_clusters(vectors, params.k)
    else:
        reduced, _ = reduce(vectors, 5, params.projection, neighbours, scores, min_dist=0.0)
        lap("reduce_5d")
        assign = hdbscan_clusters(reduced, params.min_size)
        assign[lonely(scores, min(params.min_size, 15))] = -1
        assign = far_members(vectors, assign)
    assign = by_size(assign)
    lap("cluster")
    report(3, STEPS, f"Drawing the map ({params.projection})")
    coords, projection = reduce(vectors, 2, params.projection, neighbours, scores)
    lap("map")
    report(4, STEPS, "Naming the clusters")
    terms = ctfidf_terms(texts, assign)
    central = central_rows(vectors, assign)
    lap("labels")
    sizes = np.bincount(assign[assign >= 0], minlength=len(central))
    clusters = [{"id": c, "label": ", ".join(terms[c][:LABEL_TERMS]) or f"cluster {c}",
                 "terms": terms[c], "size": int(sizes[c]), "example_row": central[c]}
                for c in sorted(central)]
    return {"params": asdict(params), "projection": projection, "clusters": clusters,
            "rows": assign.tolist(), "x": np.round(coords[:, 0].astype(float), 4).tolist(),
            "y": np.round(coords[:, 1].astype(float), 4).tolist(), "seconds": seconds}


# ---- stored results, jobs ------------------------------------------------------------
def _job_key(corpus: str, params: ClusterParams) -> str:
    return f"{corpus}|{params.key()}"


def _stored(app: App, corpus: str, params: ClusterParams) -> ClusterResult | None:
    from searchapp.search import open_corpus

    handle = open_corpus(app, corpus)
    with app.db.session() as s:
        fingerprint = repo.embedding_fingerprint(s, handle.corpus_id, handle.model.id)
        row = repo.get_analysis(s, handle.corpus_id, handle.model.id, KIND, params.key())
        if row is None or row.fingerprint != fingerprint:
            return None
        return ClusterResult.from_dict(row.result)


def cached_clusters(app: App, corpus: str, params: ClusterParams) -> ClusterResult | None:
    """The stored result for (corpus, its model, params) if the embeddings are unchanged.

    Raises CorpusNotFoundError / EmptyCorpusError for a missing or empty corpus.
    """
    return _stored(app, corpus, params.validated())


def request_clusters(app: App, corpus: str, params: ClusterParams
                     ) -> tuple[ClusterResult | None, int | None]:
    """A fresh stored result, or else the id of the job computing it (queued if needed).

    Example:
        >>> result, job_id = request_clusters(app, "faq", ClusterParams())   # doctest: +SKIP
    """
    from searchapp.search import open_corpus

    params = params.validated()
    result = _stored(app, corpus, params)
    if result is not None:
        return result, None
    params.resolved(open_corpus(app, corpus).index.count)  # too few documents: say so now
    key = _job_key(corpus, params)
    job = queue.active_for(app.db, KIND, "key", key)
    if job is not None:
        return None, job.id
    payload = {"corpus": corpus, "params": asdict(params), "key": key}
    return None, queue.enqueue(app.db, KIND, payload)


def compute_and_store(app: App, corpus: str, params: ClusterParams,
                      progress: Progress | None = None) -> ClusterResult:
    """Compute the clusters of a corpus and store them (reusing a fresh stored result)."""
    from searchapp.search import open_corpus

    params = params.validated()
    stored = _stored(app, corpus, params)
    if stored is not None:
        return stored
    started = time.perf_counter()
    handle = open_corpus(app, corpus)
    with app.db.session() as s:
        fingerprint = repo.embedding_fingerprint(s, handle.corpus_id, handle.model.id)
        docs = repo.document_texts(s, handle.corpus_id)
    ids = handle.index.labels()
    out = compute(handle.index, [docs[int(i)][1] for i in ids], params, progress)
    for c in out["clusters"]:
        row = c.pop("example_row")
        c["example"], c["example_text"] = docs[int(ids[row])]
    out["seconds"]["total"] = round(time.perf_counter() - started, 3)
    result = ClusterResult(corpus=handle.name, params=out["params"],
                           projection=out["projection"], clusters=out["clusters"],
                           doc_ids=ids.tolist(), ids=[docs[int(i)][0] for i in ids],
                           cluster=out["rows"], x=out["x"], y=out["y"], seconds=out["seconds"])
    if progress:
        progress(5, STEPS, "Storing the result")
    with app.db.session() as s:
        repo.save_analysis(s, handle.corpus_id, handle.model.id, KIND, params.key(),
                           asdict(params), fingerprint, result.to_dict(),
                           out["seconds"]["total"])
    return result


def clusters_task(ctx, payload: dict) -> dict:
    """The ``clusters`` job: payload ``{"corpus": NAME, "params": {...}}``.

    Idempotent: a job run again after a crash finds a stored fresh result and
    returns at once, or computes it again from the corpus as it is now.
    """
    params = ClusterParams.from_dict(payload.get("params") or {})
    result = compute_and_store(ctx.app, payload["corpus"], params,
                               lambda done, total, message: ctx.progress(done, total, message))
    ctx.progress(STEPS, STEPS, "Done", force=True)
    return {"corpus": result.corpus, "documents": len(result.ids),
            "clusters": len(result.clusters), "outliers": result.outliers,
            "seconds": result.seconds.get("total")}


def active_job(app: App, corpus: str, params: ClusterParams) -> queue.JobView | None:
    """The queued or running job computing (corpus, params), if any."""
    return queue.active_for(app.db, KIND, "key", _job_key(corpus, params.validated()))


# ---- views: what the map and the cluster list show ------------------------------------
MAP_MAX_POINTS = 20_000  # more than this and a browser draws the scatter slowly
SAMPLE_FLOOR = 50  # every cluster keeps at least this many points (or all it has)


def sample_evenly(cluster: np.ndarray, max_points: int, seed: int = 0) -> np.ndarray:
    """Sorted rows to draw: all if few enough, else the same share of every cluster.

    Each cluster (and the outliers) keeps about ``max_points / n`` of its
    documents, and at least ``SAMPLE_FLOOR``, so the map keeps its shape and
    small clusters stay visible.

    Example:
        >>> rows = sample_evenly(np.repeat([0, 1, -1], [900, 90, 10]), 200)
        >>> np.bincount(np.repeat([0, 1, -1], [900, 90, 10])[rows] + 1).tolist()
        [10, 180, 50]
    """
    n = len(cluster)
    if n <= max_points:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    share = max_points / n
    keep = []
    for c in np.unique(cluster):
        members = np.flatnonzero(cluster == c)
        take = min(len(members), max(SAMPLE_FLOOR, round(len(members) * share)))
        keep.append(rng.choice(members, size=take, replace=False))
    return np.sort(np.concatenate(keep))


def shorten(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters (for hover boxes)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _texts(app: App, doc_ids) -> dict[int, str]:
    with app.db.session() as s:
        return repo.texts_by_id(s, [int(x) for x in doc_ids])


def map_frame(app: App, result: ClusterResult, max_points: int = MAP_MAX_POINTS,
              highlight: list[str] | tuple = ()):
    """The points to draw: an even sample per cluster plus every highlighted document.

    Returns a DataFrame (doc_id, id, cluster, label, x, y, text, highlight);
    ``len(result.ids)`` tells how many there are in all.
    """
    frame = result.frame()
    rows = sample_evenly(frame.cluster.to_numpy(), max_points)
    marked = frame.id.isin(list(highlight))
    frame = frame[frame.index.isin(rows) | marked].copy()
    frame["highlight"] = frame.id.isin(list(highlight))
    texts = _texts(app, frame.doc_id)
    frame["text"] = [shorten(texts.get(i, "")) for i in frame.doc_id]
    return frame.reset_index(drop=True)


def cluster_members(app: App, result: ClusterResult, cluster_id: int, limit: int = 1000):
    """Documents of one cluster (-1: the outliers), nearest its centre on the map first."""
    import pandas as pd

    rows = [i for i, c in enumerate(result.cluster) if c == cluster_id]
    xy = np.array([[result.x[i], result.y[i]] for i in rows]).reshape(-1, 2)
    centre = xy.mean(axis=0) if len(rows) else np.zeros(2)
    order = [rows[j] for j in np.argsort(((xy - centre) ** 2).sum(axis=1), kind="stable")]
    order = order[:limit]
    texts = _texts(app, [result.doc_ids[i] for i in order])
    return pd.DataFrame({"id": [result.ids[i] for i in order],
                         "text": [texts.get(result.doc_ids[i], "") for i in order]})
