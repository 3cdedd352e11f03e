"""The watched folders table: rows added, listed, paused, removed; status written; leases.

The service (``searchapp.watching``) decides what a folder's status is and when
to sync it; this module only stores and finds rows. A lease is one conditional
UPDATE (free, expired, or already ours), so two workers never both hold a
folder, on SQLite and PostgreSQL alike.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     corpus = Corpus(name="notes", model_name="m")
    ...     s.add(corpus); s.flush()
    ...     row = add_folder(s, corpus.id, "/home/ann/notes", ["*.md"], [], "2049")
    ...     [(f.corpus, f.path, f.include) for f in list_folders(s)]
    [('notes', '/home/ann/notes', ['*.md'])]
    >>> take_lease(db, row.id, "worker-a", 30), take_lease(db, row.id, "worker-b", 30)
    (True, False)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from searchapp.store.db import Database
from searchapp.store.schema import Corpus, WatchedFolder, utcnow

FAILURES_KEPT = 100  # reasons stored per folder; the count is exact
RESTORED = "restored"  # the ``device`` of a folder a backup brought: not checked here yet


@dataclass(frozen=True)
class FolderRow:
    """A watched folder as callers see it: its settings and its last known status."""

    id: int
    corpus: str
    path: str
    include: list[str]
    exclude: list[str]
    paused: bool
    device: str | None
    available: bool
    reason: str | None
    files_seen: int
    files_in_step: int
    files_waiting: int
    files_failed: int
    failures: list[dict] = field(default_factory=list)
    last_change: dict = field(default_factory=dict)
    last_change_at: datetime | None = None
    last_sync_at: datetime | None = None
    job_id: int | None = None
    lease_owner: str | None = None
    lease_until: datetime | None = None


def _row(folder: WatchedFolder, corpus: str) -> FolderRow:
    return FolderRow(
        folder.id, corpus, folder.path, list(folder.include or []), list(folder.exclude or []),
        bool(folder.paused), folder.device, bool(folder.available), folder.reason,
        folder.files_seen, folder.files_in_step, folder.files_waiting, folder.files_failed,
        list(folder.failures or []), dict(folder.last_change or {}), folder.last_change_at,
        folder.last_sync_at, folder.job_id, folder.lease_owner, folder.lease_until)


def add_folder(s: Session, corpus_id: int, path: str, include: list[str], exclude: list[str],
               device: str | None) -> FolderRow:
    """Store a new watched folder (the caller checked the path and that it is not there yet)."""
    folder = WatchedFolder(corpus_id=corpus_id, path=path, include=list(include),
                           exclude=list(exclude), paused=False, device=device, available=True,
                           files_seen=0, files_in_step=0, files_waiting=0, files_failed=0,
                           failures=[], last_change={}, created_at=utcnow())
    s.add(folder)
    s.flush()
    return _row(folder, s.get(Corpus, corpus_id).name)


def list_folders(s: Session) -> list[FolderRow]:
    """Every watched folder, by corpus name then path."""
    rows = s.execute(select(WatchedFolder, Corpus.name).join(
        Corpus, Corpus.id == WatchedFolder.corpus_id).order_by(Corpus.name, WatchedFolder.path))
    return [_row(folder, name) for folder, name in rows]


def get_folder(s: Session, folder_id: int) -> FolderRow | None:
    """One folder by id, or None."""
    found = s.execute(select(WatchedFolder, Corpus.name).join(
        Corpus, Corpus.id == WatchedFolder.corpus_id).where(WatchedFolder.id == folder_id)).first()
    return _row(*found) if found else None


def set_paused(s: Session, folder_id: int, paused: bool) -> bool:
    """Pause or resume a folder; False when there is no such folder."""
    done = s.execute(update(WatchedFolder).where(WatchedFolder.id == folder_id)
                     .values(paused=paused))
    return done.rowcount == 1


def remove_folder(s: Session, folder_id: int) -> bool:
    """Forget a folder (its documents stay in the corpus); False when there is none."""
    return s.execute(delete(WatchedFolder).where(WatchedFolder.id == folder_id)).rowcount == 1


def write_status(s: Session, folder_id: int, **values) -> None:
    """Write status columns of one folder (``failures`` capped at ``FAILURES_KEPT``)."""
    if "failures" in values:
        values["failures"] = list(values["failures"])[:FAILURES_KEPT]
    s.execute(update(WatchedFolder).where(WatchedFolder.id == folder_id).values(**values))


def take_lease(db: Database, folder_id: int, owner: str, seconds: float) -> bool:
    """Take or renew the lease on a folder for ``seconds``: True when ``owner`` holds it now.

    One UPDATE that succeeds only when the lease is free, expired, or ``owner``'s already.
    """
    now = utcnow()
    with db.session() as s:
        done = s.execute(update(WatchedFolder).where(
            WatchedFolder.id == folder_id,
            or_(WatchedFolder.lease_owner.is_(None), WatchedFolder.lease_owner == owner,
                WatchedFolder.lease_until < now),
        ).values(lease_owner=owner, lease_until=now + timedelta(seconds=seconds)))
        return done.rowcount == 1


def release_lease(db: Database, folder_id: int, owner: str) -> None:
    """Give a folder's lease back (another worker may take it at once)."""
    with db.session() as s:
        s.execute(update(WatchedFolder).where(
            WatchedFolder.id == folder_id, WatchedFolder.lease_owner == owner,
        ).values(lease_owner=None, lease_until=None))
