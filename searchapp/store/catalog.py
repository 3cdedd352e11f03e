"""Corpora and models: create, find, list with their counts, delete.

Counts come from counters kept in the same transactions as the changes
(``corpora.document_count``, ``embedded_counts``): listing corpora costs the
same for ten documents as for ten million.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     _ = get_or_create_corpus(s, "faq", "all-MiniLM-L6-v2")
    ...     summaries(s)
    [CorpusSummary(name='faq', model_name='all-MiniLM-L6-v2', documents=0, embedded=0)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import and_, delete, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from searchapp.errors import CorpusNotFoundError, InvalidParameterError, ModelError
from searchapp.store import fulltext
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.schema import (
    Analysis,
    Corpus,
    Document,
    DocumentTombstone,
    EmbeddedCount,
    Embedding,
    EvaluationRun,
    Judgement,
    Model,
)


@dataclass(frozen=True)
class CorpusSummary:
    name: str
    model_name: str
    documents: int
    embedded: int


@dataclass(frozen=True)
class CorpusState:
    """What a reader needs to know about a corpus, in one row: ids and generation."""

    id: int
    name: str
    model_name: str
    generation: int
    documents: int
    meta_columns: list = field(default_factory=list)


# ---- corpora ---------------------------------------------------------------
def corpus_names(s: Session) -> list[str]:
    return list(s.scalars(select(Corpus.name).order_by(Corpus.name)))


def _storable(name: str) -> bool:
    """Whether a corpus could have this name: PostgreSQL refuses NUL in any text (a
    DataError, not "no such corpus"), neither database takes a lone surrogate (an
    undecodable byte of a command line), and no valid name has either."""
    if "\x00" in name:
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def find_corpus(s: Session, name: str) -> Corpus | None:
    if not _storable(name):
        return None
    return s.scalar(select(Corpus).where(Corpus.name == name.strip()))


def get_corpus(s: Session, name: str) -> Corpus:
    """The corpus called ``name``; the error lists the existing ones."""
    corpus = find_corpus(s, name)
    if corpus is None:
        raise CorpusNotFoundError(name, corpus_names(s))
    return corpus


def corpus_state(s: Session, name: str) -> CorpusState:
    """Id, model, generation and size of a corpus: one indexed lookup."""
    if not _storable(name):
        raise CorpusNotFoundError(name, corpus_names(s))
    row = s.execute(select(Corpus.id, Corpus.name, Corpus.model_name, Corpus.generation,
                           Corpus.document_count, Corpus.meta_columns)
                    .where(Corpus.name == name.strip())).first()
    if row is None:
        raise CorpusNotFoundError(name, corpus_names(s))
    return CorpusState(*row[:5], list(row[5] or []))


def insert_if_absent(s: Session, entity, key: str, **values) -> None:
    """Insert a row unless one with the same unique ``key`` exists (made meanwhile by another
    process, too): ``INSERT ... ON CONFLICT (key) DO NOTHING``.

    Two processes creating the same new corpus or model at once both succeed:
    the second waits for the first's write, then finds its row, instead of
    failing on the unique constraint. Other databases get a plain insert (a
    race is then a ConflictError: "run it again").
    """
    dialect = s.get_bind().dialect.name
    if dialect in ("sqlite", "postgresql"):
        insert = sqlite_insert if dialect == "sqlite" else postgresql_insert
        s.execute(insert(entity).values(**values).on_conflict_do_nothing(index_elements=[key]))
    else:
        s.add(entity(**values))
        s.flush()


def get_or_create_corpus(s: Session, name: str, model_name: str) -> Corpus:
    name = name.strip()
    if not name or len(name) > 200:
        raise InvalidParameterError("A corpus name must have 1 to 200 characters.")
    corpus = s.scalar(select(Corpus).where(Corpus.name == name))
    if corpus is None:
        insert_if_absent(s, Corpus, "name", name=name, model_name=model_name, generation=0,
                         document_count=0, meta_columns=[])
        corpus = s.scalar(select(Corpus).where(Corpus.name == name))
        # after the row, in its transaction; IF NOT EXISTS: a racing creator made it already
        fulltext.create_corpus_index(s.connection(), corpus.id)
    return corpus


def delete_corpus(s: Session, name: str) -> Corpus:
    """Delete a corpus with everything that hangs off it (index files: the caller)."""
    corpus = get_corpus(s, name)
    for table in (Embedding, EmbeddedCount, DocumentTombstone, Analysis, Judgement,
                  EvaluationRun):
        s.execute(delete(table).where(table.corpus_id == corpus.id))
    fulltext.drop_corpus_index(s.connection(), corpus.id)  # after a write: in the transaction;
    # the documents then go without touching an index
    s.execute(delete(Document).where(Document.corpus_id == corpus.id))
    s.delete(corpus)
    s.flush()
    return corpus


def summaries(s: Session) -> list[CorpusSummary]:
    """Each corpus with its document count and how many are embedded for its model."""
    q = (select(Corpus.name, Corpus.model_name, Corpus.document_count, EmbeddedCount.count)
         .outerjoin(Model, Model.name == Corpus.model_name)
         .outerjoin(EmbeddedCount, and_(EmbeddedCount.corpus_id == Corpus.id,
                                        EmbeddedCount.model_id == Model.id))
         .order_by(Corpus.name))
    return [CorpusSummary(name, model, docs, embedded or 0)
            for name, model, docs, embedded in s.execute(q).all()]


def count_documents(s: Session, corpus_id: int) -> int:
    return int(s.scalar(select(Corpus.document_count).where(Corpus.id == corpus_id)) or 0)


def count_embedded(s: Session, corpus_id: int, model_id: int) -> int:
    return int(s.scalar(select(EmbeddedCount.count).where(
        EmbeddedCount.corpus_id == corpus_id, EmbeddedCount.model_id == model_id)) or 0)


# ---- models ------------------------------------------------------------------
def find_model(s: Session, name: str) -> Model | None:
    return s.scalar(select(Model).where(Model.name == name))


@dataclass(frozen=True)
class ModelRef:
    """A model's row, detached from its session: id, name, dimension."""

    id: int
    name: str
    dimension: int


def get_or_create_model(s: Session, name: str, dimension: int, **fields) -> Model:
    """The Model row for ``name``; created on first use. A changed dimension is an error."""
    model = find_model(s, name)
    if model is None:
        insert_if_absent(s, Model, "name", name=name, dimension=dimension, info={}, **fields)
        model = find_model(s, name)
    if model.dimension != dimension:
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


# ---- rerankers --------------------------------------------------------------------
def corpus_reranker(s: Session, name: str) -> str | None:
    """The name of the reranker attached to corpus ``name`` (None: none is)."""
    return get_corpus(s, name).reranker


def set_corpus_reranker(s: Session, name: str, reranker: str | None) -> None:
    """Attach reranker ``reranker`` to corpus ``name`` (None detaches it)."""
    get_corpus(s, name).reranker = reranker
    s.flush()
