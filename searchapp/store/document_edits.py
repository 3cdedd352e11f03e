"""Documents changed in place: metadata replaced, documents renamed (a moved file),
deleted by external id, or one metadata value given to a set of documents (a saved filter).

Beside ``documents.add_documents`` (new and changed texts) and on the same
machinery: each change takes the corpus' next generation first (which locks
the corpus row), a deleted document leaves a tombstone so every index drops
it at its next query, the counts are kept in the same transaction, and the
full-text index follows by the database's own triggers (FTS5) or generated
column (PostgreSQL).

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "m")
    ...     _ = add_documents(s, c, [NewDocument("q1", "Reset?", {"lang": "en"})])
    ...     replace_meta(s, c, [NewDocument("q1", "Reset?", {"lang": "de"})])
    ...     delete_by_external_id(s, c, ["q1", "q9"])
    1
    ([1], ['q9'])
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.orm import Session

from searchapp.store.catalog import get_or_create_corpus  # noqa: F401 - used in the doctest
from searchapp.store.changes import LazyGeneration
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.documents import (  # noqa: F401 - NewDocument, add_documents: doctest
    IN_LIMIT,
    NewDocument,
    add_documents,
    chunks,
    content_hash,
    remove_documents,
)
from searchapp.store.meta import value_sql
from searchapp.store.schema import Corpus, Document


def _stored(s: Session, corpus_id: int, external_ids: Sequence[str]
            ) -> dict[str, tuple[int, str, dict]]:
    """{external_id: (id, content_hash, meta)} for those stored."""
    out: dict[str, tuple[int, str, dict]] = {}
    for part in chunks(list(external_ids), IN_LIMIT):
        rows = s.execute(select(Document.external_id, Document.id, Document.content_hash,
                                Document.meta).where(Document.corpus_id == corpus_id,
                                                     Document.external_id.in_(part))).all()
        out.update({e: (i, h, m or {}) for e, i, h, m in rows})
    return out


def replace_meta(s: Session, corpus: Corpus, docs: Sequence[NewDocument]) -> int:
    """Give stored documents whose text is unchanged the metadata in ``docs``; returns how
    many changed. A changed text is ``add_documents``' work (a new row, embedded again);
    those and unknown ids are left alone here. One generation for the batch, only if
    something changed; new metadata keys join the corpus' ``meta_columns``."""
    stored = _stored(s, corpus.id, [d.external_id for d in docs])
    changes = []
    for doc in docs:
        old = stored.get(doc.external_id)
        if old is not None and old[1] == content_hash(doc.text) and old[2] != doc.meta:
            changes.append({"doc_id": old[0], "new_meta": doc.meta})
    if not changes:
        return 0
    LazyGeneration(s, corpus.id).value  # noqa: B018 - first: it locks the corpus row
    s.connection().execute(update(Document.__table__).where(
        Document.__table__.c.id == bindparam("doc_id")).values(meta=bindparam("new_meta")),
        changes)
    known = list(corpus.meta_columns or [])
    new_keys = sorted({str(k) for c in changes for k in c["new_meta"]} - set(known))
    if new_keys:
        s.execute(update(Corpus).where(Corpus.id == corpus.id).values(
            meta_columns=known + new_keys))
    s.expire(corpus, ["generation", "updated_at", "meta_columns"])
    return len(changes)


def rename_documents(s: Session, corpus: Corpus, renames: Sequence[tuple[str, str, dict]]
                     ) -> int:
    """Give stored documents a new external id and metadata, keeping their row: a file moved
    or renamed (the same bytes under a new path) keeps its vectors, passages, full-text
    entry and place in stored clusters, instead of being read and embedded again.

    ``renames``: (old external id, new external id, new metadata). One whose old id is not
    stored or whose new id is taken is left alone. Returns how many were renamed. One
    generation for the batch (caches keyed by it see the new ids); no tombstone, so
    stored clusters and duplicates stay current.

    Example:
        >>> with Database("sqlite://").session() as s:
        ...     c = get_or_create_corpus(s, "docs", "m")
        ...     _ = add_documents(s, c, [NewDocument("a/x.md", "Hi", {"path": "a/x.md"})])
        ...     rename_documents(s, c, [("a/x.md", "b/x.md", {"path": "b/x.md"})])
        1
    """
    stored = _stored(s, corpus.id, [old for old, _, _ in renames])
    taken = _stored(s, corpus.id, [new for _, new, _ in renames])
    changes = [{"doc_id": stored[old][0], "new_id": new, "new_meta": meta}
               for old, new, meta in renames if old in stored and new not in taken]
    if not changes:
        return 0
    LazyGeneration(s, corpus.id).value  # noqa: B018 - first: it locks the corpus row
    table = Document.__table__
    s.connection().execute(update(table).where(table.c.id == bindparam("doc_id")).values(
        external_id=bindparam("new_id"), meta=bindparam("new_meta")), changes)
    s.expire(corpus, ["generation", "updated_at"])
    return len(changes)


def delete_by_external_id(s: Session, corpus: Corpus, external_ids: Sequence[str]
                          ) -> tuple[list[int], list[str]]:
    """Delete these documents of ``corpus`` with their vectors, leaving tombstones.

    Returns (the deleted documents' primary keys, the ids that were not stored).
    One generation for the batch, none when nothing was stored.
    """
    wanted = list(dict.fromkeys(external_ids))
    if not _stored(s, corpus.id, wanted):  # nothing to delete: no generation, no lock
        return [], wanted
    generation = LazyGeneration(s, corpus.id).value  # it locks the corpus row
    # read again under that lock: a concurrent delete of the same ids has committed by now,
    # so each row is deleted (and counted) by exactly one caller
    stored = _stored(s, corpus.id, wanted)
    missing = [e for e in wanted if e not in stored]
    ids = [stored[e][0] for e in wanted if e in stored]
    removed = remove_documents(s, corpus.id, ids, generation)
    s.execute(update(Corpus).where(Corpus.id == corpus.id).values(
        document_count=Corpus.document_count - removed))
    s.expire(corpus, ["document_count", "generation", "updated_at"])
    return ids, missing


def set_meta_value(s: Session, corpus: Corpus, column: str, value: str, doc_ids: Sequence[int]
                   ) -> tuple[int, int]:
    """Make ``doc_ids`` (row ids of ``corpus``) exactly the documents whose metadata
    ``column`` is ``value``: they get it, and the corpus' other documents holding that value
    lose the key. Other keys are untouched. Returns (given, taken away); ids not stored (a
    document deleted meanwhile) are skipped. One generation, only if something changed;
    a new column joins the corpus' ``meta_columns``.

    This is a saved filter (``column=value`` in a search) over a set chosen elsewhere,
    such as a cluster; saving it again moves the set instead of adding to it.

    Example:
        >>> with Database("sqlite://").session() as s:
        ...     c = get_or_create_corpus(s, "faq", "m")
        ...     _ = add_documents(s, c, [NewDocument(f"q{i}", f"Text {i}") for i in range(3)])
        ...     set_meta_value(s, c, "topic", "Cards", [1, 2]), \\
        ...         set_meta_value(s, c, "topic", "Cards", [2, 3])
        ((2, 0), (1, 1))
    """
    wanted = set(int(i) for i in doc_ids)
    holders = _holding(s, corpus.id, column, value)
    changes = [{"doc_id": i, "new_meta": {k: v for k, v in meta.items() if k != column}}
               for i, meta in holders.items() if i not in wanted]
    taken = len(changes)
    for part in chunks(sorted(wanted - set(holders)), IN_LIMIT):
        rows = s.execute(select(Document.id, Document.meta).where(
            Document.corpus_id == corpus.id, Document.id.in_(part))).all()
        changes += [{"doc_id": i, "new_meta": {**(m or {}), column: value}} for i, m in rows]
    if not changes:
        return 0, 0
    LazyGeneration(s, corpus.id).value  # noqa: B018 - first: it locks the corpus row
    s.connection().execute(update(Document.__table__).where(
        Document.__table__.c.id == bindparam("doc_id")).values(meta=bindparam("new_meta")),
        changes)
    known = list(corpus.meta_columns or [])
    if column not in known and len(changes) > taken:
        s.execute(update(Corpus).where(Corpus.id == corpus.id).values(
            meta_columns=[*known, column]))
    s.expire(corpus, ["generation", "updated_at", "meta_columns"])
    return len(changes) - taken, taken


def _documents_where(s: Session, corpus_id: int, column: str, value: str | None
                     ) -> tuple[str, dict]:
    """``FROM documents d WHERE`` the corpus' documents whose metadata ``column`` is
    ``value`` (None: that have the column at all), with its parameters."""
    sql, params = value_sql(s.get_bind().dialect.name, column, "k0")
    test = "IS NOT NULL" if value is None else "= :v"
    return (f"FROM documents d WHERE d.corpus_id = :c AND {sql} {test}",
            {**params, "c": corpus_id, **({} if value is None else {"v": value})})


def _holding(s: Session, corpus_id: int, column: str, value: str) -> dict[int, dict]:
    """{row id: metadata} of the corpus' documents whose ``column`` is ``value``."""
    where, params = _documents_where(s, corpus_id, column, value)
    rows = s.execute(text(f"SELECT d.id, d.meta {where}"), params).all()
    return {int(i): (json.loads(m) if isinstance(m, str) else dict(m or {})) for i, m in rows}


def count_meta_value(s: Session, corpus_id: int, column: str, value: str) -> int:
    """How many of the corpus' documents have metadata ``column`` equal to ``value``."""
    where, params = _documents_where(s, corpus_id, column, value)
    return int(s.execute(text(f"SELECT count(*) {where}"), params).scalar() or 0)


def drop_unused_column(s: Session, corpus: Corpus, column: str) -> bool:
    """Take ``column`` off the corpus' ``meta_columns`` when no document has it any more (a
    saved filter removed): the filter pickers stop offering an empty column, and a later
    filter may use the name again. Whether it was dropped."""
    known = list(corpus.meta_columns or [])
    if column not in known:
        return False
    where, params = _documents_where(s, corpus.id, column, None)
    held = s.execute(text(f"SELECT 1 {where} LIMIT 1"), params).first()
    if held is not None:
        return False
    s.execute(update(Corpus).where(Corpus.id == corpus.id).values(
        meta_columns=[k for k in known if k != column]))
    s.expire(corpus, ["meta_columns"])
    return True
