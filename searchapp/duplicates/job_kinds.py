"""The duplicates' job kinds, declared once: ``duplicates`` (mine a corpus' near-duplicate
pairs) and ``calibrate`` (a threshold from labelled pairs).

Example:
    >>> DUPLICATES.submit(app.db, DuplicatesPayload("faq", 0.9, 10))   # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp.duplicates.params import DEFAULT_K
from searchapp.jobs.kinds import OPTIONAL, declare
from searchapp.jobs.tasks import TaskContext


@dataclass
class DuplicatesPayload:
    """Mine ``corpus`` down to ``threshold`` (None: the model's) with ``k`` neighbours."""

    corpus: str
    threshold: float | None = None
    k: int = DEFAULT_K


@dataclass
class CalibratePayload:
    """Score the labelled pairs kept at ``path`` (known as ``filename``) with ``model``;
    ``save``: keep the threshold found as the model's."""

    model: str
    path: str
    filename: str | None = None
    save: bool = field(default=False, metadata=OPTIONAL)


def _duplicates(ctx: TaskContext, payload: DuplicatesPayload) -> dict:
    from searchapp.duplicates.service import duplicates_task

    return duplicates_task(ctx, payload)


def _calibrate(ctx: TaskContext, payload: CalibratePayload) -> dict:
    from searchapp.duplicates.calibration import calibrate_task

    return calibrate_task(ctx, payload)


DUPLICATES = declare("duplicates", unit="documents", payload=DuplicatesPayload,
                     run=_duplicates)
CALIBRATE = declare("calibrate", unit="pairs", payload=CalibratePayload, run=_calibrate)
