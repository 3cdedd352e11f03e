"""Saved searches and their news: the queries of ``saved_searches`` and ``saved_search_hits``.

A saved search belongs to the data folder (everyone who can log in to the server sees
it), to one corpus (deleting the corpus deletes it), and keeps the documents its checks
found new (deleting a document removes it from the news: foreign keys cascade).

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "m")
    ...     row = add(s, c.id, name="cards", query="lost card", mode="hybrid", k=10,
    ...               min_score=None, conditions=[], webhook_url=None, desktop=False)
    ...     [r.name for r in listed(s, c.id)], len(row.feed_token) > 30
    (['cards'], True)
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable, Sequence

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from searchapp.errors import SavedSearchNameTakenError, SavedSearchNotFoundError
from searchapp.store.catalog import get_or_create_corpus  # noqa: F401 - used in the doctest
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.schema import Document, SavedSearch, SavedSearchHit, utcnow

FEED_TOKEN_BYTES = 32


def add(s: Session, corpus_id: int, *, name: str, query: str, mode: str, k: int,
        min_score: float | None, conditions: Sequence[str], webhook_url: str | None,
        desktop: bool) -> SavedSearch:
    """A new saved search of the corpus; its watermark and last check at the corpus' newest
    document (what exists now is not news). A name the corpus uses already is refused."""
    if s.scalar(select(SavedSearch.id).where(SavedSearch.corpus_id == corpus_id,
                                             SavedSearch.name == name)) is not None:
        raise SavedSearchNameTakenError(name)
    newest = newest_document(s, corpus_id)
    row = SavedSearch(corpus_id=corpus_id, name=name, query=query, mode=mode, k=k,
                      min_score=min_score, conditions=list(conditions), created_at=utcnow(),
                      watermark=newest, last_checked_id=newest,
                      feed_token=secrets.token_urlsafe(FEED_TOKEN_BYTES),
                      webhook_url=webhook_url, desktop=desktop, last_outcome={})
    s.add(row)
    try:
        s.flush()
    except IntegrityError as exc:  # a racing saver took the name
        raise SavedSearchNameTakenError(name) from exc
    return row


def newest_document(s: Session, corpus_id: int) -> int:
    """The highest document id of the corpus (0 when it has none)."""
    return s.scalar(select(func.max(Document.id)).where(Document.corpus_id == corpus_id)) or 0


def listed(s: Session, corpus_id: int | None = None) -> list[SavedSearch]:
    """The saved searches of a corpus (None: of every corpus), by corpus then name."""
    q = select(SavedSearch).order_by(SavedSearch.corpus_id, SavedSearch.name)
    if corpus_id is not None:
        q = q.where(SavedSearch.corpus_id == corpus_id)
    return list(s.scalars(q))


def get(s: Session, saved_id: int) -> SavedSearch:
    """The saved search ``saved_id``; SavedSearchNotFoundError when there is none."""
    row = s.get(SavedSearch, saved_id)
    if row is None:
        raise SavedSearchNotFoundError(saved_id)
    return row


def by_token(s: Session, token: str) -> SavedSearch | None:
    """The saved search whose feed token is ``token``, or None.

    Every stored token is compared in constant time (``hmac.compare_digest``), all of
    them, so neither the answer's time nor the database's index tells how much of a
    guessed token was right.
    """
    found = None
    for saved_id, stored in s.execute(select(SavedSearch.id, SavedSearch.feed_token)):
        if hmac.compare_digest(stored.encode(), token.encode()):
            found = saved_id
    return s.get(SavedSearch, found) if found is not None else None


def delete(s: Session, saved_id: int) -> None:
    """Delete the saved search and its news; SavedSearchNotFoundError when there is none."""
    s.delete(get(s, saved_id))
    s.flush()


def record_hits(s: Session, saved_id: int, hits: Iterable[tuple[int, float]]) -> list[int]:
    """Keep ``(document id, score)`` pairs as the saved search's news; the ids that were
    not kept already (a document found again is not news twice)."""
    known = set(s.scalars(select(SavedSearchHit.document_id)
                          .where(SavedSearchHit.saved_id == saved_id)))
    now, added = utcnow(), []
    for doc_id, score in hits:
        if doc_id not in known:
            s.add(SavedSearchHit(saved_id=saved_id, document_id=doc_id, score=float(score),
                                 found_at=now))
            known.add(doc_id)
            added.append(doc_id)
    s.flush()
    return added


def new_counts(s: Session, rows: Sequence[SavedSearch]) -> dict[int, int]:
    """saved id → how many of its kept hits lie above its watermark ("N new")."""
    if not rows:
        return {}
    q = (select(SavedSearchHit.saved_id, func.count())
         .join(SavedSearch, SavedSearch.id == SavedSearchHit.saved_id)
         .where(SavedSearchHit.saved_id.in_([r.id for r in rows]),
                SavedSearchHit.document_id > SavedSearch.watermark)
         .group_by(SavedSearchHit.saved_id))
    counts = dict(s.execute(q).all())
    return {r.id: counts.get(r.id, 0) for r in rows}


def recent_hits(s: Session, saved_id: int, limit: int = 50) -> list[tuple[SavedSearchHit,
                                                                          Document]]:
    """The saved search's kept hits, newest first, with their documents."""
    q = (select(SavedSearchHit, Document).join(Document,
                                                Document.id == SavedSearchHit.document_id)
         .where(SavedSearchHit.saved_id == saved_id)
         .order_by(SavedSearchHit.found_at.desc(), SavedSearchHit.document_id.desc())
         .limit(limit))
    return [(hit, doc) for hit, doc in s.execute(q).all()]
