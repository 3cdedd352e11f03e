"""Clusters of a corpus: groups, a 2-D map, and a name for each group.

Four methods, all on the corpus' unit vectors:

- ``auto`` (the default): k-means with the number of clusters chosen from the
  data (``hierarchy.choose_k``: the fewest clusters whose silhouette ties the
  best), every document in a cluster; measured against the others in
  benchmarks/results/clusters_quality.md.
- ``community``: the community detection of sentence-transformers (a document
  with at least ``min_size - 1`` neighbours at cosine ≥ ``threshold`` is a
  centre; its neighbours form a community; the biggest communities are taken
  first and never overlap), computed over the HNSW k-NN graph instead of all
  pairs, so it scales to corpora of any size.
- ``hdbscan``: scikit-learn's HDBSCAN on a 5-D UMAP reduction (as BERTopic
  does; PCA when the map is PCA); documents isolated in the original space
  stay outliers.
- ``kmeans``: k-means with a chosen k.

With the other methods, documents that belong nowhere are outliers (cluster
-1), never forced into a cluster. Every result carries a tree over its
clusters (``hierarchy``): broader levels join them, finer ones split them, and
each level is named and stored, so zooming recomputes nothing. The 2-D map
is UMAP (on the same k-NN graph) or PCA. Each cluster is named as a person
would (``names``): its most distinctive c-TF-IDF phrase or its most central
document's title, no two siblings alike, and shown by its three most central
documents.

Modules: ``params`` (what to compute), ``algorithms`` (the methods),
``hierarchy`` (the number of clusters chosen, the tree of levels),
``constraints`` (judged pairs as must- and cannot-links), ``edits``
(a person's renames and merges, kept by member overlap),
``projection`` (UMAP / PCA), ``epochs`` (UMAP's epochs counted),
``naming`` (c-TF-IDF terms, central documents), ``names`` (the names read),
``wordforms`` (forms of one word), ``compute`` (the
steps), ``result`` (what is stored), ``service`` (stored results and the job),
``views`` (what pages draw).

Example:
    >>> result, job_id = request_clusters(app, "faq", ClusterParams("kmeans", 8)) # doctest: +SKIP
    >>> result.summary()["clusters"][0]                                      # doctest: +SKIP
    {'id': 0, 'label': 'password, reset, login', 'size': 412, 'example': 'q-1832'}
"""

from searchapp.clusters.algorithms import (
    by_size,
    community_detection,
    far_members,
    hdbscan_clusters,
    kmeans_clusters,
    lonely,
    rows_by_cluster,
)
from searchapp.clusters.compute import compute
from searchapp.clusters.names import cluster_names, title_of
from searchapp.clusters.naming import (
    central_rows,
    ctfidf_terms,
    label_terms,
    naming_rows,
)
from searchapp.clusters.params import (
    DEFAULT_THRESHOLD,
    GRAPH_K,
    KIND,
    MAX_K,
    METHODS,
    MIN_DOCUMENTS,
    PROJECTIONS,
    STEPS,
    ClusterParams,
)
from searchapp.clusters.projection import UMAP_MIN_DOCUMENTS, reduce
from searchapp.clusters.result import ClusterResult
from searchapp.clusters.service import (
    active_job,
    cached_clusters,
    clusters_task,
    compute_and_store,
    judgements_changed,
    request_clusters,
    stored_for_name,
)
from searchapp.clusters.views import (
    MAP_MAX_POINTS,
    SAMPLE_FLOOR,
    cluster_members,
    clusters_of,
    clusters_table,
    documents_frame,
    find_documents,
    map_frame,
    sample_evenly,
    shorten,
)

__all__ = [
    "DEFAULT_THRESHOLD", "GRAPH_K", "KIND", "MAP_MAX_POINTS", "MAX_K", "METHODS", "MIN_DOCUMENTS",
    "PROJECTIONS", "SAMPLE_FLOOR", "STEPS", "UMAP_MIN_DOCUMENTS", "ClusterParams",
    "ClusterResult", "active_job", "by_size", "cached_clusters", "central_rows",
    "cluster_members", "cluster_names", "clusters_of", "clusters_table", "clusters_task",
    "community_detection", "compute", "compute_and_store", "ctfidf_terms", "documents_frame",
    "far_members", "find_documents", "hdbscan_clusters", "judgements_changed", "kmeans_clusters",
    "label_terms",
    "lonely", "map_frame", "naming_rows", "reduce", "request_clusters", "rows_by_cluster",
    "sample_evenly", "shorten", "stored_for_name", "title_of",
]
