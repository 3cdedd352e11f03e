"""Vectors: save a batch (generation and counts in the same transaction), read some back.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "m")
    ...     _ = add_documents(s, c, [NewDocument("a", "x")])
    ...     m = get_or_create_model(s, "m", 2)
    ...     doc_id = documents_missing_embedding(s, c.id, m.id, 0, 10)[0][0]
    ...     save_embeddings(s, c.id, m.id, [doc_id], np.ones((1, 2), np.float32))
    2
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from searchapp.errors import ModelError
from searchapp.store.catalog import get_or_create_corpus, get_or_create_model  # noqa: F401
from searchapp.store.changes import next_generation
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.documents import (  # noqa: F401 - doctest
    IN_LIMIT,
    NewDocument,
    add_documents,
    chunks,
    documents_missing_embedding,
)
from searchapp.store.schema import Document, EmbeddedCount, Embedding
from searchapp.store.sentences import save_sentences


def save_embeddings(s: Session, corpus_id: int, model_id: int, doc_ids: list[int],
                    vectors: np.ndarray,
                    passages: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
                    sentences: dict[int, list] | None = None) -> int:
    """Store float32 vectors (n, dim) for documents of a corpus; returns the generation.

    ``passages`` maps a row of ``vectors`` (a document longer than the model's
    window) to its passages' vectors (p, dim) and character spans (p, 2);
    ``sentences`` a row to its sentences by passage (``store/sentences.py``; the
    document's stored sentences are replaced either way).
    Existing vectors of the same documents are replaced. Documents deleted
    meanwhile (a newer upload replaced their text) are skipped: their vectors
    would describe a text that no longer exists.
    """
    passages = passages or {}
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    ids = [int(i) for i in doc_ids]
    generation = next_generation(s, corpus_id)
    alive = _existing(s, corpus_id, ids)
    keep = [(i, v, passages.get(row)) for row, (i, v) in enumerate(zip(ids, vectors, strict=True))
            if i in alive]
    replaced = 0
    for part in chunks([i for i, _, _ in keep], IN_LIMIT):
        replaced += s.execute(delete(Embedding).where(
            Embedding.model_id == model_id, Embedding.document_id.in_(part))).rowcount
    if keep:
        s.execute(insert(Embedding), [
            {"document_id": i, "model_id": model_id, "corpus_id": corpus_id,
             "generation": generation, "vector": v.tobytes(),
             "passages": None if p is None else np.ascontiguousarray(p[0], np.float32).tobytes(),
             "passage_spans": None if p is None else np.asarray(p[1], np.int32).tobytes()}
            for i, v, p in keep])
    by_row = sentences or {}
    save_sentences(s, model_id, {ids[row]: parts for row, parts in by_row.items()
                                 if ids[row] in alive}, replace=[i for i, _, _ in keep])
    _add_to_count(s, corpus_id, model_id, len(keep) - replaced)
    return generation


def _existing(s: Session, corpus_id: int, ids: list[int]) -> set[int]:
    found: set[int] = set()
    for part in chunks(ids, IN_LIMIT):
        found.update(s.scalars(select(Document.id).where(
            Document.corpus_id == corpus_id, Document.id.in_(part))))
    return found


def _add_to_count(s: Session, corpus_id: int, model_id: int, n: int) -> None:
    """embedded_counts += n; the corpus row is locked by the generation bump already."""
    changed = s.execute(update(EmbeddedCount).where(
        EmbeddedCount.corpus_id == corpus_id, EmbeddedCount.model_id == model_id
    ).values(count=EmbeddedCount.count + n)).rowcount
    if not changed:
        s.execute(insert(EmbeddedCount).values(corpus_id=corpus_id, model_id=model_id, count=n))


def vectors_for(s: Session, model_id: int, doc_ids: np.ndarray, dimension: int) -> np.ndarray:
    """Vectors (n, dim) float32 for the given documents, in the order given."""
    found: dict[int, bytes] = {}
    ids = [int(i) for i in doc_ids]
    for part in chunks(ids, IN_LIMIT):
        found.update(s.execute(select(Embedding.document_id, Embedding.vector).where(
            Embedding.model_id == model_id, Embedding.document_id.in_(part))).tuples().all())
    if not ids:
        return np.zeros((0, dimension), dtype=np.float32)
    missing = [i for i in ids if i not in found]
    if missing:
        raise ModelError(f"No stored vector for documents {missing[:5]}; re-run the embed job.")
    blob = b"".join(found[i] for i in ids)
    return np.frombuffer(blob, dtype=np.float32).reshape(len(ids), dimension).copy()


def embedded_ids(s: Session, corpus_id: int, model_id: int) -> np.ndarray:
    """Sorted ids (int64) of the corpus' documents with a vector for this model."""
    ids = s.scalars(select(Embedding.document_id).where(
        Embedding.corpus_id == corpus_id, Embedding.model_id == model_id
    ).order_by(Embedding.document_id)).all()
    return np.asarray(ids, dtype=np.int64)


def passage_spans(s, doc_ids, model_id: int | None = None) -> dict[int, np.ndarray]:
    """{document id: spans (p, 2) int32} for those of ``doc_ids`` stored as passages (by
    ``model_id``'s split, or any model's).

    Takes a Session or a Connection; reads only the given rows (a hit's snippet). On
    SQLite a row's spans lie behind its passages' vectors (tens of kilobytes a page),
    so each is a walk along the row's overflow pages: the passage index keeps those
    of recent hits (``PassageIndex.spans_of``).
    """
    out: dict[int, np.ndarray] = {}
    same_model = () if model_id is None else (Embedding.model_id == int(model_id),)
    for part in chunks([int(i) for i in doc_ids], IN_LIMIT):
        rows = s.execute(select(Embedding.document_id, Embedding.passage_spans).where(
            Embedding.document_id.in_(part), Embedding.passage_spans.is_not(None),
            *same_model)).all()
        out.update({i: np.frombuffer(b, dtype=np.int32).reshape(-1, 2) for i, b in rows})
    return out
