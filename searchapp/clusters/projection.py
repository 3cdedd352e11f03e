"""Reductions of unit vectors: a 2-D map, or a few dimensions for HDBSCAN.

UMAP reuses the corpus' k-NN graph (no second neighbour search); PCA is the
fast fallback and the choice where UMAP cannot run (too few documents, no graph).

Example:
    >>> v = np.eye(4, dtype=np.float32)
    >>> coords, used = reduce(v, 2, "umap", None, None)
    >>> coords.shape, used
    ((4, 2), 'pca')
"""

from __future__ import annotations

import numpy as np

UMAP_MIN_DOCUMENTS = 30  # below this UMAP is unreliable: PCA instead
SPECTRAL_INIT_MAX = 200_000  # above, UMAP starts from PCA: an eigensolve of the graph is slow
PCA_FIT_SAMPLE = 50_000  # rows the PCA axes are fitted on; all rows are then projected
CHUNK = 100_000


def pca_coords(vectors: np.ndarray, dims: int, seed: int = 0) -> np.ndarray:
    """(n, dims) PCA coordinates, fitted on at most PCA_FIT_SAMPLE rows, projected in chunks.

    scikit-learn's PCA centres a copy of its whole input: 1.5 GB more at a
    million 384-d vectors. The principal axes of a 50,000-row sample are those
    of the whole corpus to within sampling noise, and projecting chunk by chunk
    keeps the extra memory at one chunk.

    Example:
        >>> pca_coords(np.eye(4, dtype=np.float32), 2).shape
        (4, 2)
    """
    from sklearn.decomposition import PCA

    n = len(vectors)
    dims = min(dims, n, vectors.shape[1])
    rows = np.random.default_rng(seed).choice(n, PCA_FIT_SAMPLE, replace=False) \
        if n > PCA_FIT_SAMPLE else slice(None)
    model = PCA(n_components=dims, random_state=seed).fit(vectors[rows])
    return np.vstack([model.transform(vectors[start:start + CHUNK])
                      for start in range(0, n, CHUNK)]).astype(np.float32)


def umap_init(vectors: np.ndarray, dims: int, seed: int = 0) -> str | np.ndarray:
    """UMAP's starting layout: spectral (its default, best) up to SPECTRAL_INIT_MAX, then PCA.

    The spectral start solves an eigenproblem on the whole k-NN graph; at a
    million documents that alone can take longer than the rest of the map,
    while PCA is one pass over the vectors (``pca_coords``, scaled as UMAP's
    own PCA start is).

    Example:
        >>> umap_init(np.eye(4, dtype=np.float32), 2)
        'spectral'
    """
    if len(vectors) <= SPECTRAL_INIT_MAX:
        return "spectral"
    coords = pca_coords(vectors, dims, seed)
    return 10.0 * coords / np.abs(coords).max()


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
                              init=umap_init(vectors, dims, seed),
                              precomputed_knn=(*_umap_knn(neighbours, scores, n_neighbors),
                                               None))
            return model.fit_transform(vectors).astype(np.float32), "umap"
    return pca_coords(vectors, dims, seed), "pca"
