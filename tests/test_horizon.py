"""Rate and time left of a job's step: measured per step from progress over time."""

from __future__ import annotations

from searchapp.cli.jobs import job_row as _job_row
from searchapp.jobs import queue, tasks
from searchapp.jobs.horizon import RateMeter, split_message
from searchapp.jobs.tasks import TaskContext
from searchapp.ui.common import progress_text


def test_rate_is_per_step_so_model_loading_does_not_dilute_it():
    meter = RateMeter("documents")
    assert meter.observe(0, 0, now=0.0) is None          # loading the model: no count
    assert meter.observe(0, 1000, now=60.0) is None      # a minute later, step 2 starts
    horizon = meter.observe(500, 1000, now=61.0)
    assert round(horizon.rate) == 500 and round(horizon.seconds_left) == 1


def test_rate_follows_the_last_window_not_the_whole_step():
    meter = RateMeter("documents", window=10.0)
    meter.observe(0, 10_000, now=0.0)
    meter.observe(1000, 10_000, now=1.0)                  # 1,000/s at first
    for t in range(2, 40):
        horizon = meter.observe(1000 + (t - 1) * 10, 10_000, now=float(t))  # then 10/s
    assert 9 <= horizon.rate <= 11


def test_a_count_that_goes_back_starts_a_new_step():
    meter = RateMeter()
    meter.observe(0, 100, now=0.0)
    meter.observe(90, 100, now=1.0)
    assert meter.observe(5, 100, now=2.0) is None


def test_the_job_message_carries_rate_and_time_left_to_the_ui_and_the_cli(app, monkeypatch):
    now = [100.0]
    monkeypatch.setattr(tasks.time, "monotonic", lambda: now[0])
    job_id = queue.enqueue(app.db, "embed", {"corpus": "c"})
    ctx = TaskContext(app, queue.claim(app.db, "w:1").lease, "documents")
    ctx.progress(0, 1000, "Step 2 of 2: embedding 1,000 documents", force=True)
    now[0] = 102.0
    ctx.progress(400, 1000, "Step 2 of 2: embedded 400 of 1,000", force=True)
    job = queue.get(app.db, job_id)
    assert split_message(job.message)[1] == "200 documents/s · about 3 s left"
    assert progress_text(job) == ("Running · 400 of 1,000 (40%) · Step 2 of 2 · "
                                  "200 documents/s · about 3 s left")
    row = _job_row(job)
    assert (row["rate"], row["left"]) == ("200 documents/s", "3 s")
    assert row["detail"] == "Step 2 of 2: embedded 400 of 1,000"


def test_a_multi_step_jobs_time_left_says_it_is_the_current_steps():
    from datetime import datetime

    from searchapp.jobs.queue import JobView
    from searchapp.ui.common import progress_text

    def job(message: str) -> JobView:
        return JobView(1, "learn", "running", {}, None, 3, 10, message, None, False, "w",
                       datetime(2026, 1, 1), datetime(2026, 1, 1), None)

    middle = progress_text(job("Step 2 of 5: training · 9 pairs/s · about 1 s left"))
    assert middle.endswith("about 1 s left in this step")
    last = progress_text(job("Step 5 of 5: the verdict · 9 pairs/s · about 1 s left"))
    assert last.endswith("about 1 s left")
