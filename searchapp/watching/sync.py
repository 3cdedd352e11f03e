"""One sync of a watched folder: the ``ingest`` job queued with the folder's rules, and its
report written back as the folder's status.

There is no second ingest path: a sync is ``corpora.files_job``'s incremental
ingest with ``sync`` on (unchanged files skipped by hash, changed ones re-read,
renamed or moved ones keep their document, vectors and judgements, vanished ones
removed), the folder's include/exclude globs, a settle time (a file still being
written waits), the folder's recorded identity (its ``st_dev`` and ``st_ino``: a share
unmounted mid-sync removes nothing, another folder put in its place is not read) and
the roots it was added under (``corpora.folder_check``: checked by the job before and
after its walk).

Example:
    >>> job_id = queue_sync(app, folder, settle=2.0)        # doctest: +SKIP
    >>> record(app, folder.id, queue.get(app.db, job_id))  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from searchapp.context import App
from searchapp.errors import SearchAppError
from searchapp.intake.way_in import ingest
from searchapp.jobs import queue
from searchapp.reporting import one_line
from searchapp.store import watched_folders as rows
from searchapp.store.schema import utcnow
from searchapp.watching.folders import allowed_roots


def queue_sync(app: App, folder: rows.FolderRow, settle: float, waiting: int = 0) -> int | None:
    """Queue the folder's ingest job and note it on the folder; its id (None: refused, and the
    reason is the folder's status)."""
    options = {"watch": folder.id, "include": folder.include, "exclude": folder.exclude,
               "settle": settle, "device": folder.device,
               "roots": [str(root) for root in allowed_roots()] or None}
    try:
        job_id = ingest(app, folder.corpus, [Path(folder.path)], sync=True,
                        options=options).job_id
    except SearchAppError as exc:
        with app.db.session() as s:
            rows.write_status(s, folder.id, reason=f"not synced: {one_line(exc)}")
        return None
    with app.db.session() as s:
        rows.write_status(s, folder.id, job_id=job_id,
                          files_waiting=max(waiting, folder.files_waiting))
    return job_id


def record(app: App, folder_id: int, job: queue.JobView) -> dict:
    """Write a finished sync job's outcome as the folder's status; returns the report (empty
    when the job did not succeed)."""
    now = utcnow()
    if job.status != "succeeded":
        why = job.error or job.message or job.status
        with app.db.session() as s:
            folder = rows.get_folder(s, folder_id)
            values = dict(job_id=None, last_sync_at=now)
            if folder is None or folder.available:
                values["reason"] = f"the last sync {job.status}: {why}"
            # An unavailable folder keeps the reason it was marked with ("not there", ...):
            # a sync that failed because the folder went away says less than that.
            rows.write_status(s, folder_id, **values)
        return {}
    report = job.result or {}
    failures = [{"path": p["path"], "reason": p["reason"]} for p in report.get("problems", [])
                if p.get("kind") in ("failed", "unreadable")]
    changes = {k: report.get(k, 0) for k in ("added", "changed", "moved", "removed")}
    values = dict(
        job_id=None, last_sync_at=now,
        files_seen=sum(report.get(k, 0) for k in ("added", "changed", "unchanged", "moved",
                                                  "failed", "waiting")),
        files_in_step=sum(report.get(k, 0) for k in ("added", "changed", "unchanged", "moved")),
        files_waiting=report.get("waiting", 0), files_failed=report.get("failed", 0),
        failures=failures)
    if any(changes.values()):
        values.update(last_change={**changes, "job": job.id}, last_change_at=job.finished_at or now)
    with app.db.session() as s:
        folder = rows.get_folder(s, folder_id)
        if folder is None or folder.available:
            values["reason"] = None  # a sync that went through clears the last failure
        # A folder marked unavailable while this sync ran keeps why ("not there", ...).
        rows.write_status(s, folder_id, **values)
    return report
