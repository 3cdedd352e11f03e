"""``jobs.activity``: the running jobs and the recent troubled ones, from the job rows."""

from __future__ import annotations

from datetime import timedelta

from searchapp.jobs import queue
from searchapp.jobs.activity import activity
from searchapp.store.schema import utcnow


def finished(app, kind: str, status: str, result: dict | None = None, error: str | None = None):
    job_id = queue.enqueue(app.db, kind, {"corpus": "c"})
    job = queue.claim(app.db, "w", kinds=(kind,))
    queue.finish(app.db, job.lease, status, result=result, error=error)
    return job_id


def test_running_jobs_and_troubled_ones_are_told_apart(app):
    clean = finished(app, "ingest", "succeeded", {"failed": 0, "added": 3})
    unread = finished(app, "ingest", "succeeded", {"failed": 2, "added": 1})
    broken = finished(app, "embed", "failed", error="disk full")
    waiting = queue.enqueue(app.db, "embed", {"corpus": "c"})
    now = activity(app.db)
    assert [j.id for j in now.running] == [waiting]
    assert [j.id for j in now.troubled] == [broken, unread], "newest first; the clean one is news"
    assert clean not in [j.id for j in now.troubled]
    assert not now.quiet


def test_old_trouble_is_not_news(app):
    finished(app, "embed", "failed", error="disk full")
    later = activity(app.db, now=utcnow() + timedelta(hours=25))
    assert later.troubled == [] and later.quiet


def test_the_corpora_table_keeps_refreshing_while_files_are_read(app):
    """The Upload page's table refreshes while its counts move: an ingest stores and embeds
    batch by batch, so a table drawn once stayed at 0 documents beside the ingest's bar."""
    from searchapp.ui.corpora_table import _embedding

    assert not _embedding(app, [])
    queue.enqueue(app.db, "ingest", {"corpus": "c", "paths": ["/x"], "model": "m"})
    assert _embedding(app, [])
