"""Documents: batched upload with change detection, and reads by id or by keyset page.

An upload compares each document's content hash and metadata with the stored
ones by external id, looking up only the ids in the upload (never the whole
corpus), and writes in batches. A changed text gets a *new* primary key (the
old row, its vectors and its place in every index go; a tombstone records it),
so a label in an index always means one text; changed metadata alone is
updated in place (a re-upload is how a user corrects it).

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "all-MiniLM-L6-v2")
    ...     add_documents(s, c, [NewDocument("q1", "How do I reset my password?")]).added
    1
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, bindparam, delete, exists, func, insert, select
from sqlalchemy.orm import Session

from searchapp.store import fulltext, sources
from searchapp.store.catalog import get_or_create_corpus  # noqa: F401 - used in the doctest
from searchapp.store.changes import LazyGeneration, next_generation, record_removed
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.schema import (
    Corpus,
    Document,
    DocumentLayout,
    EmbeddedCount,
    Embedding,
    utcnow,
)

BATCH = 5_000  # rows per INSERT batch and per lookup of existing ids
IN_LIMIT = 900  # ids per IN (...) list: under SQLite's variable limit


def content_hash(text: str) -> str:
    """SHA-256 of the text: unchanged text is never embedded twice."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NewDocument:
    external_id: str
    text: str
    meta: dict = field(default_factory=dict)
    # a document read from a file: [[start, end, page, section], ...] per part of ``text``
    layout: list | None = None
    # what brought it (``store/sources.py``; None: the writer's source) and, read from a
    # file, the SHA-256 of the original kept for it
    source: str | None = None
    original: str | None = None


@dataclass(frozen=True)
class AddResult:
    added: int
    updated: int  # a new text: a new row, embedded again
    unchanged: int
    generation: int | None = None  # the generation the change was written at, if any
    meta_updated: int = 0  # the same text with new metadata: updated in place


@dataclass(frozen=True)
class DocumentRow:
    """A stored document as readers see it (no ORM object, no lazy loading)."""

    id: int
    external_id: str
    text: str
    meta: dict


def chunks(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _stored(s: Session, corpus_id: int, external_ids: list[str]
            ) -> dict[str, tuple[int, str, dict, str | None, str | None]]:
    """{external_id: (id, content_hash, meta, source, original)} for those of
    ``external_ids`` already stored."""
    out: dict[str, tuple[int, str, dict, str | None, str | None]] = {}
    for part in chunks(external_ids, IN_LIMIT):
        q = select(Document.external_id, Document.id, Document.content_hash, Document.meta,
                   Document.source, Document.original).where(
            Document.corpus_id == corpus_id, Document.external_id.in_(part))
        out.update({e: (i, h, m or {}, src, o) for e, i, h, m, src, o in s.execute(q).all()})
    return out


def _row(corpus_id: int, doc: NewDocument, digest: str, source: str) -> dict:
    return {"corpus_id": corpus_id, "external_id": doc.external_id, "text": doc.text,
            "meta": doc.meta, "content_hash": digest, "created_at": utcnow(),
            "source": doc.source or source, "original": doc.original}


_SET_META = Document.__table__.update().where(Document.id == bindparam("doc_id")).values(
    meta=bindparam("new_meta", type_=Document.__table__.c.meta.type),
    source=bindparam("new_source"), original=bindparam("new_original"))


class DocumentWriter:
    """One upload's documents written batch by batch in the caller's transaction.

    Per document, by external id: new → inserted; same text, other metadata →
    its metadata updated in place (same row, same vectors: nothing is embedded
    again); other text → a new row (the old one, its vectors and its place in
    every index go, as ``add_documents`` says); same text and metadata →
    nothing. The first change bumps the corpus' generation (once for the whole
    upload), so every cache keyed on it sees the new rows and values;
    ``finish`` counts the new documents and registers new metadata columns.

    Example:
        >>> db = Database("sqlite://")
        >>> with db.session() as s:
        ...     c = get_or_create_corpus(s, "faq", "m")
        ...     _ = add_documents(s, c, [NewDocument("q1", "Hi?", {"topic": "a"})])
        ...     writer = DocumentWriter(s, c)
        ...     writer.add([NewDocument("q1", "Hi?", {"topic": "b"})])
        ...     writer.finish().meta_updated, c.meta_columns
        (1, ['topic'])
    """

    def __init__(self, s: Session, corpus: Corpus, source: str = sources.LEGACY_ROWS):
        self.s, self.corpus, self.source = s, corpus, source
        self.generation = LazyGeneration(s, corpus.id)
        self.empty = corpus.document_count == 0  # nothing to compare against: no lookups
        self.added = self.updated = self.meta_updated = self.seen = 0
        self.keys: set[str] = set()

    def add(self, docs: Sequence[NewDocument]) -> None:
        """Write a batch (ids distinct within the upload: the caller checks)."""
        s, corpus = self.s, self.corpus
        self.seen += len(docs)
        for doc in docs:
            self.keys.update(doc.meta)
        digests = [content_hash(d.text) for d in docs]
        rows, replaced, relabelled = self._plan(docs, digests)
        if not rows and not relabelled:
            return
        if not self.generation.taken:
            self.generation.value  # noqa: B018 - before the first write: it locks the corpus row
            # planned again under that lock: a concurrent writer has committed by now, so a
            # row is replaced (and counted) once, never from a stale read
            self.empty = not _has_documents(s, corpus.id)
            rows, replaced, relabelled = self._plan(docs, digests)
        removed = remove_documents(s, corpus.id, replaced, self.generation.value) \
            if replaced else 0
        if rows:
            after = fulltext.last_document_id(s.connection())
            s.execute(insert(Document), rows)
            fulltext.index_new(s.connection(), corpus.id, after)
            inserted = {r["external_id"] for r in rows}
            _save_layouts(s, corpus.id, [d for d in docs
                                         if d.layout and d.external_id in inserted])
        if relabelled:
            s.connection().execute(_SET_META, relabelled)
        replaced = replaced[:removed]  # as many as were really there
        self.added += len(rows) - len(replaced)
        self.updated += len(replaced)
        self.meta_updated += len(relabelled)

    def _plan(self, docs: Sequence[NewDocument], digests: list[str]
              ) -> tuple[list[dict], list[int], list[dict]]:
        """(rows to insert, stored ids they replace, metadata updates) for a batch."""
        corpus_id = self.corpus.id
        stored = {} if self.empty else _stored(self.s, corpus_id,
                                               [d.external_id for d in docs])
        rows, replaced, relabelled = [], [], []
        for doc, digest in zip(docs, digests, strict=True):
            old = stored.get(doc.external_id)
            if old is None or old[1] != digest:
                rows.append(_row(corpus_id, doc, digest, self.source))
                if old is not None:
                    replaced.append(old[0])
                continue
            # the same text: a file read again records its source and original; any other
            # writer changes the metadata only, and the row keeps what brought it
            source, original = ((doc.source or self.source, doc.original) if doc.original
                                else (old[3], old[4]))
            if (old[2], old[3], old[4]) != (doc.meta, source, original):
                relabelled.append({"doc_id": old[0], "new_meta": doc.meta,
                                   "new_source": source, "new_original": original})
        return rows, replaced, relabelled

    def finish(self) -> AddResult:
        """Counters and metadata columns brought up to date; what changed."""
        s, corpus = self.s, self.corpus
        if self.generation.taken:
            known = list(corpus.meta_columns or [])
            new_keys = sorted({str(key) for key in self.keys} - set(known))
            s.execute(Corpus.__table__.update().where(Corpus.id == corpus.id).values(
                document_count=Corpus.document_count + self.added,
                meta_columns=known + new_keys))
            s.expire(corpus, ["document_count", "generation", "updated_at", "meta_columns"])
        s.flush()
        changed = self.added + self.updated + self.meta_updated
        return AddResult(self.added, self.updated, self.seen - changed,
                         self.generation.value if self.generation.taken else None,
                         self.meta_updated)


def _save_layouts(s: Session, corpus_id: int, docs: Sequence[NewDocument]) -> None:
    """The layouts of documents just inserted, keyed by their new row ids."""
    if not docs:
        return
    ids = _stored(s, corpus_id, [d.external_id for d in docs])
    s.execute(insert(DocumentLayout), [
        {"document_id": ids[d.external_id][0], "parts": d.layout} for d in docs])


def layouts_by_id(s: Session | Connection, ids: Iterable[int]) -> dict[int, list]:
    """{document id: parts} for those of ``ids`` read from files (others have no layout).

    Example:
        >>> db = Database("sqlite://")
        >>> with db.session() as s:
        ...     c = get_or_create_corpus(s, "docs", "m")
        ...     _ = add_documents(s, c, [NewDocument("a.pdf", "p1\\n\\np2", {},
        ...                                          [[0, 2, 1, None], [4, 6, 2, None]])])
        ...     layouts_by_id(s, [1])
        {1: [[0, 2, 1, None], [4, 6, 2, None]]}
    """
    conn = s.connection() if isinstance(s, Session) else s
    table = DocumentLayout.__table__
    out: dict[int, list] = {}
    for part in chunks([int(i) for i in ids], IN_LIMIT):
        rows = conn.execute(select(table.c.document_id, table.c.parts).where(
            table.c.document_id.in_(part))).all()
        out.update({int(i): json.loads(p) if isinstance(p, str | bytes) else p
                    for i, p in rows})
    return out


def _has_documents(s: Session, corpus_id: int) -> bool:
    return s.scalar(select(Document.id).where(Document.corpus_id == corpus_id).limit(1)) \
        is not None


def add_documents(s: Session, corpus: Corpus, docs: list[NewDocument],
                  batch: int = BATCH, source: str = sources.LEGACY_ROWS) -> AddResult:
    """Insert new documents; an existing id with new text is replaced (and re-embedded), one
    with new metadata only gets the new metadata (``DocumentWriter``).

    Same id, text and metadata: nothing happens, so uploading a file twice adds
    nothing and does not even bump the generation.
    """
    writer = DocumentWriter(s, corpus, source)
    for part in chunks(docs, batch):
        writer.add(part)
    return writer.finish()


def remove_documents(s: Session, corpus_id: int, doc_ids: list[int], generation: int) -> int:
    """Delete documents with their vectors (counts kept right) and leave tombstones; how many
    document rows were deleted. Call it holding the corpus row's lock (``next_generation``)."""
    removed = 0
    for part in chunks(doc_ids, IN_LIMIT):
        per_model = s.execute(select(Embedding.model_id, func.count()).where(
            Embedding.document_id.in_(part)).group_by(Embedding.model_id)).all()
        for model_id, n in per_model:
            s.execute(EmbeddedCount.__table__.update().where(
                EmbeddedCount.corpus_id == corpus_id, EmbeddedCount.model_id == model_id
            ).values(count=EmbeddedCount.count - n))
        s.execute(delete(Embedding).where(Embedding.document_id.in_(part)))
        s.execute(delete(DocumentLayout).where(DocumentLayout.document_id.in_(part)))
        fulltext.unindex(s.connection(), corpus_id, part)
        removed += s.execute(delete(Document).where(Document.id.in_(part))).rowcount
    record_removed(s, corpus_id, doc_ids, generation)
    return removed


def renew_documents(s: Session, corpus_id: int, doc_ids: Sequence[int]) -> int:
    """Give documents new ids (same external id, text and metadata), so they are embedded again.

    As for a changed text: the old rows go with their vectors and leave
    tombstones, the copies have no vector yet, and an index label still means
    one text. For documents embedded before long ones were split into passages
    (``searchapp.corpora.service.split_long``). One generation for the batch; returns
    how many were renewed.
    """
    rows = s.execute(select(Document.id, Document.external_id, Document.text, Document.meta,
                            Document.content_hash, Document.created_at, Document.source,
                            Document.original).where(
        Document.corpus_id == corpus_id, Document.id.in_([int(i) for i in doc_ids]))).all()
    if not rows:
        return 0
    generation = next_generation(s, corpus_id)  # first: it locks the corpus row
    layouts = layouts_by_id(s, [r.id for r in rows])
    remove_documents(s, corpus_id, [r.id for r in rows], generation)
    after = fulltext.last_document_id(s.connection())
    s.execute(insert(Document), [
        {"corpus_id": corpus_id, "external_id": r.external_id, "text": r.text, "meta": r.meta,
         "content_hash": r.content_hash, "created_at": r.created_at, "source": r.source,
         "original": r.original} for r in rows])
    fulltext.index_new(s.connection(), corpus_id, after)
    _save_layouts(s, corpus_id, [NewDocument(r.external_id, r.text, {}, layouts[r.id])
                                 for r in rows if r.id in layouts])
    return len(rows)


def unsplit_embedded(s: Session, corpus_id: int, model_id: int, after: int, limit: int
                     ) -> list[tuple[int, str]]:
    """(id, text) of embedded documents without passages, id > ``after``, in id order."""
    return [(int(i), t) for i, t in s.execute(
        select(Document.id, Document.text).join(Embedding, Embedding.document_id == Document.id)
        .where(Document.corpus_id == corpus_id, Embedding.model_id == model_id,
               Embedding.passages.is_(None), Document.id > after)
        .order_by(Document.id).limit(limit)).all()]


# ---- reads -------------------------------------------------------------------
# The query path's one read. Plain SQL through the driver: SQLAlchemy's statement
# machinery costs more than SQLite's own work for ten rows by primary key.
_ROWS_SQL = "SELECT id, external_id, text, meta FROM documents WHERE id IN ({marks})"
_MARK = {"qmark": "?", "format": "%s", "pyformat": "%s"}
_ROWS_BY_ID = select(Document.id, Document.external_id, Document.text, Document.meta).where(
    Document.id.in_(bindparam("ids", expanding=True)))  # for drivers with other paramstyles


def documents_by_id(s: Session | Connection, ids: Iterable[int]) -> dict[int, DocumentRow]:
    """Documents keyed by primary key (for turning index labels into rows).

    Takes a Session or, on the query path, a plain Connection (``Database.reader``).
    """
    conn = s.connection() if isinstance(s, Session) else s
    mark = _MARK.get(conn.dialect.paramstyle)
    wanted = [int(i) for i in ids]
    out: dict[int, DocumentRow] = {}
    for part in chunks(wanted, IN_LIMIT):
        if mark:
            rows = conn.exec_driver_sql(_ROWS_SQL.format(marks=",".join([mark] * len(part))),
                                        tuple(part)).all()
        else:
            rows = conn.execute(_ROWS_BY_ID, {"ids": list(part)}).all()
        out.update({i: DocumentRow(i, e, t, _json(m)) for i, e, t, m in rows})
    return out


def _json(value) -> dict:
    """A JSON column as read by a plain driver: text on SQLite, already decoded elsewhere."""
    if isinstance(value, str | bytes):
        return json.loads(value) or {}
    return value or {}


def document_texts(s: Session, corpus_id: int, ids: Iterable[int] | None = None
                   ) -> dict[int, tuple[str, str]]:
    """{id: (external_id, text)} for the given documents of a corpus, or for all of them.

    Two columns only, no ORM objects: fast enough for every document of a large corpus.
    """
    q = select(Document.id, Document.external_id, Document.text).where(
        Document.corpus_id == corpus_id)
    if ids is None:
        return {i: (e, t) for i, e, t in s.execute(q).all()}
    out: dict[int, tuple[str, str]] = {}
    for part in chunks([int(i) for i in ids], IN_LIMIT):
        out.update({i: (e, t) for i, e, t in s.execute(q.where(Document.id.in_(part))).all()})
    return out


@dataclass(frozen=True)
class StoredFile:
    """A stored document read from a file, as an ingest of files compares against it:
    ``source`` and ``original`` are the app's record (``store/sources.py``)."""

    id: int
    meta: dict
    source: str
    original: str


def stored_files(s: Session, corpus_id: int) -> dict[str, StoredFile]:
    """{external id: StoredFile} of a corpus' documents read from files (those the app
    kept an original for): what an ingest of files compares against. A row whose
    metadata merely names a ``path`` and a ``sha256`` (a table of files) is not one.

    Example:
        >>> with Database("sqlite://").session() as s:
        ...     c = get_or_create_corpus(s, "docs", "m")
        ...     file = NewDocument("a.md", "Hi", {"path": "a.md"}, source="upload",
        ...                        original="9f" * 32)
        ...     row = NewDocument("row1", "Hello", {"path": "a.md", "sha256": "9f" * 32})
        ...     _ = add_documents(s, c, [file, row])
        ...     [(e, f.source) for e, f in stored_files(s, c.id).items()]
        [('a.md', 'upload')]
    """
    q = (select(Document.external_id, Document.id, Document.meta, Document.source,
                Document.original)
         .where(Document.corpus_id == corpus_id, Document.original.is_not(None))
         .execution_options(yield_per=5_000))
    return {external_id: StoredFile(int(doc_id), _json(meta), source or sources.LEGACY_FILES,
                                    original)
            for external_id, doc_id, meta, source, original in s.execute(q)}


def owners(s: Session, corpus_id: int, external_ids: Sequence[str]) -> dict[str, str]:
    """{external id: source} for those of ``external_ids`` stored in the corpus."""
    return {e: row[3] or sources.LEGACY_ROWS
            for e, row in _stored(s, corpus_id, list(external_ids)).items()}


def take_over(s: Session, corpus_id: int, external_ids: Sequence[str], source: str) -> int:
    """Record ``source`` as the source of these documents (a folder or upload that read
    again files stored before sources were recorded); how many rows changed."""
    changed = 0
    for part in chunks(list(external_ids), IN_LIMIT):
        changed += s.execute(Document.__table__.update().where(
            Document.corpus_id == corpus_id, Document.external_id.in_(part)
        ).values(source=source)).rowcount
    return changed


def external_ids(s: Session, corpus_id: int) -> dict[int, str]:
    """{id: external id} of every document of a corpus (for exports)."""
    q = select(Document.id, Document.external_id).where(Document.corpus_id == corpus_id)
    return dict(s.execute(q).tuples().all())


def iter_texts(s: Session, corpus_id: int, chunk: int = 20_000
               ) -> Iterator[tuple[list[int], list[str]]]:
    """Every (ids, texts) of a corpus in chunks, streamed: never the whole corpus in memory."""
    q = (select(Document.id, Document.text).where(Document.corpus_id == corpus_id)
         .execution_options(yield_per=chunk))
    for rows in s.execute(q).partitions(chunk):
        yield [r[0] for r in rows], [r[1] for r in rows]


def texts_by_id(s: Session, ids: Iterable[int]) -> dict[int, str]:
    """Texts of documents by primary key, without loading whole rows (for map hovers)."""
    out: dict[int, str] = {}
    for part in chunks([int(i) for i in ids], IN_LIMIT):
        out.update(s.execute(select(Document.id, Document.text).where(
            Document.id.in_(part))).tuples().all())
    return out


def document_by_external_id(s: Session, corpus_id: int, external_id: str) -> Document | None:
    return s.scalar(select(Document).where(
        Document.corpus_id == corpus_id, Document.external_id == external_id))


def documents_missing_embedding(s: Session, corpus_id: int, model_id: int, after_id: int,
                                limit: int, max_chars: int | None = None
                                ) -> list[tuple[int, str]]:
    """Up to ``limit`` (id, text) with id > ``after_id`` and no vector for the model, by id.

    A keyset page: the caller passes the last id it got, so a whole corpus is read
    once in O(n), whatever its size, and documents added meanwhile come last.
    With ``max_chars`` the page also stops before its texts exceed that many
    characters in all (it always holds one document): the lengths are read
    first, so a page of a thousand 200,000-character texts never reaches memory.

    Example:
        >>> [len(t) for _, t in documents_missing_embedding(s, c.id, m.id, 0, 10,
        ...                                                   max_chars=5)]  # doctest: +SKIP
        [3]
    """
    missing = (Document.corpus_id == corpus_id, Document.id > after_id,
               ~exists().where(Embedding.document_id == Document.id,
                               Embedding.model_id == model_id))
    last = None
    if max_chars is not None:
        lengths = s.execute(select(Document.id, func.length(Document.text)).where(*missing)
                            .order_by(Document.id).limit(limit)).all()
        last = _last_within(lengths, max_chars)
        if last is None:
            return []
    q = select(Document.id, Document.text).where(*missing).order_by(Document.id).limit(limit)
    if last is not None:
        q = q.where(Document.id <= last)
    return [(i, t) for i, t in s.execute(q).all()]


def _last_within(lengths: Sequence[tuple[int, int | None]], max_chars: int) -> int | None:
    """The last id of the longest prefix of (id, length) within ``max_chars`` (never empty).

    Example:
        >>> _last_within([(1, 4), (2, 4), (3, 4)], 9), _last_within([(5, 99)], 9)
        (2, 5)
        >>> _last_within([], 9) is None
        True
    """
    last, used = None, 0
    for doc_id, length in lengths:
        used += int(length or 0)
        if last is not None and used > max_chars:
            break
        last = doc_id
    return last


def missing_embedding_ids(s: Session, corpus_id: int, model_id: int, after_id: int,
                          limit: int) -> list[int]:
    """Up to ``limit`` ids > ``after_id`` of the corpus' documents without a vector, by id.

    The ids-only form of ``documents_missing_embedding``, for a driver that hands
    the texts' reading to its workers (``searchapp.corpora.ray_embed``): a keyset page
    of integers, so planning ten million documents moves 80 MB, not their texts.
    """
    has_vector = exists().where(Embedding.document_id == Document.id,
                                Embedding.model_id == model_id)
    q = (select(Document.id)
         .where(Document.corpus_id == corpus_id, Document.id > after_id, ~has_vector)
         .order_by(Document.id).limit(limit))
    return list(s.scalars(q))


def texts_missing_embedding(s: Session, corpus_id: int, model_id: int, ids: Iterable[int]
                            ) -> list[tuple[int, str]]:
    """(id, text) of those of ``ids`` that still exist and still lack a vector, by id.

    A retried block of a distributed job reads what is still missing, so a block
    whose vectors were committed before its worker died is not encoded again.
    """
    has_vector = exists().where(Embedding.document_id == Document.id,
                                Embedding.model_id == model_id)
    out: list[tuple[int, str]] = []
    for part in chunks([int(i) for i in ids], IN_LIMIT):
        out += s.execute(select(Document.id, Document.text).where(
            Document.corpus_id == corpus_id, Document.id.in_(part), ~has_vector)).tuples().all()
    return sorted(out)
