"""Change tracking: a corpus' generation, tombstones, and what changed since a generation.

Every transaction that changes a corpus' documents or embeddings calls
``next_generation`` first: it bumps ``corpora.generation`` (which also locks the
corpus row until the commit, so generations commit in order) and returns the
new value, which the transaction writes into each embedding and tombstone row.
A cache built at generation g is brought up to date with ``removed_since(g)``
and ``embeddings_since(g)``: work proportional to the change, not the corpus.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "m")
    ...     next_generation(s, c.id), next_generation(s, c.id)
    (1, 2)
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from searchapp.errors import CorpusDeletedError
from searchapp.store.catalog import get_or_create_corpus  # noqa: F401 - used in the doctest
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.schema import Corpus, DocumentTombstone, Embedding, utcnow

STREAM_ROWS = 20_000  # vectors per chunk when streaming a whole corpus


def next_generation(s: Session, corpus_id: int) -> int:
    """Bump and return the corpus' generation, in the caller's transaction."""
    new = s.execute(update(Corpus).where(Corpus.id == corpus_id)
                    .values(generation=Corpus.generation + 1, updated_at=utcnow())
                    .returning(Corpus.generation)).scalar()
    if new is None:
        raise CorpusDeletedError(f"Corpus #{corpus_id}")
    return int(new)


class LazyGeneration:
    """The next generation, taken on first use only: a no-op upload bumps nothing."""

    def __init__(self, s: Session, corpus_id: int):
        self._s, self._corpus_id, self._value = s, corpus_id, None

    @property
    def value(self) -> int:
        if self._value is None:
            self._value = next_generation(self._s, self._corpus_id)
        return self._value

    @property
    def taken(self) -> bool:
        return self._value is not None


def current_generation(s: Session, corpus_id: int) -> int:
    return int(s.scalar(select(Corpus.generation).where(Corpus.id == corpus_id)) or 0)


def unchanged_since(s: Session, corpus_id: int, model_id: int, generation: int) -> bool:
    """Whether the corpus' vectors of one model are as they were at ``generation``: no
    vector of that model written since and no document removed since (a changed text is
    a removal and a new document). Generations bumped for anything else (another model's
    vectors, a switch of model and back, metadata) leave a result of this model current.
    """
    later_vector = s.scalar(select(Embedding.document_id).where(
        Embedding.corpus_id == corpus_id, Embedding.model_id == model_id,
        Embedding.generation > generation).limit(1))
    if later_vector is not None:
        return False
    return s.scalar(select(DocumentTombstone.document_id).where(
        DocumentTombstone.corpus_id == corpus_id,
        DocumentTombstone.generation > generation).limit(1)) is None


def record_removed(s: Session, corpus_id: int, doc_ids: list[int], generation: int) -> None:
    """Tombstones for documents removed at ``generation``."""
    if doc_ids:
        s.execute(insert(DocumentTombstone), [
            {"corpus_id": corpus_id, "document_id": int(i), "generation": generation}
            for i in doc_ids])


def removed_since(s: Session, corpus_id: int, generation: int) -> np.ndarray:
    """Ids (int64) of the corpus' documents removed after ``generation``."""
    ids = s.scalars(select(DocumentTombstone.document_id).where(
        DocumentTombstone.corpus_id == corpus_id,
        DocumentTombstone.generation > generation)).all()
    return np.asarray(ids, dtype=np.int64)


def embeddings_since(s: Session, corpus_id: int, model_id: int, generation: int,
                     dimension: int, chunk: int = STREAM_ROWS
                     ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Vectors written after ``generation``, in chunks of (ids (m,), vectors (m, dim)).

    With ``generation=0`` this streams the whole corpus without holding it twice.
    """
    q = (select(Embedding.document_id, Embedding.vector)
         .where(Embedding.corpus_id == corpus_id, Embedding.model_id == model_id,
                Embedding.generation > generation)
         .execution_options(yield_per=chunk))
    for rows in s.execute(q).partitions(chunk):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        yield ids, matrix.reshape(len(rows), dimension)


def passages_since(s: Session, corpus_id: int, model_id: int, generation: int, dimension: int,
                   stride: int, chunk: int = 2_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Passage vectors written after ``generation``: (labels (m,), vectors (m, dim)) chunks.

    A passage's label is ``document id * stride + its number``; only documents
    split into passages have any.
    """
    q = (select(Embedding.document_id, Embedding.passages)
         .where(Embedding.corpus_id == corpus_id, Embedding.model_id == model_id,
                Embedding.generation > generation, Embedding.passages.is_not(None))
         .execution_options(yield_per=chunk))
    for rows in s.execute(q).partitions(chunk):
        yield passage_rows(rows, dimension, stride)


def passage_rows(rows, dimension: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """(labels (m,), vectors (m, dim)) of the passages in (document id, passages blob) rows.

    Example:
        >>> blob = np.eye(2, dtype=np.float32).tobytes()
        >>> labels, vectors = passage_rows([(7, blob)], 2, 1000)
        >>> labels.tolist(), vectors.shape
        ([7000, 7001], (2, 2))
    """
    labels, blocks = [], []
    for doc_id, blob in rows:
        block = np.frombuffer(blob, dtype=np.float32).reshape(-1, dimension)
        labels.append(doc_id * stride + np.arange(len(block), dtype=np.int64))
        blocks.append(block)
    return np.concatenate(labels), np.vstack(blocks)
