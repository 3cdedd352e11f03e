"""What a clustering computes: the method, its parameters, and defaults from the corpus size.

Example:
    >>> ClusterParams("kmeans", k=5).validated().key()
    '{"k": 5, "method": "kmeans", "min_size": null, "projection": "umap", "threshold": null}'
    >>> ClusterParams("hdbscan").resolved(20_000).min_size
    100
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace

from searchapp.errors import InvalidParameterError, check_range

KIND = "clusters"
METHODS = ("auto", "community", "hdbscan", "kmeans")
CONSTRAINED = ("auto", "kmeans")  # the methods pair judgements act on (``constraints``)
PROJECTIONS = ("umap", "pca")
MIN_DOCUMENTS = 3
MAX_K = 500
DEFAULT_THRESHOLD = 0.4  # topic-level groups; SBERT uses 0.75 for near paraphrases
GRAPH_K = 30  # neighbours per document in the k-NN graph (community detection, UMAP)
STEPS = 6


@dataclass(frozen=True)
class ClusterParams:
    """What to compute. ``None`` means "chosen from the corpus size" (see ``resolved``).

    Example:
        >>> ClusterParams("kmeans", k=5).validated().key()
        '{"k": 5, "method": "kmeans", "min_size": null, "projection": "umap", "threshold": null}'
    """

    method: str = "auto"  # k-means with k chosen from the data (silhouette), every doc placed
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
        if self.method == "auto":
            return replace(self, k=None, min_size=None, threshold=None)
        # The default threshold is part of the key: a new default never reuses old results.
        return replace(self, k=None, threshold=DEFAULT_THRESHOLD if self.threshold is None
                       else self.threshold)

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def resolved(self, n: int) -> ClusterParams:
        """Automatic values filled in for a corpus of ``n`` documents.

        auto: nothing here (k is chosen from the vectors, ``hierarchy.choose_k``);
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
