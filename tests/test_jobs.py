import time

import pytest

from searchapp.errors import JobError
from searchapp.jobs import queue
from searchapp.jobs.tasks import TASKS, TaskContext
from searchapp.jobs.worker import run_until_done, work
from searchapp.store.db import Database


def test_claim_is_exclusive_and_in_order():
    db = Database("sqlite://")
    a = queue.enqueue(db, "embed", {"corpus": "a"})
    b = queue.enqueue(db, "embed", {"corpus": "b"})
    assert queue.claim(db, "host:1").id == a
    assert queue.claim(db, "host:2").id == b
    assert queue.claim(db, "host:3") is None


def test_a_dead_workers_job_is_claimable_again(monkeypatch):
    db = Database("sqlite://")
    job = queue.enqueue(db, "embed", {})
    queue.claim(db, "some-other-host:1")
    assert queue.claim(db, "me:2") is None  # fresh heartbeat elsewhere: not ours
    monkeypatch.setattr(queue, "STALE_AFTER", queue.STALE_AFTER * 0)
    time.sleep(0.01)
    again = queue.claim(db, "me:2")
    assert again.id == job and again.worker == "me:2"


def test_cancel_queued_at_once_and_running_at_next_progress(app):
    queued = queue.enqueue(app.db, "embed", {})
    assert queue.cancel(app.db, queued).status == "cancelled"
    running = queue.enqueue(app.db, "embed", {})
    queue.claim(app.db, "w:1")
    queue.cancel(app.db, running)
    with pytest.raises(Exception, match="Cancelled"):
        TaskContext(app, running).progress(1, 10, force=True)
    with pytest.raises(JobError, match="already cancelled"):
        queue.cancel(app.db, queued)


def test_worker_records_failures_and_unknown_kinds(app, monkeypatch):
    def broken(ctx, payload):
        raise ValueError("boom")

    monkeypatch.setitem(TASKS, "broken", "tests.test_jobs:_broken")
    globals()["_broken"] = broken
    failing = queue.enqueue(app.db, "broken", {})
    unknown = queue.enqueue(app.db, "nonsense", {})
    assert work(app, stop_when_idle=True) == 2
    assert "boom" in queue.get(app.db, failing).error
    assert "known kinds" in queue.get(app.db, unknown).error


def test_run_until_done_returns_the_finished_job(app):
    job_id = queue.enqueue(app.db, "embed", {"corpus": "missing"})
    job = run_until_done(app, job_id)
    assert job.status == "failed" and "No corpus named 'missing'" in job.error


def test_a_stopping_worker_puts_its_job_back_in_the_queue(app, monkeypatch):
    from searchapp.jobs import tasks

    def slow(ctx, payload):
        tasks.STOPPING.set()  # as the SIGTERM handler does
        ctx.progress(1, 2, force=True)
        return {}

    monkeypatch.setitem(TASKS, "slow", "tests.test_jobs:_slow")
    globals()["_slow"] = slow
    job_id = queue.enqueue(app.db, "slow", {})
    try:
        assert work(app, stop_when_idle=True) == 1
    finally:
        tasks.STOPPING.clear()
    job = queue.get(app.db, job_id)
    assert job.status == "queued" and "resumes" in job.message
