"""The ORM tables. The database is the source of truth; index files derive from it.

    corpora ─< documents ─< embeddings >─ models
       │ ─< embedded_counts >─ models     (how many vectors each model has, O(1) to read)
       │ ─< document_tombstones          (documents removed, for incremental index sync)
    jobs                                  (the queue, see searchapp.jobs.queue)
    analyses                              (stored duplicate / cluster results)
    api_keys                              (the API's keys, as SHA-256 hashes only)
    corpora ─< judgements                 (a person's labels: query → document, pair)
    corpora ─< evaluation_runs            (metrics measured on those labels, over time)
    documents ─ document_layouts          (a file's parts: page and section of each span)
    corpora ─< watched_folders            (folders a corpus follows, their status and lease)
    corpora ─< vocabulary                 (each word of its documents, in how many documents)
    corpora ─< saved_searches ─< saved_search_hits >─ documents  (searches kept, their news)
    corpora ─< search_history             (each user's recent queries per corpus)

Change tracking: ``corpora.generation`` is bumped in the same transaction as
every change to the corpus' documents or embeddings, and each embedding and
tombstone row records the generation that wrote it. A cache built at generation
g (an index file, an in-process index, a stored analysis) is current while the
corpus is still at g, and is brought up to date by reading only the rows
written after g. Ids of corpora and documents are never reused (AUTOINCREMENT
on SQLite, sequences elsewhere), so a label in an index always means the same
text.

Vectors are float32 blobs (``numpy.ndarray.tobytes()``), ``dimension`` floats each.

Full text: ``documents`` carries a full-text index kept by the database in the
same transaction as every write (on SQLite an FTS5 table per corpus, made with
the corpus and written by the store's document writes, so BM25 counts that
corpus only; on PostgreSQL a ``tsvector`` column the store writes, with a GIN index;
both over the search words of ``base/words``; see ``store/fulltext.py``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

SCHEMA_VERSION = 14
NEVER_REUSE_IDS = {"sqlite_autoincrement": True}


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class SchemaInfo(Base):
    """One row: the schema version the database is migrated to."""

    __tablename__ = "schema_info"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(Integer, nullable=False)


class Model(Base):
    """An encoder known to the app: bundled, or fine-tuned into DATA_DIR/models/NAME."""

    __tablename__ = "models"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    dimension: Mapped[int] = mapped_column(Integer, nullable=False)
    path: Mapped[str | None] = mapped_column(Text)
    base_model: Mapped[str | None] = mapped_column(String(200))
    info: Mapped[dict] = mapped_column(JSON, default=dict)  # objective, metrics, ...
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Corpus(Base):
    """A named collection of documents, embedded with ``model_name``."""

    __tablename__ = "corpora"
    __table_args__ = NEVER_REUSE_IDS
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    model_name: Mapped[str] = mapped_column(String(200), nullable=False)
    generation: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    document_count: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    # every metadata key its documents have used (for filters: known columns, O(1) to read)
    meta_columns: Mapped[list] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # the reranker attached because it beat no reranking on held-out judgements
    # (a folder under DATA_DIR/models/rerankers; searchapp.search.rerank); NULL: none
    reranker: Mapped[str | None] = mapped_column(String(200))


class Document(Base):
    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("corpus_id", "external_id", name="uq_document_external"),
        Index("ix_documents_corpus_id_id", "corpus_id", "id"),  # keyset pages of a corpus
        Index("ix_documents_source", "corpus_id", "source"),  # one source's documents
        NEVER_REUSE_IDS,
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    external_id: Mapped[str] = mapped_column(String(500), nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # the app's record of what brought the document (``store/sources.py``), never its
    # metadata: a sync changes or removes only its own source's documents
    source: Mapped[str | None] = mapped_column(String(600))
    # SHA-256 of the original file kept for a document read from a file; NULL otherwise
    original: Mapped[str | None] = mapped_column(String(64))


class DocumentLayout(Base):
    """Where each part of a document read from a file sits: ``parts`` is
    ``[[start, end, page, section], ...]``, character spans of the document's text
    in order (``searchapp.intake.formats.document``). Only documents read from
    files have one; a passage never spans two parts, and a hit names its part's
    page and section."""

    __tablename__ = "document_layouts"
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    parts: Mapped[list] = mapped_column(JSON, nullable=False)


class Embedding(Base):
    """One document's vector for one model, tagged with the generation that wrote it."""

    __tablename__ = "embeddings"
    __table_args__ = (
        Index("ix_embeddings_changes", "corpus_id", "model_id", "generation"),
    )
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    model_id: Mapped[int] = mapped_column(
        ForeignKey("models.id", ondelete="CASCADE"), primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    generation: Mapped[int] = mapped_column(Integer, nullable=False)
    vector: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    # a document longer than the model's window: its passages' vectors (p, dim) float32
    # and their character spans (p, 2) int32; NULL for a document that fits in one window
    passages: Mapped[bytes | None] = mapped_column(LargeBinary)
    passage_spans: Mapped[bytes | None] = mapped_column(LargeBinary)


class PassageSentences(Base):
    """The sentences of one passage of a document, for one model: their character spans in
    the document's text (s, 2) int32 and their vectors (s, dim) float16.

    Cut (``searchapp.embedding.sentences``) and encoded at embed time beside the passages,
    so that an answer (``searchapp.answers``) reads the few rows of a search's top passages
    by primary key and scores them without splitting or encoding anything at query time.
    ``passage`` is the passage's number (0 for a document that fits one window); a sentence
    belongs to the first passage that holds its start. Written and replaced with the
    document's embedding; gone with the document or the model.
    """

    __tablename__ = "passage_sentences"
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    model_id: Mapped[int] = mapped_column(
        ForeignKey("models.id", ondelete="CASCADE"), primary_key=True)
    passage: Mapped[int] = mapped_column(Integer, primary_key=True)
    spans: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    vectors: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class EmbeddedCount(Base):
    """How many documents of a corpus have a vector for a model (kept with every change)."""

    __tablename__ = "embedded_counts"
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), primary_key=True)
    model_id: Mapped[int] = mapped_column(
        ForeignKey("models.id", ondelete="CASCADE"), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0, nullable=False)


class DocumentTombstone(Base):
    """A document removed from a corpus at ``generation``: indexes built before drop it."""

    __tablename__ = "document_tombstones"
    __table_args__ = (Index("ix_tombstones_changes", "corpus_id", "generation"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    document_id: Mapped[int] = mapped_column(Integer, nullable=False)
    generation: Mapped[int] = mapped_column(Integer, nullable=False)


class Job(Base):
    """A unit of background work; the table is the queue (see searchapp.jobs.queue)."""

    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(50), nullable=False)
    status: Mapped[str] = mapped_column(String(20), default="queued", index=True, nullable=False)
    payload: Mapped[dict] = mapped_column(JSON, default=dict)
    result: Mapped[dict | None] = mapped_column(JSON)
    progress_done: Mapped[int] = mapped_column(Integer, default=0)
    progress_total: Mapped[int] = mapped_column(Integer, default=0)
    message: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    worker: Mapped[str | None] = mapped_column(String(200))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime)


class Analysis(Base):
    """A stored result (duplicate pairs, clusters) for a (corpus, model, parameters).

    ``generation`` is the corpus generation it was computed at; a result from
    another generation is recomputed, never shown. ``result`` holds the small
    JSON part, ``arrays`` the per-document arrays (an ``.npz`` file's bytes).
    """

    __tablename__ = "analyses"
    __table_args__ = (
        UniqueConstraint("corpus_id", "model_id", "kind", "params_key", name="uq_analysis"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), index=True, nullable=False
    )
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(50), nullable=False)
    params_key: Mapped[str] = mapped_column(String(500), nullable=False)
    params: Mapped[dict] = mapped_column(JSON, default=dict)
    generation: Mapped[int] = mapped_column(Integer, nullable=False)
    result: Mapped[dict] = mapped_column(JSON, default=dict)
    arrays: Mapped[bytes | None] = mapped_column(LargeBinary)
    seconds: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class ApiKey(Base):
    """A key of the JSON API (``searchapp keys create``): only its SHA-256 is stored.

    ``prefix`` is the key's first characters, shown in listings so a person can
    tell keys apart; the key itself is shown once, when it is created.
    """

    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    prefix: Mapped[str] = mapped_column(String(20), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    read_only: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime)
class Judgement(Base):
    """A person's label on one item of a corpus, by the documents' external ids.

    kind 'query': ``query`` → document ``a_id``, label a grade 0–3 (0 = not relevant,
    1 or more = relevant). kind 'pair': documents ``a_id`` < ``b_id``, label 1
    (duplicate) or 0 (not). External ids, not row ids, so a judgement survives
    re-embedding, a model switch and a changed text. ``item_key`` (SHA-256 of kind,
    query, a, b) is the item's identity: one label per item, a new one replaces it.
    A hash rather than a unique index over the columns: NULLs never collide in a
    unique index, and PostgreSQL caps a B-tree key near 2.7 kB, which a query can pass.
    """

    __tablename__ = "judgements"
    __table_args__ = (
        UniqueConstraint("corpus_id", "item_key", name="uq_judgement_item"),
        Index("ix_judgements_corpus_kind", "corpus_id", "kind", "id"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    kind: Mapped[str] = mapped_column(String(10), nullable=False)  # 'query' | 'pair'
    query: Mapped[str | None] = mapped_column(Text)
    a_id: Mapped[str] = mapped_column(String(500), nullable=False)
    b_id: Mapped[str | None] = mapped_column(String(500))
    label: Mapped[int] = mapped_column(Integer, nullable=False)
    source: Mapped[str] = mapped_column(String(20), nullable=False)
    item_key: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class EvaluationRun(Base):
    """Metrics of one model measured on a corpus' judgements (the Evaluate page's history)."""

    __tablename__ = "evaluation_runs"
    __table_args__ = (Index("ix_evaluation_runs_corpus", "corpus_id", "created_at"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    model_name: Mapped[str] = mapped_column(String(200), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    metrics: Mapped[dict] = mapped_column(JSON, default=dict)
    judgements: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    note: Mapped[str] = mapped_column(Text, default="", nullable=False)


class WatchedFolder(Base):
    """A folder a corpus follows (``searchapp watch add``), with its last known status.

    ``device`` is the folder's ``st_dev`` when it was added: another value later means
    another file system (or none) is mounted there, and the folder is unavailable, not
    empty. ``lease_owner``/``lease_until``: the worker watching it now (one at a time;
    a lease not renewed by its expiry is free to take). The counts and ``failures``
    (``[{"path", "reason"}]``, capped) are those of the last sync.
    """

    __tablename__ = "watched_folders"
    __table_args__ = (UniqueConstraint("corpus_id", "path", name="uq_watched_folder"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    path: Mapped[str] = mapped_column(String(4096), nullable=False)
    include: Mapped[list] = mapped_column(JSON, default=list)
    exclude: Mapped[list] = mapped_column(JSON, default=list)
    paused: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    device: Mapped[str | None] = mapped_column(String(40))
    available: Mapped[bool] = mapped_column(Boolean, default=True, nullable=False)
    reason: Mapped[str | None] = mapped_column(Text)
    files_seen: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    files_in_step: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    files_waiting: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    files_failed: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    failures: Mapped[list] = mapped_column(JSON, default=list)
    last_change: Mapped[dict] = mapped_column(JSON, default=dict)
    last_change_at: Mapped[datetime | None] = mapped_column(DateTime)
    last_sync_at: Mapped[datetime | None] = mapped_column(DateTime)
    job_id: Mapped[int | None] = mapped_column(Integer)
    lease_owner: Mapped[str | None] = mapped_column(String(200))
    lease_until: Mapped[datetime | None] = mapped_column(DateTime)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class VocabularyWord(Base):
    """A word of a corpus' documents and how many of them hold it (``store/vocabulary.py``).

    Derived data, kept in the transaction of every document write (with the full-text
    index): lower-cased letters only, as typed in the documents (accents kept). The
    "did you mean" of a search proposes its words (``searchapp.search.spelling``).
    """

    __tablename__ = "vocabulary"
    __table_args__ = ({"sqlite_with_rowid": False},)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), primary_key=True)
    word: Mapped[str] = mapped_column(String(64), primary_key=True)
    documents: Mapped[int] = mapped_column(Integer, nullable=False)


class SavedSearch(Base):
    """A search kept to be run again and to watch for news (``searchapp.saved``).

    ``query`` is the text as typed (operators and field filters included: the search
    parses it), with ``mode``, ``k``, ``min_score`` and ``conditions`` (``--where``).
    ``watermark``: the highest document id the user has seen for it (a hit above it is
    new); ``last_checked_id``: the highest document id the checks after each ingest have
    looked at. ``feed_token`` is the
    credential of its Atom feed; ``webhook_url`` and ``desktop`` say how it notifies, and
    ``last_outcome`` what the last notification did (``{"webhook": {...}, "desktop": {...}}``).
    """

    __tablename__ = "saved_searches"
    __table_args__ = (UniqueConstraint("corpus_id", "name", name="uq_saved_search_name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    query: Mapped[str] = mapped_column(Text, nullable=False)
    mode: Mapped[str] = mapped_column(String(20), nullable=False)
    k: Mapped[int] = mapped_column(Integer, nullable=False)
    min_score: Mapped[float | None] = mapped_column(Float)
    conditions: Mapped[list] = mapped_column(JSON, default=list)  # the `--where` list
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    last_look_at: Mapped[datetime | None] = mapped_column(DateTime)
    watermark: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    last_checked_id: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    feed_token: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    webhook_url: Mapped[str | None] = mapped_column(Text)
    desktop: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    last_outcome: Mapped[dict] = mapped_column(JSON, default=dict)


class SavedSearchHit(Base):
    """A document a saved search's check found among those that arrived: its news.

    Deleting the document or the saved search deletes the row (foreign keys).
    """

    __tablename__ = "saved_search_hits"
    __table_args__ = (Index("ix_saved_search_hits_found", "saved_id", "found_at"),)
    saved_id: Mapped[int] = mapped_column(
        ForeignKey("saved_searches.id", ondelete="CASCADE"), primary_key=True)
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    score: Mapped[float] = mapped_column(Float, nullable=False)
    found_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class SearchHistory(Base):
    """One user's query of one corpus, as last run (``store/search_history.py``).

    ``user_key`` is who ran it: ``local`` (the CLI, an open server), ``browser`` (the
    login of a password-protected server) or ``key:<id>`` (an API key); never shared
    between them. One row per (user, corpus, normalised query): running it again moves
    it to the top; the oldest beyond the cap are dropped.
    """

    __tablename__ = "search_history"
    __table_args__ = (
        UniqueConstraint("user_key", "corpus_id", "folded", name="uq_search_history"),
        Index("ix_search_history_recent", "user_key", "corpus_id", "searched_at"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_key: Mapped[str] = mapped_column(String(120), nullable=False)
    corpus_id: Mapped[int] = mapped_column(
        ForeignKey("corpora.id", ondelete="CASCADE"), nullable=False)
    query: Mapped[str] = mapped_column(String(1000), nullable=False)
    folded: Mapped[str] = mapped_column(String(1000), nullable=False)
    searched_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
