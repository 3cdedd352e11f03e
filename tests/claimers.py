"""A queue worker process for the many-workers tests and the claims benchmark.

Kept apart from the test modules so a spawned process imports only the queue
and the store (no torch, no encoder): eight of them start in about a second.

Streamlit's AppTest leaves a page script installed as ``__main__``, and
spawn's "prepare" step would run it again in every new process (as
``tests/test_faults.py`` found): ``start`` starts processes with ``__main__``
as it was when this module was imported (pytest's, or a benchmark's).
"""

from __future__ import annotations

import sys
import time

from searchapp.jobs import queue
from searchapp.store.db import Database

DEADLINE = 300.0  # a loaded machine can take minutes to start eight interpreters
_MAIN = sys.modules["__main__"]


def start(processes) -> None:
    """``p.start()`` for each process, with the original ``__main__`` in place."""
    current = sys.modules["__main__"]
    sys.modules["__main__"] = _MAIN
    try:
        for p in processes:
            p.start()
    finally:
        sys.modules["__main__"] = current


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
