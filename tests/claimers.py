"""A queue worker process for the many-workers tests and the claims benchmark.

Kept apart from the test modules so a spawned process imports only the queue
and the store (no torch, no encoder): eight of them start in about a second.
"""

from __future__ import annotations

import time

from searchapp.jobs import queue
from searchapp.store.db import Database

DEADLINE = 60.0


def claim_until_empty(url: str, name: str, start, out, claim=None) -> None:
    """Claim and finish jobs until none is left; put (name, claimed ids, seconds) on ``out``.

    ``start`` is a multiprocessing Barrier: every worker begins at once.
    ``claim`` is the claim function to use (default ``queue.claim``).
    """
    claim = claim or queue.claim
    db = Database(url)
    start.wait(DEADLINE)
    began, got = time.perf_counter(), []
    while (job := claim(db, name)) is not None:
        queue.finish(db, job.lease, "succeeded", result={"by": name})
        got.append(job.id)
    out.put((name, got, time.perf_counter() - began))
    db.dispose()
