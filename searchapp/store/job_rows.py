"""Reads of the jobs table that layers below the queue need (no queue semantics here).

The queue (``searchapp.jobs.queue``) owns the jobs table: it enqueues, claims and
reports progress. A layer below it (the corpus handle wording why a corpus
cannot be searched yet) may still need to know whether a job is under way;
this is that one read, so it does not import the jobs package.

Example:
    >>> from searchapp.store.db import Database
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     active_job(s, "embed", "corpus", "faq") is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from searchapp.store.schema import Job

ACTIVE = ("queued", "running")  # a job in either state has not ended


@dataclass(frozen=True)
class JobState:
    """Where a job stands: enough to say it in a sentence."""

    id: int
    status: str
    done: int
    total: int


def active_job(s: Session, kind: str, key: str, value,
               statuses: tuple[str, ...] = ACTIVE) -> Job | None:
    """The oldest job of ``kind`` in ``statuses`` (queued or running) whose payload[key] ==
    value, if any."""
    for job in s.scalars(select(Job).where(Job.kind == kind, Job.status.in_(statuses))
                         .order_by(Job.id)):
        if (job.payload or {}).get(key) == value:
            return job
    return None


def active_job_state(s: Session, kind: str, key: str, value) -> JobState | None:
    """``active_job`` detached from the session, as a JobState."""
    job = active_job(s, kind, key, value)
    return None if job is None else JobState(job.id, job.status, job.progress_done,
                                             job.progress_total)
