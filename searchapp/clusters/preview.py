"""A first view of a large corpus in seconds, while its full clustering runs as a job.

The full job (k-NN graph, clustering, UMAP) takes minutes at 100,000
documents. Until it ends, the Clusters page shows this: k-means groups and a
PCA map of an even random sample (``PREVIEW_SAMPLE`` documents), named by the
same rules as the full job (``names``: a phrase, or a central document's first
line). It reads only the sample's vectors and texts, so it costs the same at a
million documents as at ten thousand.

Example:
    >>> frame = preview(app, handle)                                 # doctest: +SKIP
    >>> frame.columns.tolist()                                       # doctest: +SKIP
    ['id', 'cluster', 'label', 'x', 'y', 'text', 'highlight', 'doc_id']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from searchapp.clusters.algorithms import by_size, kmeans_clusters
from searchapp.clusters.names import cluster_names, title_of
from searchapp.clusters.naming import NAMING_TERMS, central_members, ctfidf_scored, term_counts
from searchapp.clusters.projection import pca_coords
from searchapp.clusters.views import shorten
from searchapp.context import App
from searchapp.store import repo
from searchapp.vectors.handle import CorpusHandle

PREVIEW_MIN_DOCUMENTS = 10_000  # below this the full job is quick enough on its own
PREVIEW_SAMPLE = 5_000
PREVIEW_GROUPS = 20


def sample_frame(ids: np.ndarray, vectors: np.ndarray, texts: list[str],
                 external: list[str], groups: int = PREVIEW_GROUPS) -> pd.DataFrame:
    """k-means groups, PCA coordinates and labels of a sample, as a map frame.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> v = rng.normal(size=(40, 8)).astype(np.float32)
        >>> v /= np.linalg.norm(v, axis=1, keepdims=True)
        >>> f = sample_frame(np.arange(40), v, ["red apple pie"] * 20 + ["fast car race"] * 20,
        ...                  [f"d{i}" for i in range(40)], groups=2)
        >>> len(f), int((f.cluster >= 0).sum() > 30)
        (40, 1)
    """
    groups = max(1, min(groups, len(ids) // 2))
    assign = by_size(kmeans_clusters(vectors, groups))
    coords = pca_coords(vectors, 2)
    counts, terms = term_counts(texts)
    central = central_members(vectors, assign)
    labels = cluster_names(ctfidf_scored(counts, terms, assign, NAMING_TERMS),
                           {c: [title_of(None, texts[r]) for r in rows]
                            for c, rows in central.items()})
    return pd.DataFrame({"id": external, "cluster": assign,
                         "label": [labels.get(int(c), "outlier") for c in assign],
                         "x": coords[:, 0], "y": coords[:, 1],
                         "text": [shorten(t) for t in texts], "highlight": False,
                         "doc_id": ids})


def preview(app: App, handle: CorpusHandle, sample: int = PREVIEW_SAMPLE, seed: int = 0
            ) -> pd.DataFrame:
    """The first view of a corpus (made once per corpus generation, then kept in memory)."""

    def make() -> pd.DataFrame:
        all_ids = handle.index.labels()
        rng = np.random.default_rng(seed)
        ids = np.sort(rng.choice(all_ids, min(sample, len(all_ids)), replace=False))
        vectors = handle.index.vectors(ids)
        with app.db.session() as s:
            found = repo.document_texts(s, handle.corpus_id, ids.tolist())
        external = [found.get(int(i), ("", ""))[0] for i in ids]
        texts = [found.get(int(i), ("", ""))[1] for i in ids]
        return sample_frame(ids, vectors, texts, external)

    return app.memo.get_or_make(handle.corpus_id, handle.generation, ("clusters-preview",),
                                make)
