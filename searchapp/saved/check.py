"""The check after an ingest: a corpus' saved searches run against what arrived.

After each ``embed`` or ``ingest`` job that succeeded (a hook in ``job_kinds``), one
``saved-check`` job is queued for the corpus when it has saved searches (one at a time:
a check already queued takes the new documents too). The check runs each saved search
whose corpus has documents above its last check, keeps the hits among those documents as
its news (``saved_search_hits``), moves its last check to the newest document, and hands
the news to the sender (webhook, desktop) off this thread. Nothing polls the corpus.

Example:
    >>> check_corpus(app, "notes")                                   # doctest: +SKIP
    {'saved_searches': 2, 'checked': 1, 'new_hits': 1}
"""

from __future__ import annotations

import logging

from searchapp.context import App
from searchapp.errors import CorpusNotFoundError, SearchAppError
from searchapp.jobs import kinds, queue
from searchapp.reporting import one_line
from searchapp.saved import news
from searchapp.saved.job_payloads import SavedCheckPayload
from searchapp.saved.sender import Notification, send
from searchapp.search.service import search
from searchapp.store import repo
from searchapp.store import saved_searches as rows
from searchapp.store.schema import SavedSearch, utcnow

log = logging.getLogger(__name__)


def after_documents(app: App, corpus: str) -> int | None:
    """Queue the corpus' check when documents became searchable; its job id, or None when
    the corpus has no saved searches or an embed job of it is still to come (its end
    queues the check: an ingest's documents are searched once they have vectors)."""
    with app.db.session() as s:
        found = repo.find_corpus(s, corpus)
        if found is None or not rows.listed(s, found.id):
            return None
    if queue.active_for(app.db, "embed", "corpus", corpus) is not None:
        return None
    return request_check(app, corpus)


def request_check(app: App, corpus: str) -> int:
    """Queue a ``saved-check`` job for ``corpus`` (or return the one already queued)."""
    return kinds.submit(app.db, SavedCheckPayload(corpus=corpus), once_key="corpus")


def check_corpus(app: App, corpus: str) -> dict:
    """Check each saved search of ``corpus`` against the documents above its last check."""
    with app.db.session() as s:
        found = repo.find_corpus(s, corpus)
        if found is None:
            raise CorpusNotFoundError(corpus)
        newest = rows.newest_document(s, found.id)  # before the searches: later ones wait
        due = [r.id for r in rows.listed(s, found.id) if r.last_checked_id < newest]
        total = len(rows.listed(s, found.id))
    new_hits = sum(_check_one(app, corpus, saved_id, newest) for saved_id in due)
    return {"saved_searches": total, "checked": len(due), "new_hits": new_hits}


def _check_one(app: App, corpus: str, saved_id: int, newest: int) -> int:
    """One saved search: its new hits kept and sent; how many."""
    with app.db.session() as s:
        row = s.get(SavedSearch, saved_id)
        if row is None:  # removed meanwhile
            return 0
        since, spec = row.last_checked_id, (row.query, row.k, row.min_score, row.mode,
                                            list(row.conditions or []))
    query, k, min_score, mode, where = spec
    try:
        hits = search(app, corpus, query, k=k, min_score=min_score, mode=mode, where=where)
    except SearchAppError as exc:  # its query no longer fits the corpus: said in the list
        _set(app, saved_id, newest, {"check": {"error": one_line(exc)}})
        return 0
    fresh = [h for h in hits if since < h.doc_id <= newest]
    with app.db.session() as s:
        added = set(rows.record_hits(s, saved_id, [(h.doc_id, h.score) for h in fresh]))
    fresh = [h for h in fresh if h.doc_id in added]
    _set(app, saved_id, newest, {"check": {"new_hits": len(fresh)}})
    if fresh:
        _notify(app, saved_id, corpus, fresh)
    return len(fresh)


def _set(app: App, saved_id: int, newest: int, outcome: dict) -> None:
    at = utcnow().isoformat(timespec="seconds") + "Z"
    with app.db.session() as s:
        row = s.get(SavedSearch, saved_id)
        if row is not None:
            row.last_checked_id = max(row.last_checked_id, newest)
            row.last_outcome = {**(row.last_outcome or {}),
                                **{k: {**v, "at": at} for k, v in outcome.items()}}


def _notify(app: App, saved_id: int, corpus: str, hits: list) -> None:
    with app.db.session() as s:
        row = s.get(SavedSearch, saved_id)
        if row is None:
            return
        name, url, wants_desktop = row.name, row.webhook_url, row.desktop
    note = Notification(
        saved_id,
        webhook=(url, news.webhook_body(saved_id, name, corpus, hits)) if url else None,
        desktop=news.desktop_lines(name, corpus, hits) if wants_desktop else None)
    if note.webhook or note.desktop:
        send(app.db, note)
