"""Semantic search: query → encode → index → documents with cosine scores.

Example:
    >>> hits = search(app, "captions", "a dog runs on the beach", k=3)   # doctest: +SKIP
    >>> [(h.id, round(h.score, 2)) for h in hits]                        # doctest: +SKIP
    [('images-812', 0.83), ...]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from searchapp.context import App, ModelRef
from searchapp.corpora import corpus_status
from searchapp.errors import EmptyCorpusError, InvalidParameterError, check_range
from searchapp.index import VectorIndex
from searchapp.store import repo

MAX_K = 1000
MAX_QUERY_CHARS = 10_000


@dataclass(frozen=True)
class SearchHit:
    id: str  # the document's external id
    text: str
    score: float
    meta: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CorpusHandle:
    """A corpus ready to query: its id, model and up-to-date index."""

    corpus_id: int
    name: str
    model: ModelRef
    index: VectorIndex


def open_corpus(app: App, name: str) -> CorpusHandle:
    """The corpus with its model and index; EmptyCorpusError while nothing is embedded."""
    with app.db.session() as s:
        corpus = repo.get_corpus(s, name)
        corpus_id, model_name = corpus.id, corpus.model_name
    model = app.model_ref(model_name)
    index = app.index(corpus_id, model)
    if index.count == 0:
        raise EmptyCorpusError(name, corpus_status(app, name))
    return CorpusHandle(corpus_id, name, model, index)


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


def search(app: App, corpus: str, query: str, k: int = 10,
           min_score: float | None = None) -> list[SearchHit]:
    """The k documents closest in meaning to ``query`` (cosine ≥ min_score), best first."""
    query = validate_query(query, k, min_score)
    handle = open_corpus(app, corpus)
    vector = app.encoder(handle.model.name).encode([query])
    labels, scores = handle.index.search(vector, k)
    return hits_for(app, labels[0], scores[0], min_score)


def hits_for(app: App, labels, scores, min_score: float | None = None) -> list[SearchHit]:
    """Index labels and scores → SearchHits (dropping those under ``min_score``)."""
    keep = [(int(label), float(score)) for label, score in zip(labels, scores, strict=True)
            if min_score is None or score >= min_score]
    with app.db.session() as s:
        docs = repo.documents_by_id(s, [label for label, _ in keep])
    return [SearchHit(docs[label].external_id, docs[label].text, round(score, 6),
                      dict(docs[label].meta or {}))
            for label, score in keep if label in docs]
