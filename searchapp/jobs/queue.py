"""The jobs table as a queue: enqueue, atomic claim, progress, cancel, finish.

Status moves queued → running → succeeded | failed | cancelled. A claim is a
compare-and-set (``UPDATE ... WHERE id = ? AND status = ?`` must touch one row),
so two workers never run the same job, on SQLite or any other database. On
PostgreSQL, where workers on many machines share one queue, the queued job is
picked with ``SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1``: each worker locks a
different row and none waits for or retries against another, and the claim
reads one row, not the whole queue (the compare-and-set stays as the fence).

A running job whose worker died (its heartbeat is older than ``STALE_AFTER``, or
its worker was a process on this host that no longer exists) is claimable
again: the task resumes from what the database already holds.

Fencing: a claim hands out a ``Lease`` (job, worker, attempt number), and every
later write about the running job (progress, heartbeat, finish, requeue) is an
``UPDATE ... WHERE`` that lease still holds. A worker presumed dead that comes
back finds its writes refused (``LeaseLost``) instead of overwriting the
progress or result of the worker that took the job over.

Example:
    >>> db = Database("sqlite://")
    >>> job_id = enqueue(db, "embed", {"corpus": "faq"})
    >>> claim(db, "w1").id == job_id
    True
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, select, text, update

from searchapp.errors import JobError, JobNotFoundError
from searchapp.jobs.processes import is_zombie
from searchapp.reporting import one_line
from searchapp.store import job_rows
from searchapp.store.db import Database
from searchapp.store.failures import MAX_INTEGER
from searchapp.store.schema import Job, utcnow

# Long enough for a step that holds the GIL (HDBSCAN, UMAP) to miss heartbeats; a dead
# worker on this host is noticed at once by its pid instead.
STALE_AFTER = timedelta(minutes=10)
ACTIVE = job_rows.ACTIVE  # ("queued", "running")
FINISHED = ("succeeded", "failed", "cancelled")


class LeaseLost(JobError):
    """The job was taken over by another worker (or finished meanwhile): stop, write nothing."""

    def __init__(self, job_id: int):
        super().__init__(f"Job {job_id} is no longer this worker's: another worker took it over.")
        self.job_id = job_id


@dataclass(frozen=True)
class Lease:
    """Who holds a running job: the fencing token of every write about it."""

    job_id: int
    worker: str
    attempt: int


@dataclass(frozen=True)
class JobView:
    """A detached snapshot of a job row, safe to pass between threads and to the UI."""

    id: int
    kind: str
    status: str
    payload: dict
    result: dict | None
    progress_done: int
    progress_total: int
    message: str | None
    error: str | None
    cancel_requested: bool
    worker: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int = 0

    @property
    def lease(self) -> Lease:
        """The lease of the worker that claimed this view of a running job."""
        return Lease(self.id, self.worker or "", self.attempts)

    @property
    def fraction(self) -> float:
        if self.status == "succeeded":
            return 1.0
        return self.progress_done / self.progress_total if self.progress_total else 0.0

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def _view(job: Job) -> JobView:
    return JobView(job.id, job.kind, job.status, dict(job.payload or {}), job.result,
                   job.progress_done, job.progress_total, job.message, job.error,
                   bool(job.cancel_requested), job.worker, job.created_at, job.started_at,
                   job.finished_at, job.attempts or 0)


def worker_name() -> str:
    """``host:pid`` of this process: lets a restarted worker spot its dead predecessors."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _worker_dead(worker: str | None) -> bool:
    host, _, pid = (worker or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return is_zombie(int(pid))


# Set once this process has queued a job (after its commit): a worker loop in the same
# process (the watched folders' keeper queues syncs beside it) wakes at once instead of at
# its next poll. Jobs queued by other processes are found by the poll.
QUEUED = threading.Event()


def enqueue(db: Database, kind: str, payload: dict) -> int:
    """Add a queued job and return its id."""
    with db.session() as s:
        job = Job(kind=kind, payload=payload, status="queued")
        s.add(job)
        s.flush()
        job_id = job.id
    QUEUED.set()
    return job_id


def enqueue_once(db: Database, kind: str, payload: dict, key: str) -> int:
    """Add a queued job unless one of ``kind`` with the same ``payload[key]`` is queued
    already; the id of the one queued. Atomic between processes: the new row and the check
    are one transaction (SQLite: the insert takes the write lock first; PostgreSQL: an
    advisory lock per kind and key), so two callers at one moment queue one job.

    Example:
        >>> db = Database("sqlite://")
        >>> first = enqueue_once(db, "embed", {"corpus": "faq"}, "corpus")
        >>> enqueue_once(db, "embed", {"corpus": "faq"}, "corpus") == first
        True
    """
    with db.session() as s:
        if db.engine.dialect.name == "postgresql":
            s.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"),
                      {"k": f"{kind}:{key}={payload.get(key)!r}"})
        job = Job(kind=kind, payload=payload, status="queued")
        s.add(job)
        s.flush()
        first = job_rows.active_job(s, kind, key, payload.get(key), statuses=("queued",))
        if first is not None and first.id != job.id:
            s.delete(job)
            return first.id
        job_id = job.id
    QUEUED.set()
    return job_id


def _no_job(job_id: int) -> JobError:
    return JobNotFoundError(f"No job with id {job_id}. `searchapp jobs` lists the jobs.")


def get(db: Database, job_id: int) -> JobView:
    if not 1 <= job_id <= MAX_INTEGER:  # no such row can exist; the driver would overflow
        raise _no_job(job_id)
    with db.session() as s:
        job = s.get(Job, job_id)
        if job is None:
            raise _no_job(job_id)
        return _view(job)


def recent(db: Database, limit: int = 50) -> list[JobView]:
    """Newest first."""
    with db.session() as s:
        return [_view(j) for j in s.scalars(select(Job).order_by(Job.id.desc()).limit(limit))]


def active(db: Database, kind: str) -> list[JobView]:
    """Every queued or running job of ``kind``, oldest first."""
    with db.session() as s:
        return [_view(j) for j in s.scalars(select(Job).where(
            Job.kind == kind, Job.status.in_(job_rows.ACTIVE)).order_by(Job.id))]


def all_active(db: Database, limit: int = 20) -> list[JobView]:
    """Queued or running jobs of every kind, oldest first (at most ``limit``)."""
    with db.session() as s:
        return [_view(j) for j in s.scalars(select(Job).where(Job.status.in_(job_rows.ACTIVE))
                                             .order_by(Job.id).limit(limit))]


def ended_since(db: Database, since: datetime, limit: int = 100) -> list[JobView]:
    """Jobs that failed or succeeded at ``since`` or later, newest first."""
    with db.session() as s:
        return [_view(j) for j in s.scalars(
            select(Job).where(Job.status.in_(("failed", "succeeded")), Job.finished_at >= since)
            .order_by(Job.id.desc()).limit(limit))]


def active_for(db: Database, kind: str, key: str, value) -> JobView | None:
    """A queued or running job of ``kind`` whose payload[key] == value, if any."""
    with db.session() as s:
        job = job_rows.active_job(s, kind, key, value)
        return None if job is None else _view(job)


def last_succeeded(db: Database, kind: str, key: str, value, scan: int = 200
                   ) -> JobView | None:
    """The newest succeeded job of ``kind`` whose payload[key] == value, among the newest
    ``scan`` succeeded jobs of that kind (a notice about the last one, not an audit)."""
    with db.session() as s:
        for job in s.scalars(select(Job).where(Job.kind == kind, Job.status == "succeeded")
                             .order_by(Job.id.desc()).limit(scan)):
            if (job.payload or {}).get(key) == value:
                return _view(job)
    return None


def claim(db: Database, worker: str, kinds: tuple[str, ...] | None = None) -> JobView | None:
    """Take the oldest claimable job for ``worker``; None when there is none.

    A running job whose worker is gone is taken over before queued jobs are
    started. SQLite: compare-and-set over the candidates in id order;
    PostgreSQL: ``FOR UPDATE SKIP LOCKED`` (see ``claim_skip_locked``).
    """
    if db.engine.dialect.name == "postgresql":
        return claim_skip_locked(db, worker, kinds)
    return claim_compare_and_set(db, worker, kinds)


def _candidates(db: Database, statuses: tuple[str, ...], kinds: tuple[str, ...] | None
                ) -> list[Job]:
    with db.session() as s:
        q = select(Job).where(or_(*(Job.status == st for st in statuses)))
        if kinds:
            q = q.where(Job.kind.in_(kinds))
        return list(s.scalars(q.order_by(Job.id)).all())


def claim_skip_locked(db: Database, worker: str, kinds: tuple[str, ...] | None = None
                      ) -> JobView | None:
    """PostgreSQL's claim: a dead worker's job first, else the oldest queued one.

    The queued row is chosen and updated in one transaction under ``FOR UPDATE
    SKIP LOCKED``: rows other workers are claiming right now are skipped, not
    waited for, so N workers claim N different jobs in one round trip each.
    Running jobs (one per live worker, a handful) are checked for a dead owner
    through the compare-and-set path.
    """
    taken = _take_over(db, worker, _candidates(db, ("running",), kinds))
    if taken is not None:
        return taken
    with db.session() as s:
        q = select(Job).where(Job.status == "queued", Job.cancel_requested.is_not(True))
        if kinds:
            q = q.where(Job.kind.in_(kinds))
        job = s.scalars(q.order_by(Job.id).limit(1).with_for_update(skip_locked=True)).first()
        if job is None:
            return None
        now = utcnow()
        job.status, job.worker, job.heartbeat_at = "running", worker, now
        job.started_at = job.started_at or now
        job.attempts = (job.attempts or 0) + 1
        s.flush()
        return _view(job)


def claim_compare_and_set(db: Database, worker: str, kinds: tuple[str, ...] | None = None
                          ) -> JobView | None:
    """The portable claim: read the candidates, then ``UPDATE ... WHERE`` unchanged."""
    return _take_over(db, worker, _candidates(db, ("queued", "running"), kinds))


def _take_over(db: Database, worker: str, candidates: list[Job]) -> JobView | None:
    """The first of ``candidates`` that is queued, or running for a dead worker, claimed
    by compare-and-set (the update must find the row as it was read)."""
    stale_before = utcnow() - STALE_AFTER
    for job in candidates:
        if job.status == "running":
            beat = job.heartbeat_at or job.started_at or job.created_at
            if not (beat < stale_before or _worker_dead(job.worker)):
                continue
        if job.status == "queued" and job.cancel_requested:
            continue
        with db.session() as s:
            now = utcnow()
            taken = s.execute(
                update(Job)
                .where(Job.id == job.id, Job.status == job.status,
                       Job.attempts == job.attempts)  # attempts: the compare-and-set version
                .values(status="running", worker=worker, heartbeat_at=now,
                        started_at=job.started_at or now, attempts=Job.attempts + 1)
            ).rowcount
        if taken == 1:
            return get(db, job.id)
    return None


def _held(lease: Lease):
    """The WHERE clause that a write about a running job needs: the lease still holds."""
    return (Job.id == lease.job_id, Job.status == "running", Job.worker == lease.worker,
            Job.attempts == lease.attempt)


def progress(db: Database, lease: Lease, done: int, total: int, message: str | None = None
             ) -> bool:
    """Record progress and a heartbeat; returns True when the user asked to cancel.

    Raises LeaseLost when the job is no longer this lease's.
    """
    with db.session() as s:
        values = {"progress_done": done, "progress_total": total, "heartbeat_at": utcnow()}
        if message is not None:
            values["message"] = message
        if s.execute(update(Job).where(*_held(lease)).values(**values)).rowcount != 1:
            raise LeaseLost(lease.job_id)
        return bool(s.scalar(select(Job.cancel_requested).where(Job.id == lease.job_id)))


def cancel_requested(db: Database, job_id: int) -> bool:
    """Whether the user asked to cancel job ``job_id``: one read, no write (cheap to poll).

    Example:
        >>> cancel_requested(db, enqueue(db, "embed", {}))  # doctest: +SKIP
        False
    """
    with db.session() as s:
        return bool(s.scalar(select(Job.cancel_requested).where(Job.id == job_id)))


def heartbeat(db: Database, lease: Lease) -> bool:
    """Refresh the heartbeat; False when the lease is lost."""
    with db.session() as s:
        return s.execute(update(Job).where(*_held(lease)).values(
            heartbeat_at=utcnow())).rowcount == 1


def finish(db: Database, lease: Lease, status: str, *, result: dict | None = None,
           error: str | None = None, message: str | None = None) -> bool:
    """Mark a job succeeded, failed or cancelled; False (nothing written) if the lease is lost."""
    if status not in FINISHED:
        raise JobError(f"Unknown final status {status!r}; use one of: {', '.join(FINISHED)}.")
    with db.session() as s:
        values = {"status": status, "finished_at": utcnow(), "result": result,
                  "error": None if error is None else one_line(error)}  # never a page of data
        if message is not None:
            values["message"] = one_line(message)
        return s.execute(update(Job).where(*_held(lease)).values(**values)).rowcount == 1


def requeue(db: Database, lease: Lease, message: str) -> bool:
    """Put a running job back in the queue (its worker is stopping); it resumes later."""
    with db.session() as s:
        return s.execute(update(Job).where(*_held(lease)).values(
            status="queued", worker=None, message=message)).rowcount == 1


def cancel(db: Database, job_id: int) -> JobView:
    """Cancel a queued job at once; ask a running one to stop at its next progress report."""
    if not 1 <= job_id <= MAX_INTEGER:
        raise _no_job(job_id)
    with db.session() as s:
        job = s.get(Job, job_id)
        if job is None:
            raise _no_job(job_id)
        if job.status in FINISHED:
            raise JobError(f"Job {job_id} has already {job.status}; nothing to cancel.")
        job.cancel_requested = True
        if job.status == "queued":
            job.status, job.finished_at, job.message = "cancelled", utcnow(), "Cancelled."
    return get(db, job_id)


def has_live_worker(db: Database) -> bool:
    """True when some job is running with a fresh heartbeat (used to avoid double workers)."""
    with db.session() as s:
        fresh = utcnow() - STALE_AFTER
        return bool(s.scalar(select(Job.id).where(
            Job.status == "running", Job.heartbeat_at >= fresh).limit(1)))
