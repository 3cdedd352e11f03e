"""The context a running task reports through, and the worker's stop and fault points.

A task is the run function of a job kind (``searchapp.jobs.kinds``):
``run(ctx: TaskContext, payload) -> dict``, the dict being the job's result.
Tasks must be resumable: started again after a crash they carry on from what
the database holds.

Example:
    >>> TaskContext(app, lease, "documents").progress(3, 10, "embedding")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

from searchapp.context import App
from searchapp.errors import JobCancelled
from searchapp.jobs import queue
from searchapp.jobs.horizon import SEPARATOR, RateMeter

# Fault injection (tests/test_faults.py): with SEARCHAPP_FAULT_KILL_AT=N set, the process
# SIGKILLs itself at the Nth fault point it passes; unset, fault_point does nothing.
FAULT_KILL_AT = "SEARCHAPP_FAULT_KILL_AT"
_fault_points = [0]  # points passed by this process while FAULT_KILL_AT was set


def fault_point(where: str) -> None:
    """A place where a crash must be survivable; inert unless ``SEARCHAPP_FAULT_KILL_AT`` is set.

    Why: the crash tests kill a worker at chosen, reproducible points (after a
    committed batch, before a result is recorded, ...) instead of after a
    random delay. With ``SEARCHAPP_FAULT_KILL_AT=N`` the Nth point passed kills
    the process with SIGKILL, as the OOM killer or ``kill -9`` would, after one
    line on stderr naming the point.
    """
    kill_at = os.environ.get(FAULT_KILL_AT)
    if not kill_at:
        return
    _fault_points[0] += 1
    if _fault_points[0] >= int(kill_at):
        sys.stderr.write(f"fault injection: SIGKILL at point {_fault_points[0]} ({where})\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def fault_points_passed() -> int:
    """How many fault points this process has passed while injection was on (tests count them)."""
    return _fault_points[0]


# Set when the worker process is asked to stop (SIGTERM): the running task stops at its
# next progress report and its job goes back to the queue, to resume later.
STOPPING = threading.Event()


CANCEL_POLL_SECONDS = 0.5  # how often ``TaskContext.checkpoint`` reads the cancel flag


class WorkerStopping(Exception):
    """Raised inside a task when the worker shuts down; the job is queued again."""


@dataclass
class TaskContext:
    """What a running task sees: the App, its job's lease, and a progress reporter.

    Each report also feeds a ``RateMeter``: the job's message ends with the
    step's rate and time left once they can be measured (``horizon``).
    """

    app: App
    lease: queue.Lease
    unit: str = "items"
    _last_report: float = field(default=0.0, repr=False)
    _meter: RateMeter | None = field(default=None, repr=False)
    _last_cancel_check: float = field(default=0.0, repr=False)

    @property
    def job_id(self) -> int:
        return self.lease.job_id

    def progress(self, done: int, total: int, message: str | None = None,
                 force: bool = False, items: tuple[int, int] | None = None,
                 unit: str | None = None) -> None:
        """Report progress (at most ~4 times a second); raises JobCancelled on cancel.

        ``items`` (done, total) are the counts the rate is measured on when the
        bar counts something else (the clusters job's bar counts steps), and
        ``unit`` what they count where it is not the kind's unit (the clusters
        job counts documents, then k-means runs or UMAP epochs).
        Raises WorkerStopping when the worker is shutting down, and LeaseLost when
        another worker took the job over (this one must stop writing).
        """
        fault_point(f"progress {done}/{total}")
        if STOPPING.is_set():
            raise WorkerStopping()
        now = time.monotonic()
        if not force and now - self._last_report < 0.25 and done < total:
            return
        self._last_report = now
        if message is not None:
            message = self._with_horizon(message, *(items or (done, total)), now, unit)
        if queue.progress(self.app.db, self.lease, done, total, message):
            raise JobCancelled("Cancelled by the user.")

    def checkpoint(self) -> None:
        """Stop here if the worker is stopping or the job was cancelled; else return at once.

        For the inside of a long step (the encoder calls it between its batches):
        it writes nothing, checks ``STOPPING`` on every call and reads the cancel
        flag at most every ``CANCEL_POLL_SECONDS``, so it costs next to nothing
        called hundreds of times a second. Raises WorkerStopping or JobCancelled,
        as ``progress`` does.

        Example:
            >>> embed_documents(encoder, texts, checkpoint=ctx.checkpoint)  # doctest: +SKIP
        """
        if STOPPING.is_set():
            raise WorkerStopping()
        now = time.monotonic()
        if now - self._last_cancel_check < CANCEL_POLL_SECONDS:
            return
        self._last_cancel_check = now
        if queue.cancel_requested(self.app.db, self.job_id):
            raise JobCancelled("Cancelled by the user.")

    def _with_horizon(self, message: str, done: int, total: int, now: float,
                      unit: str | None = None) -> str:
        """``message · 412 documents/s · about 2 min left`` once the rate is measurable.

        Counts of another unit start a new meter: epochs never extend a rate of documents.
        """
        unit = unit or self.unit
        if self._meter is None or self._meter.unit != unit:
            self._meter = RateMeter(unit)
        horizon = self._meter.observe(done, total, now) if total > 1 else None
        return f"{message}{SEPARATOR}{horizon}" if horizon and done < total else message
