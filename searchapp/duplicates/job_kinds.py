"""The duplicates' job kinds, declared once: ``duplicates`` (mine a corpus' near-duplicate
pairs) and ``calibrate`` (a threshold from labelled pairs).

Example:
    >>> DUPLICATES.submit(app.db, DuplicatesPayload("faq", 0.9, 10))   # doctest: +SKIP
"""

from __future__ import annotations

from searchapp.duplicates.job_payloads import CalibratePayload, DuplicatesPayload
from searchapp.jobs.kinds import declare
from searchapp.jobs.tasks import TaskContext


def _duplicates(ctx: TaskContext, payload: DuplicatesPayload) -> dict:
    from searchapp.duplicates.service import duplicates_task

    return duplicates_task(ctx, payload)


def _calibrate(ctx: TaskContext, payload: CalibratePayload) -> dict:
    from searchapp.duplicates.calibration import calibrate_task

    return calibrate_task(ctx, payload)


DUPLICATES = declare("duplicates", unit="documents", payload=DuplicatesPayload,
                     run=_duplicates, doing="Finding duplicates in")
CALIBRATE = declare("calibrate", unit="pairs", payload=CalibratePayload, run=_calibrate,
                    doing="Calibrating")
