"""The backups' job kind, declared once: ``backup`` (a snapshot of the data folder).

Example:
    >>> BACKUP.submit(app.db, BackupPayload(name=new_snapshot_name()))   # doctest: +SKIP
"""

from __future__ import annotations

from searchapp.backups.job_payloads import BackupPayload
from searchapp.jobs.kinds import declare
from searchapp.jobs.tasks import TaskContext


def _backup(ctx: TaskContext, payload: BackupPayload) -> dict:
    from searchapp.backups.service import backup_task

    return backup_task(ctx, payload)


BACKUP = declare("backup", unit="steps", payload=BackupPayload, run=_backup, doing="Backing up")
