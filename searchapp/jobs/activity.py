"""What the background work is doing, in one read: the jobs queued or running, and the jobs
that lately failed or left files unread. Every page's sidebar shows it (``ui/jobs_indicator``)
from the same job rows the pages' own bars read, so a bar and the sidebar never disagree,
and a reload loses nothing: it all comes from the database.

Example:
    >>> now = activity(app.db)                                       # doctest: +SKIP
    >>> [job.kind for job in now.running], len(now.troubled)          # doctest: +SKIP
    (['ingest', 'embed'], 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from searchapp.jobs import queue
from searchapp.store.db import Database
from searchapp.store.schema import utcnow

RECENT_HOURS = 24  # how far back a failure is still news
MOST = 20  # rows read of each kind of news


@dataclass(frozen=True)
class Activity:
    """``running``: queued or running jobs, oldest first; ``troubled``: jobs finished in the
    last ``RECENT_HOURS`` that failed or left files unread, newest first."""

    running: list[queue.JobView]
    troubled: list[queue.JobView]

    @property
    def quiet(self) -> bool:
        return not self.running and not self.troubled


def unread_files(job: queue.JobView) -> int:
    """How many files a finished job could not read (its report's ``failed``), else 0.

    Example:
        >>> job = queue.JobView(3, "ingest", "succeeded", {}, {"failed": 2}, 9, 9, None, None,
        ...                     False, None, None, None, None)
        >>> unread_files(job)
        2
    """
    result = job.result if isinstance(job.result, dict) else {}
    failed = result.get("failed", 0)
    return failed if isinstance(failed, int) and not isinstance(failed, bool) else 0


def activity(db: Database, hours: float = RECENT_HOURS, now: datetime | None = None) -> Activity:
    """The running jobs and the recent troubled ones (see ``Activity``)."""
    since = (now or utcnow()) - timedelta(hours=hours)
    troubled = [j for j in queue.ended_since(db, since, MOST * 5)
                if j.status == "failed" or unread_files(j)]
    return Activity(queue.all_active(db, MOST), troubled[:MOST])
