"""Reductions of unit vectors: a 2-D map, or a few dimensions for HDBSCAN.

UMAP reuses the corpus' k-NN graph (no second neighbour search); PCA is the
fast fallback and the choice where UMAP cannot run (too few documents, no graph).
Both say what they do through a ``Phase``, with counts where there are some:
UMAP's optimisation epochs, the documents PCA has projected.

Example:
    >>> v = np.eye(4, dtype=np.float32)
    >>> coords, used = reduce(v, 2, "umap", None, None)
    >>> coords.shape, used
    ((4, 2), 'pca')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from searchapp.clusters.epochs import EpochCounter

UMAP_MIN_DOCUMENTS = 30  # below this UMAP is unreliable: PCA instead
SPECTRAL_INIT_MAX = 200_000  # above, UMAP starts from PCA: an eigensolve of the graph is slow
PCA_FIT_SAMPLE = 50_000  # rows the PCA axes are fitted on; all rows are then projected
CHUNK = 100_000

Phase = Callable[..., None]  # (what, items=(done, total) | None, unit=None): what runs now


def quiet(what: str, items: tuple[int, int] | None = None, unit: str | None = None) -> None:
    """The ``Phase`` of a reduction nobody watches."""


def pca_coords(vectors: np.ndarray, dims: int, seed: int = 0, phase: Phase = quiet
               ) -> np.ndarray:
    """(n, dims) PCA coordinates, fitted on at most PCA_FIT_SAMPLE rows, projected in chunks.

    scikit-learn's PCA centres a copy of its whole input: 1.5 GB more at a
    million 384-d vectors. The principal axes of a 50,000-row sample are those
    of the whole corpus to within sampling noise, and projecting chunk by chunk
    keeps the extra memory at one chunk. ``phase`` hears of the fit, then of
    the documents projected after each chunk.

    Example:
        >>> pca_coords(np.eye(4, dtype=np.float32), 2, phase=print).shape
        PCA axes from 4 documents
        (4, 2)
    """
    from sklearn.decomposition import PCA

    n = len(vectors)
    dims = min(dims, n, vectors.shape[1])
    rows = np.random.default_rng(seed).choice(n, PCA_FIT_SAMPLE, replace=False) \
        if n > PCA_FIT_SAMPLE else slice(None)
    phase(f"PCA axes from {min(n, PCA_FIT_SAMPLE):,} documents")
    model = PCA(n_components=dims, random_state=seed).fit(vectors[rows])
    parts = []
    for start in range(0, n, CHUNK):
        if n > CHUNK:  # one chunk is one quick product: nothing to count
            phase(f"PCA, {start:,} of {n:,} documents projected", items=(start, n),
                  unit="documents")
        parts.append(model.transform(vectors[start:start + CHUNK]))
    return np.vstack(parts).astype(np.float32)


def umap_init(vectors: np.ndarray, dims: int, seed: int = 0, phase: Phase = quiet
              ) -> str | np.ndarray:
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
    coords = pca_coords(vectors, dims, seed, phase)
    return 10.0 * coords / np.abs(coords).max()


def _umap_knn(neighbours: np.ndarray, scores: np.ndarray, n_neighbors: int):
    """The k-NN graph in UMAP's precomputed form: self first, cosine distances."""
    n = len(neighbours)
    idx = np.hstack([np.arange(n)[:, None], neighbours[:, :n_neighbors - 1]])
    dist = np.hstack([np.zeros((n, 1), np.float32), 1.0 - scores[:, :n_neighbors - 1]])
    return idx.astype(np.int64), dist.clip(0.0).astype(np.float32)


def reduce(vectors: np.ndarray, dims: int, method: str, neighbours: np.ndarray | None = None,
           scores: np.ndarray | None = None, min_dist: float = 0.1, seed: int = 0,
           phase: Phase = quiet) -> tuple[np.ndarray, str]:
    """Reduce (n, d) vectors to (n, dims) with UMAP (reusing the k-NN graph) or PCA.

    Returns the coordinates and the method used: PCA where UMAP cannot run
    (fewer than UMAP_MIN_DOCUMENTS documents, or no k-NN graph). ``phase``
    hears what runs, with counts where there are some (``umap_coords``,
    ``pca_coords``).
    """
    n = len(vectors)
    if method == "umap" and n >= UMAP_MIN_DOCUMENTS and neighbours is not None:
        return umap_coords(vectors, dims, neighbours, scores, min_dist, seed, phase), "umap"
    return pca_coords(vectors, dims, seed, phase), "pca"


def umap_coords(vectors: np.ndarray, dims: int, neighbours: np.ndarray, scores: np.ndarray,
                min_dist: float = 0.1, seed: int = 0, phase: Phase = quiet) -> np.ndarray:
    """(n, dims) UMAP coordinates from the k-NN graph; ``phase`` hears each epoch.

    umap-learn reports nothing while it weighs the graph and lays out its
    start (the spectral start of a big graph can take minutes), so that phase
    is named without a count; its optimisation epochs are counted
    (``EpochCounter``). Epoch 0 carries no count to time: it includes numba
    compiling the epoch function, which would make the first estimate long.

    Example:
        >>> say = lambda what, items=None, unit=None: print(what)
        >>> xy = umap_coords(vectors, 2, neighbours, scores, phase=say)  # doctest: +SKIP
        UMAP, weighing the neighbour graph and laying out a spectral start
        UMAP, epoch 0 of 500
        UMAP, epoch 1 of 500
        ...
        UMAP, epoch 500 of 500
    """
    import warnings

    n_neighbors = min(15, neighbours.shape[1] + 1)
    init = umap_init(vectors, dims, seed, phase)
    phase("UMAP, weighing the neighbour graph" + (" and laying out a spectral start"
                                                   if isinstance(init, str) else ""))
    import umap  # after the phase: its first import (numba) takes seconds

    counter = EpochCounter(lambda done, total: phase(
        f"UMAP, epoch {done:,} of {total:,}", items=(done, total) if done else None,
        unit="epochs"))
    with warnings.catch_warnings():  # "n_jobs overridden by random_state", "no search index"
        warnings.simplefilter("ignore")
        model = umap.UMAP(n_components=dims, n_neighbors=n_neighbors, metric="cosine",
                          min_dist=min_dist, random_state=seed, init=init,
                          precomputed_knn=(*_umap_knn(neighbours, scores, n_neighbors), None),
                          tqdm_kwds=counter.tqdm_kwds())
        return model.fit_transform(vectors).astype(np.float32)
