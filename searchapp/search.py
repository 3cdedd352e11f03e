"""Semantic search: query → encode → index → documents with cosine scores.

The corpus is given by name or as an open ``CorpusHandle``; a page or a script
that runs many queries opens it once. Per query the work is one encoder pass,
one index query and one primary-key lookup of the k rows: nothing grows with
the corpus.

Example:
    >>> hits = search(app, "captions", "a dog runs on the beach", k=3)   # doctest: +SKIP
    >>> [(h.id, round(h.score, 2)) for h in hits]                        # doctest: +SKIP
    [('images-812', 0.83), ...]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from searchapp.context import App
from searchapp.errors import InvalidParameterError, check_range
from searchapp.handle import CorpusHandle, as_handle, open_corpus  # noqa: F401 - re-exported
from searchapp.store import repo

MAX_K = 1000
MAX_QUERY_CHARS = 10_000


@dataclass(frozen=True)
class SearchHit:
    id: str  # the document's external id
    text: str
    score: float
    meta: dict = field(default_factory=dict)
    doc_id: int = 0  # the primary key, for linking a hit to stored analyses

    def as_dict(self) -> dict:
        return asdict(self)


def validate_query(query: str, k: int, min_score: float | None) -> str:
    query = (query or "").strip()
    if not query:
        raise InvalidParameterError("The query is empty: type what you are looking for.")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidParameterError(f"The query is longer than {MAX_QUERY_CHARS:,} characters.")
    check_range("k", k, 1, MAX_K)
    if min_score is not None:
        check_range("min_score", min_score, -1.0, 1.0)
    return query


def search(app: App, corpus: str | CorpusHandle, query: str, k: int = 10,
           min_score: float | None = None) -> list[SearchHit]:
    """The k documents closest in meaning to ``query`` (cosine ≥ min_score), best first."""
    query = validate_query(query, k, min_score)
    handle = as_handle(app, corpus)
    vector = app.encoder(handle.model.name).encode([query])  # (1, dim)
    return search_vector(app, handle, vector[0], k, min_score)


def search_vector(app: App, handle: CorpusHandle, vector: np.ndarray, k: int = 10,
                  min_score: float | None = None) -> list[SearchHit]:
    """Search with a query vector (dim,) already encoded: the index and rows part."""
    labels, scores = handle.index.search(vector[None, :], k)
    return hits_for(app, labels[0], scores[0], min_score)


def hits_for(app: App, labels, scores, min_score: float | None = None) -> list[SearchHit]:
    """Index labels and scores → SearchHits (dropping those under ``min_score``)."""
    keep = [(int(label), float(score)) for label, score in zip(labels, scores, strict=True)
            if min_score is None or score >= min_score]
    with app.db.reader() as conn:
        docs = repo.documents_by_id(conn, [label for label, _ in keep])
    return [SearchHit(docs[label].external_id, docs[label].text, round(score, 6),
                      dict(docs[label].meta), label)
            for label, score in keep if label in docs]
