import re
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from datetime import timedelta

import pytest

from searchapp.errors import JobError
from searchapp.jobs import kinds, queue
from searchapp.jobs.tasks import TaskContext
from searchapp.jobs.worker import run_job, run_until_done, work
from searchapp.store.db import Database

EVERY_HEARTBEAT_IS_OLD = timedelta(seconds=-3600)  # "stale" = older than an hour from now


@dataclass
class NoPayload:
    """The payload of the kinds these tests declare: none."""


def declare_for_test(monkeypatch, name: str, run) -> None:
    """A job kind ``name`` running ``run``, declared for this test only."""
    monkeypatch.setitem(kinds.DECLARED, name, kinds.JobKind(name, "items", NoPayload, run))


def test_claim_is_exclusive_and_in_order(db_url):
    db = Database(db_url)
    a = queue.enqueue(db, "embed", {"corpus": "a"})
    b = queue.enqueue(db, "embed", {"corpus": "b"})
    assert queue.claim(db, "host:1").id == a
    assert queue.claim(db, "host:2").id == b
    assert queue.claim(db, "host:3") is None


def test_a_dead_workers_job_is_claimable_again(monkeypatch, db_url):
    db = Database(db_url)
    job = queue.enqueue(db, "embed", {})
    queue.claim(db, "some-other-host:1")
    assert queue.claim(db, "me:2") is None  # fresh heartbeat elsewhere: not ours
    monkeypatch.setattr(queue, "STALE_AFTER", EVERY_HEARTBEAT_IS_OLD)
    again = queue.claim(db, "me:2")
    assert again.id == job and again.worker == "me:2"


def test_cancel_queued_at_once_and_running_at_next_progress(app):
    queued = queue.enqueue(app.db, "embed", {})
    assert queue.cancel(app.db, queued).status == "cancelled"
    running = queue.enqueue(app.db, "embed", {})
    lease = queue.claim(app.db, "w:1").lease
    queue.cancel(app.db, running)
    with pytest.raises(Exception, match="Cancelled"):
        TaskContext(app, lease).progress(1, 10, force=True)
    with pytest.raises(JobError, match="already cancelled"):
        queue.cancel(app.db, queued)


def test_worker_records_failures_and_unknown_kinds(app, monkeypatch):
    def broken(ctx, payload):
        raise ValueError("boom")

    declare_for_test(monkeypatch, "broken", broken)
    failing = queue.enqueue(app.db, "broken", {})
    unknown = queue.enqueue(app.db, "nonsense", {})
    assert work(app, stop_when_idle=True) == 2
    error = queue.get(app.db, failing).error  # one line naming the log entry, not the data
    reference = re.search(r"reference ([0-9a-f]{6})", error).group(1)
    assert error.startswith("something went wrong (ValueError") and "boom" not in error
    log = (app.settings.data_dir / "worker.log").read_text()
    assert f"[ref {reference}] broken job {failing}" in log and "ValueError: boom" in log
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

    declare_for_test(monkeypatch, "slow", slow)
    job_id = queue.enqueue(app.db, "slow", {})
    try:
        assert work(app, stop_when_idle=True) == 1
    finally:
        tasks.STOPPING.clear()
    job = queue.get(app.db, job_id)
    assert job.status == "queued" and "resumes" in job.message


def test_a_stale_workers_late_writes_are_refused(monkeypatch, db_url):
    db = Database(db_url)
    job_id = queue.enqueue(db, "embed", {})
    stale = queue.claim(db, "other-host:1").lease
    monkeypatch.setattr(queue, "STALE_AFTER", EVERY_HEARTBEAT_IS_OLD)  # it stopped beating
    current = queue.claim(db, "other-host:2").lease
    assert (current.job_id, current.attempt) == (job_id, stale.attempt + 1)
    with pytest.raises(queue.LeaseLost):
        queue.progress(db, stale, 9, 10, "the stale worker is back")
    assert not queue.heartbeat(db, stale)
    assert not queue.finish(db, stale, "succeeded", result={"by": "stale"})
    assert not queue.requeue(db, stale, "stale stop")
    job = queue.get(db, job_id)
    assert (job.status, job.worker, job.progress_done, job.result) == (
        "running", "other-host:2", 0, None)
    assert queue.finish(db, current, "succeeded", result={"by": "current"})
    assert queue.get(db, job_id).result == {"by": "current"}


def test_a_task_whose_job_was_taken_over_stops_and_writes_nothing(app, monkeypatch):
    def taken_over(ctx, payload):
        monkeypatch.setattr(queue, "STALE_AFTER", EVERY_HEARTBEAT_IS_OLD)
        newer = queue.claim(app.db, "other-host:7")  # another worker takes the job over
        queue.finish(app.db, newer.lease, "succeeded", result={"by": "the other worker"})
        ctx.progress(1, 2, force=True)  # this worker's next report
        return {"by": "the stale worker"}

    declare_for_test(monkeypatch, "taken_over", taken_over)
    job_id = queue.enqueue(app.db, "taken_over", {})
    assert run_job(app, queue.claim(app.db, "other-host:6")) == "lost"
    assert queue.get(app.db, job_id).result == {"by": "the other worker"}


def test_a_job_of_a_killed_worker_process_is_taken_over_at_once(db_url):
    db = Database(db_url)
    job_id = queue.enqueue(db, "embed", {})
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = f"{socket.gethostname()}:{process.pid}"
        queue.claim(db, dead)
        assert queue.claim(db, "me:2") is None  # alive, heartbeat fresh: not claimable
    finally:
        process.kill()
        process.wait(timeout=30)  # reaped: the pid no longer exists
    job = queue.claim(db, "me:2")  # no waiting for STALE_AFTER: the pid is gone
    assert job.id == job_id and job.worker == "me:2" and job.attempts == 2


class InterleavedClaims:
    """Makes every claim read its candidates before any claim writes (a Barrier, no sleeps).

    ``claim`` opens one session to read the candidates and one per attempt to
    take a job; holding each thread's second session until all threads have
    read puts every claimer on the same job at once.
    """

    def __init__(self, db: Database, parties: int):
        self.db, self.real = db, db.session
        self.barrier = threading.Barrier(parties, timeout=30)
        self.opened = threading.local()

    def session(self):
        count = getattr(self.opened, "n", 0)
        self.opened.n = count + 1
        if count == 1:  # this thread has read the candidates; its first write comes next
            self.barrier.wait()
        return self.real()


def test_claimers_racing_for_the_same_job_never_both_get_it(monkeypatch, db_url):
    db = Database(db_url)
    jobs = [queue.enqueue(db, "embed", {"n": i}) for i in range(4)]
    racing = InterleavedClaims(db, parties=4)
    monkeypatch.setattr(db, "session", racing.session)
    claimed = []
    threads = [threading.Thread(target=lambda i=i: claimed.append(queue.claim(db, f"h:{i}")))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    ids = [job.id for job in claimed]
    assert sorted(ids) == jobs, "each job exactly once"


def test_many_workers_many_jobs_no_job_claimed_twice(db_url):
    db = Database(db_url)
    jobs = {queue.enqueue(db, "embed", {"n": i}) for i in range(200)}
    start = threading.Barrier(8, timeout=30)
    claimed: list[int] = []

    def worker(name: str) -> None:
        start.wait()
        while (job := queue.claim(db, name)) is not None:
            claimed.append(job.id)

    threads = [threading.Thread(target=worker, args=(f"h:{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(claimed) == sorted(jobs)
    assert all(queue.get(db, j).attempts == 1 for j in jobs)
