"""The worker at rest: once idle for ``rest_seconds`` it frees the encoders, indexes and
memos its jobs loaded (real SQLite store, hnswlib index and bundled encoder); the next
job and the next search load them again and give the same answers."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pandas as pd
import pytest

from searchapp.config import worker_rest
from searchapp.errors import ConfigError
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done, work
from searchapp.search.service import search
from tests.test_watched_folders import wait_for

TEXTS = ["The boiler is serviced every October.", "Cats sleep most of the day.",
         "The train to the coast leaves at nine.", "Invoices are paid within a month."]


def ingest(app, name: str, texts: list[str]) -> None:
    csv = pd.DataFrame({"id": range(len(texts)), "text": texts}).to_csv(index=False).encode()
    job = run_until_done(app, upload(app, read_table(csv, f"{name}.csv"), name).job_id)
    assert job.status == "succeeded", job.error


def test_an_idle_worker_frees_what_its_jobs_loaded_and_loads_it_again(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    ingest(app, "notes", TEXTS)
    [before] = search(app, "notes", "when is the heating checked", k=1, mode="semantic")
    assert app.loaded_models and app.indexes._entries, "the job and the search loaded them"

    stop = threading.Event()
    worker = threading.Thread(target=work, args=(app,),
                              kwargs={"stop": stop, "poll_seconds": 0.02, "rest_seconds": 0.05})
    worker.start()
    try:
        wait_for(lambda: not app.loaded_models and not app.indexes._entries, "the rest")
        assert not app.passage_indexes._entries and not app.memo._items
        ingest(app, "more", TEXTS[:2])  # a job after the rest loads the model again
    finally:
        stop.set()
        worker.join(timeout=60)
    [after] = search(app, "notes", "when is the heating checked", k=1, mode="semantic")
    # the same hit; the reloaded model may take the CPU's bf16 speed path where the
    # session's encoder was fp32 (vectors within cosine 0.9999 of each other)
    assert after.id == before.id and abs(after.score - before.score) < 0.005


def test_the_rest_time_is_read_from_the_environment_and_checked():
    assert worker_rest({"SEARCHAPP_WORKER_REST": "0"}) == 0.0  # never
    with pytest.raises(ConfigError, match=r"SEARCHAPP_WORKER_REST='soon'.*e\.g\. 600"):
        worker_rest({"SEARCHAPP_WORKER_REST": "soon"})


def _maps(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc (Linux)")
def test_the_worker_process_starts_afresh_at_rest_and_gives_torch_back(app, tmp_path):
    """A real ``searchapp worker``: once idle after an embed job it replaces itself with a
    fresh worker (same pid, lock kept, niceness not lowered twice), whose memory holds no
    torch library, and which goes on running jobs."""
    from searchapp.jobs import queue
    from searchapp.jobs.worker import WORKER_NICE, worker_pid_in
    from tests.browser import stop

    csv = tmp_path / "notes.csv"
    pd.DataFrame({"id": range(len(TEXTS)), "text": TEXTS}).to_csv(csv, index=False)
    first = upload(app, read_table(csv.read_bytes(), "notes.csv"), "notes").job_id
    env = {**os.environ, "SEARCHAPP_WORKER_REST": "0.5", "SEARCHAPP_DEVICE": "cpu"}
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "searchapp", "worker"], env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: queue.get(app.db, first).finished, "the upload's jobs", timeout=180)
        wait_for(lambda: "libtorch_cpu" in _maps(worker.pid) or
                 "starting afresh" in log.read_text(), "torch loaded by the embedding")
        wait_for(lambda: "starting afresh" in log.read_text()
                 and "libtorch_cpu" not in _maps(worker.pid)
                 and "ready" in log.read_text().split("starting afresh")[-1],
                 "the fresh start", timeout=120)
        assert worker.poll() is None and worker_pid_in(app.settings.data_dir) == worker.pid
        assert os.getpriority(os.PRIO_PROCESS, worker.pid) == \
            min(19, os.getpriority(os.PRIO_PROCESS, 0) + WORKER_NICE), "lowered once only"
        second = upload(app, read_table(csv.read_bytes(), "notes.csv"), "again").job_id
        wait_for(lambda: queue.get(app.db, second).finished, "a job after the fresh start",
                 timeout=180)
        assert queue.get(app.db, second).status == "succeeded"
    finally:
        stop(worker.pid)


def test_a_job_queued_in_the_workers_own_process_wakes_it_without_waiting_for_the_poll(app):
    """The keeper queues syncs in the worker's process: the loop wakes at once. With a poll
    of an hour, only the wake-up can run the job within the deadline."""
    from searchapp.jobs import queue

    stop = threading.Event()
    worker = threading.Thread(target=work, args=(app,),
                              kwargs={"stop": stop, "poll_seconds": 3600})
    worker.start()
    try:
        wait_for(lambda: queue.QUEUED.is_set() is False, "the worker's first look")
        csv = pd.DataFrame({"id": [1], "text": ["hello"]}).to_csv(index=False).encode()
        job_id = upload(app, read_table(csv, "one.csv"), "one").job_id
        wait_for(lambda: queue.get(app.db, job_id).finished, "the job, run without a poll")
    finally:
        stop.set()
        queue.QUEUED.set()  # the loop is in its hour-long wait: let it see the stop
        worker.join(timeout=60)
