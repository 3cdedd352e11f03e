"""Queries over the store: corpora, documents, models, embeddings, analyses.

Every function takes an open Session and leaves committing to the caller, so a
whole upload is one transaction. Vectors cross this boundary as numpy arrays.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "all-MiniLM-L6-v2")
    ...     add_documents(s, c, [NewDocument("q1", "How do I reset my password?")]).added
    1
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from searchapp.errors import CorpusNotFoundError, InvalidParameterError, ModelError
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.schema import Analysis, Corpus, Document, Embedding, Model, utcnow


def content_hash(text: str) -> str:
    """SHA-256 of the text: unchanged text is never embedded twice."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NewDocument:
    external_id: str
    text: str
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AddResult:
    added: int
    updated: int
    unchanged: int


@dataclass(frozen=True)
class CorpusSummary:
    name: str
    model_name: str
    documents: int
    embedded: int


# ---- corpora ---------------------------------------------------------------
def corpus_names(s: Session) -> list[str]:
    return list(s.scalars(select(Corpus.name).order_by(Corpus.name)))


def find_corpus(s: Session, name: str) -> Corpus | None:
    return s.scalar(select(Corpus).where(Corpus.name == name.strip()))


def get_corpus(s: Session, name: str) -> Corpus:
    """The corpus called ``name``; the error lists the existing ones."""
    corpus = find_corpus(s, name)
    if corpus is None:
        raise CorpusNotFoundError(name, corpus_names(s))
    return corpus


def get_or_create_corpus(s: Session, name: str, model_name: str) -> Corpus:
    name = name.strip()
    if not name or len(name) > 200:
        raise InvalidParameterError("A corpus name must have 1 to 200 characters.")
    corpus = s.scalar(select(Corpus).where(Corpus.name == name))
    if corpus is None:
        corpus = Corpus(name=name, model_name=model_name)
        s.add(corpus)
        s.flush()
    return corpus


def delete_corpus(s: Session, name: str) -> Corpus:
    """Delete a corpus with its documents, embeddings and analyses (index files: caller)."""
    corpus = get_corpus(s, name)
    doc_ids = select(Document.id).where(Document.corpus_id == corpus.id)
    s.execute(delete(Embedding).where(Embedding.document_id.in_(doc_ids)))
    s.execute(delete(Analysis).where(Analysis.corpus_id == corpus.id))
    s.execute(delete(Document).where(Document.corpus_id == corpus.id))
    s.delete(corpus)
    s.flush()
    return corpus


def summaries(s: Session) -> list[CorpusSummary]:
    """Each corpus with its document count and how many are embedded for its model."""
    out = []
    for corpus in s.scalars(select(Corpus).order_by(Corpus.name)):
        model = find_model(s, corpus.model_name)
        embedded = count_embedded(s, corpus.id, model.id) if model else 0
        out.append(CorpusSummary(corpus.name, corpus.model_name,
                                 count_documents(s, corpus.id), embedded))
    return out


# ---- documents ---------------------------------------------------------------
def count_documents(s: Session, corpus_id: int) -> int:
    return s.scalar(select(func.count()).where(Document.corpus_id == corpus_id)) or 0


def add_documents(s: Session, corpus: Corpus, docs: list[NewDocument]) -> AddResult:
    """Insert new documents; an existing id with new text is updated (and re-embedded).

    Same id and same text: nothing happens, so uploading a file twice adds nothing.
    """
    existing = dict(
        s.execute(
            select(Document.external_id, Document.content_hash).where(
                Document.corpus_id == corpus.id
            )
        ).all()
    )
    rows, changed = [], []
    for doc in docs:
        digest = content_hash(doc.text)
        old = existing.get(doc.external_id)
        if old is None:
            rows.append({"corpus_id": corpus.id, "external_id": doc.external_id,
                         "text": doc.text, "meta": doc.meta, "content_hash": digest,
                         "created_at": utcnow()})
        elif old != digest:
            changed.append((doc, digest))
    if rows:
        s.execute(insert(Document), rows)
    for doc, digest in changed:
        # A changed text gets a new primary key, so every index sees it as new.
        old_id = s.scalar(select(Document.id).where(
            Document.corpus_id == corpus.id, Document.external_id == doc.external_id))
        s.execute(delete(Embedding).where(Embedding.document_id == old_id))
        s.execute(delete(Document).where(Document.id == old_id))
        s.execute(insert(Document), [{"corpus_id": corpus.id, "external_id": doc.external_id,
                                      "text": doc.text, "meta": doc.meta,
                                      "content_hash": digest, "created_at": utcnow()}])
    corpus.updated_at = utcnow()
    s.flush()
    return AddResult(added=len(rows), updated=len(changed),
                     unchanged=len(docs) - len(rows) - len(changed))


def documents_by_id(s: Session, ids: list[int]) -> dict[int, Document]:
    """Documents keyed by primary key (for turning index labels into rows)."""
    if not ids:
        return {}
    out: dict[int, Document] = {}
    for start in range(0, len(ids), 900):  # stay under SQLite's variable limit
        chunk = [int(i) for i in ids[start:start + 900]]
        out.update({d.id: d for d in s.scalars(select(Document).where(Document.id.in_(chunk)))})
    return out


def document_texts(s: Session, corpus_id: int, ids: list[int] | None = None
                   ) -> dict[int, tuple[str, str]]:
    """{id: (external_id, text)} for the given documents of a corpus, or for all of them.

    Two columns only, no ORM objects: fast enough for every document of a large corpus.
    """
    q = select(Document.id, Document.external_id, Document.text).where(
        Document.corpus_id == corpus_id)
    if ids is None:
        return {i: (e, t) for i, e, t in s.execute(q).all()}
    out: dict[int, tuple[str, str]] = {}
    wanted = [int(i) for i in ids]
    for start in range(0, len(wanted), 900):  # stay under SQLite's variable limit
        chunk = wanted[start:start + 900]
        out.update({i: (e, t) for i, e, t in s.execute(q.where(Document.id.in_(chunk))).all()})
    return out


def texts_by_id(s: Session, ids: list[int]) -> dict[int, str]:
    """Texts of documents by primary key, without loading whole rows (for map hovers)."""
    out: dict[int, str] = {}
    for start in range(0, len(ids), 900):  # stay under SQLite's variable limit
        chunk = [int(i) for i in ids[start:start + 900]]
        out.update(s.execute(select(Document.id, Document.text).where(
            Document.id.in_(chunk))).tuples().all())
    return out


def document_by_external_id(s: Session, corpus_id: int, external_id: str) -> Document | None:
    return s.scalar(select(Document).where(
        Document.corpus_id == corpus_id, Document.external_id == external_id))


# ---- models ------------------------------------------------------------------
def find_model(s: Session, name: str) -> Model | None:
    return s.scalar(select(Model).where(Model.name == name))


def get_or_create_model(s: Session, name: str, dimension: int, **fields) -> Model:
    """The Model row for ``name``; created on first use. A changed dimension is an error."""
    model = find_model(s, name)
    if model is None:
        model = Model(name=name, dimension=dimension, info={}, **fields)
        s.add(model)
        s.flush()
    elif model.dimension != dimension:
        raise ModelError(
            f"Model {name!r} is registered with dimension {model.dimension}, but the folder "
            f"now gives {dimension}. Register it under a new name."
        )
    return model


def update_model_info(s: Session, name: str, **fields) -> Model:
    """Merge ``fields`` into a registered model's ``info`` JSON (e.g. a calibrated threshold)."""
    model = find_model(s, name)
    if model is None:
        raise ModelError(f"Model {name!r} is not registered yet; use it for a corpus first.")
    model.info = {**(model.info or {}), **fields}  # a new dict, so the JSON column is saved
    s.flush()
    return model


# ---- embeddings --------------------------------------------------------------
def _embedded_docs(corpus_id: int, model_id: int):
    return (
        select(Embedding.document_id)
        .join(Document, Document.id == Embedding.document_id)
        .where(Document.corpus_id == corpus_id, Embedding.model_id == model_id)
    )


def count_embedded(s: Session, corpus_id: int, model_id: int) -> int:
    q = select(func.count()).select_from(_embedded_docs(corpus_id, model_id).subquery())
    return s.scalar(q) or 0


def documents_missing_embedding(
    s: Session, corpus_id: int, model_id: int, limit: int
) -> list[tuple[int, str]]:
    """Up to ``limit`` (id, text) of documents with no vector for this model, by id."""
    done = select(Embedding.document_id).where(Embedding.model_id == model_id)
    q = (
        select(Document.id, Document.text)
        .where(Document.corpus_id == corpus_id, Document.id.not_in(done))
        .order_by(Document.id)
        .limit(limit)
    )
    return [(i, t) for i, t in s.execute(q).all()]


def save_embeddings(s: Session, model_id: int, doc_ids: list[int], vectors: np.ndarray) -> None:
    """Store float32 vectors (n, dim) for documents; existing ones are replaced."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    ids = [int(i) for i in doc_ids]
    s.execute(delete(Embedding).where(Embedding.model_id == model_id,
                                      Embedding.document_id.in_(ids)))
    s.execute(insert(Embedding), [
        {"document_id": i, "model_id": model_id, "vector": v.tobytes()}
        for i, v in zip(ids, vectors, strict=True)
    ])


def load_embeddings(s: Session, corpus_id: int, model_id: int, dimension: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """All vectors of a corpus for a model: ids (n,) int64 and matrix (n, dim) float32."""
    q = (
        select(Embedding.document_id, Embedding.vector)
        .join(Document, Document.id == Embedding.document_id)
        .where(Document.corpus_id == corpus_id, Embedding.model_id == model_id)
        .order_by(Embedding.document_id)
    )
    rows = s.execute(q).all()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if not rows:
        return ids, np.zeros((0, dimension), dtype=np.float32)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
    return ids, matrix.reshape(len(rows), dimension).copy()


def embedding_fingerprint(s: Session, corpus_id: int, model_id: int) -> str:
    """Count, id sum and max id of the embedded documents: changes whenever the set does."""
    sub = _embedded_docs(corpus_id, model_id).subquery()
    n, total, top = s.execute(
        select(func.count(), func.coalesce(func.sum(sub.c.document_id), 0),
               func.coalesce(func.max(sub.c.document_id), 0))
    ).one()
    return f"{n}:{total}:{top}"


# ---- stored analyses ---------------------------------------------------------
def get_analysis(s: Session, corpus_id: int, model_id: int, kind: str, params_key: str
                 ) -> Analysis | None:
    return s.scalar(select(Analysis).where(
        Analysis.corpus_id == corpus_id, Analysis.model_id == model_id,
        Analysis.kind == kind, Analysis.params_key == params_key))


def analyses(s: Session, corpus_id: int, model_id: int, kind: str) -> list[Analysis]:
    """Every stored result of ``kind`` for (corpus, model), newest first."""
    return list(s.scalars(select(Analysis).where(
        Analysis.corpus_id == corpus_id, Analysis.model_id == model_id, Analysis.kind == kind
    ).order_by(Analysis.created_at.desc(), Analysis.id.desc())))


def save_analysis(s: Session, corpus_id: int, model_id: int, kind: str, params_key: str,
                  params: dict, fingerprint: str, result: dict, seconds: float) -> Analysis:
    """Store (or replace) the result for this (corpus, model, kind, parameters)."""
    row = get_analysis(s, corpus_id, model_id, kind, params_key)
    if row is None:
        row = Analysis(corpus_id=corpus_id, model_id=model_id, kind=kind, params_key=params_key)
        s.add(row)
    row.params, row.fingerprint, row.result, row.seconds = params, fingerprint, result, seconds
    row.created_at = utcnow()
    s.flush()
    return row


def embedded_ids(s: Session, corpus_id: int, model_id: int) -> np.ndarray:
    """Sorted ids (int64) of the corpus' documents that have a vector for this model."""
    ids = s.scalars(_embedded_docs(corpus_id, model_id).order_by(Embedding.document_id)).all()
    return np.asarray(ids, dtype=np.int64)


def vectors_for(s: Session, model_id: int, doc_ids: np.ndarray, dimension: int) -> np.ndarray:
    """Vectors (n, dim) float32 for the given documents, in the order given."""
    found: dict[int, bytes] = {}
    ids = [int(i) for i in doc_ids]
    for start in range(0, len(ids), 900):
        chunk = ids[start:start + 900]
        found.update(s.execute(select(Embedding.document_id, Embedding.vector).where(
            Embedding.model_id == model_id, Embedding.document_id.in_(chunk))).tuples().all())
    if not ids:
        return np.zeros((0, dimension), dtype=np.float32)
    missing = [i for i in ids if i not in found]
    if missing:
        raise ModelError(f"No stored vector for documents {missing[:5]}; re-run the embed job.")
    blob = b"".join(found[i] for i in ids)
    return np.frombuffer(blob, dtype=np.float32).reshape(len(ids), dimension).copy()
