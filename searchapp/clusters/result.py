"""A stored clustering: clusters (biggest first) and, per document, its cluster and place.

The per-document part is arrays of document ids, clusters and map coordinates
(stored as an ``.npz`` blob, loaded in milliseconds at a million documents);
external ids are looked up only when someone asks for all of them (``ids``,
``summary``, ``frame``: exports), never on a page view.

A result with a hierarchy also keeps each document's leaf (``leaf``) and, per
level of the tree, a map leaf → cluster (``cuts``, one row per level) with that
level's named clusters (``levels``): ``at_level(m)`` is the same result with m
clusters, made from those arrays without recomputing anything.

Example:
    >>> result.summary(assignments=False)["clusters"][0]             # doctest: +SKIP
    {'id': 0, 'label': 'password, reset, login', 'size': 412, 'example': 'q-1832'}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np


@dataclass(eq=False)
class ClusterResult:
    corpus: str
    params: dict  # as resolved for this corpus
    projection: str  # the map actually drawn (PCA where UMAP cannot run)
    clusters: list[dict]  # id, label, terms, size, example, example_text, example_id
    doc_ids: np.ndarray  # (n,) int64 document ids
    cluster: np.ndarray  # (n,) int64, -1 for outliers
    x: np.ndarray  # (n,) float32 map position
    y: np.ndarray
    seconds: dict
    lookup_ids: Callable[[], dict[int, str]] = field(default=lambda: {}, repr=False)
    corpus_id: int = 0
    generation: int = -1  # the corpus generation it was computed at (-1: not stored)
    levels: list[dict] = field(default_factory=list)  # per level: count, clusters
    leaf: np.ndarray | None = None  # (n,) leaf of each document in the tree, -1 outliers
    cuts: np.ndarray | None = None  # (levels, L) cluster of each leaf at each level
    level: int = 0  # the number of clusters shown (0: no hierarchy)
    edited: str = ""  # a fingerprint of the person's edits applied (part of ``key``)
    # the pair judgements it was made with: "mark" (``judgement_rows.pair_mark`` then),
    # "pairs" (those between its documents, applied as constraints), "unmet" (not met)
    constraints: dict = field(default_factory=dict)

    @property
    def level_counts(self) -> list[int]:
        """The numbers of clusters one can zoom to (empty without a hierarchy)."""
        return [lv["count"] for lv in self.levels]

    @property
    def chosen_level(self) -> int:
        """The level the method chose (where the result opens)."""
        return int(self.params.get("k") or self.level or len(self.clusters))

    def at_level(self, count: int) -> ClusterResult:
        """This result with ``count`` clusters (one of ``level_counts``); itself otherwise.

        Example:
            >>> result.at_level(8).clusters[0]["label"]              # doctest: +SKIP
            'credit card, card pin, lost'
        """
        if self.leaf is None or self.cuts is None or count not in self.level_counts \
                or count == self.level:
            return self
        row = self.level_counts.index(count)
        cluster = np.where(self.leaf >= 0, self.cuts[row][np.maximum(self.leaf, 0)], -1)
        return replace(self, cluster=cluster.astype(np.int64),
                       clusters=self.levels[row]["clusters"], level=count)

    @property
    def size(self) -> int:
        return len(self.doc_ids)

    @property
    def outliers(self) -> int:
        return int((self.cluster < 0).sum())

    @property
    def outlier_share(self) -> float:
        return self.outliers / self.size if self.size else 0.0

    @cached_property
    def ids(self) -> list[str]:
        """External ids in ``doc_ids`` order (one query for the whole corpus: exports only)."""
        by_id = self.lookup_ids()
        return [by_id.get(int(i), "") for i in self.doc_ids]

    def labels(self) -> dict[int, str]:
        return {c["id"]: c["label"] for c in self.clusters} | {-1: "outlier"}

    def summary(self, assignments: bool = True) -> dict:
        """The CLI's JSON: clusters, outlier count and (optionally) every assignment."""
        out = {"clusters": [{**{k: c[k] for k in ("id", "label", "size", "example")},
                             "terms": c.get("terms", []),
                             "central": [ext for ext, _ in c.get("central", [])]}
                            for c in self.clusters],
               "outliers": self.outliers}
        if self.level_counts:
            out["level"], out["levels"] = len(self.clusters), self.level_counts
        if assignments:
            out["assignments"] = [
                {"id": i, "cluster": int(c), "x": round(float(x), 4), "y": round(float(y), 4)}
                for i, c, x, y in zip(self.ids, self.cluster, self.x, self.y, strict=True)]
        return out

    def frame(self):
        """One row per document: doc_id, id, cluster, label, x, y (a pandas DataFrame)."""
        import pandas as pd

        labels = self.labels()
        return pd.DataFrame({"doc_id": self.doc_ids, "id": self.ids, "cluster": self.cluster,
                             "label": [labels[int(c)] for c in self.cluster],
                             "x": np.round(self.x, 4), "y": np.round(self.y, 4)})

    def arrays(self) -> dict[str, np.ndarray]:
        tree = {"leaf": self.leaf, "cuts": self.cuts} if self.leaf is not None else {}
        return {"doc_ids": self.doc_ids, "cluster": self.cluster, "x": self.x, "y": self.y,
                **tree}

    def info(self) -> dict:
        return {"corpus": self.corpus, "params": self.params, "projection": self.projection,
                "clusters": self.clusters, "seconds": self.seconds, "levels": self.levels,
                "level": self.level, "constraints": self.constraints}

    @property
    def key(self) -> str:
        """What distinguishes this result from others of its corpus and generation."""
        return (json.dumps(self.params, sort_keys=True) + self.projection + f"@{self.level}"
                + self.edited)

    @classmethod
    def from_stored(cls, info: dict, arrays: dict[str, np.ndarray],
                    lookup_ids: Callable[[], dict[int, str]], corpus_id: int,
                    generation: int) -> ClusterResult:
        leaf, cuts = arrays.get("leaf"), arrays.get("cuts")
        return cls(info["corpus"], info["params"], info["projection"], info["clusters"],
                   arrays["doc_ids"].astype(np.int64), arrays["cluster"].astype(np.int64),
                   arrays["x"].astype(np.float32), arrays["y"].astype(np.float32),
                   info["seconds"], lookup_ids, corpus_id, generation,
                   info.get("levels", []), None if leaf is None else leaf.astype(np.int64),
                   None if cuts is None else cuts.astype(np.int64), info.get("level", 0),
                   constraints=info.get("constraints", {}))
