"""Watched folders with real file-system events: the keeper (watchdog, inotify) and the
ingest job on a real SQLite store; no mock of the watcher or of the file system.

Each test runs the keeper in a thread with short timings and a worker loop that runs
the ``ingest`` jobs it queues (the embed jobs they queue are left alone: the store's
documents are what the folder must match). Every wait is on a condition with a deadline.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from searchapp.errors import AlreadyExistsError, WatchError
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from searchapp.judgements import service as judgements
from searchapp.store import repo
from searchapp.watching.folders import add_watch, list_watches, remove_watch, set_paused
from searchapp.watching.keeper import Keeper, Tuning
from tests.filesystems import ran_where_permissions_apply, small_disk

FAST = Tuning(debounce=0.2, longest_wait=1.5, rescan=3600, settle=0.6, retry=1.0, lease=5,
              refresh=0.2)


def wait_for(condition, what: str, timeout: float = 60.0):
    """``condition()``'s first truthy value, polled until ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def _ingest_worker(app, stop: threading.Event) -> None:
    name = f"{queue.worker_name()}-ingest"
    while not stop.is_set():
        job = queue.claim(app.db, name, kinds=("ingest",))
        if job is None:
            stop.wait(0.05)
        else:
            run_job(app, job)


@contextlib.contextmanager
def running_keeper(app, tuning: Tuning):
    """A keeper with ``tuning`` and an ingest worker running in threads; stopped at the end."""
    stop = threading.Event()
    keeper = Keeper(app, tuning, owner="test-keeper")
    threads = [threading.Thread(target=keeper.run, args=(stop,)),
               threading.Thread(target=_ingest_worker, args=(app, stop))]
    for thread in threads:
        thread.start()
    try:
        yield keeper
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)


@pytest.fixture
def keeper(app, bundled_encoder):
    """A running keeper and ingest worker on the test's App (the session's encoder: an
    ingest embeds its batches as it stores them); stopped at the end."""
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    with running_keeper(app, FAST) as running:
        yield running


def docs(app, corpus: str = "notes") -> dict[str, str]:
    """external id → text of the corpus' documents (empty when there is no corpus yet)."""
    with app.db.session() as s:
        found = repo.find_corpus(s, corpus)
        if found is None:
            return {}
        ids = list(repo.stored_files(s, found.id))
        from searchapp.store.judgement_rows import texts_by_external_id
        return texts_by_external_id(s, found.id, ids)


def row_ids(app, corpus: str = "notes") -> dict[str, int]:
    """external id → the document's row id (kept by a rename: vectors, clusters)."""
    with app.db.session() as s:
        return {e: f.id for e, f in repo.stored_files(
            s, repo.find_corpus(s, corpus).id).items()}


def folder_status(app) -> dict:
    [folder] = list_watches(app)
    return folder


def synced(app) -> dict | None:
    """The folder's status once no sync is queued or running, else None."""
    folder = folder_status(app)
    return folder if folder["job"] is None and folder["last_sync_at"] else None


def test_created_changed_renamed_deleted_files_reach_the_corpus(app, keeper, tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.txt").write_text("Rockets launch from the coast at dawn.")
    add_watch(app, root, "notes")
    wait_for(lambda: docs(app) == {"a.txt": "Rockets launch from the coast at dawn."},
             "the first scan")

    (root / "b.md").write_text("# Cats\n\nThe cat sat on the mat.")
    wait_for(lambda: "b.md" in docs(app), "a created file")
    (root / "a.txt").write_text("Rockets now launch at night.")
    wait_for(lambda: docs(app).get("a.txt") == "Rockets now launch at night.", "a changed file")

    judgements.add(app, "notes", query="rocket", doc="a.txt", label=2, source="cli")
    row = row_ids(app)["a.txt"]
    (root / "a.txt").rename(root / "rockets.txt")
    wait_for(lambda: set(docs(app)) == {"rockets.txt", "b.md"}, "a renamed file")
    [judged] = judgements.list_judgements(app, "notes")
    assert judged.a == "rockets.txt", "the judgement follows the renamed file"
    assert row_ids(app)["rockets.txt"] == row, "the same document: its vectors and clusters"

    (root / "b.md").unlink()
    wait_for(lambda: set(docs(app)) == {"rockets.txt"}, "a deleted file")
    status = wait_for(lambda: synced(app), "the status")
    assert status["files"] == {"seen": 1, "in_step": 1, "waiting": 0, "failed": 0}
    assert status["last_change"]["removed"] == 1 and status["last_change_ago"].endswith("ago")


@pytest.mark.slow
def test_a_burst_of_files_is_batched_into_few_syncs(app, keeper, tmp_path):
    root, source = tmp_path / "notes", tmp_path / "source"
    root.mkdir()
    source.mkdir()
    for i in range(300):
        (source / f"note-{i:03}.txt").write_text(f"Note number {i} about topic {i % 7}.")
    add_watch(app, root, "notes")
    wait_for(lambda: synced(app), "the first, empty scan")
    first = {j.id for j in queue.recent(app.db, 100) if j.kind == "ingest"}

    shutil.copytree(source, root / "copied")
    wait_for(lambda: len(docs(app)) == 300, "300 copied files", timeout=120)
    status = wait_for(lambda: synced(app), "the status")
    assert status["files"]["in_step"] == 300 and status["files"]["failed"] == 0
    later = {j.id for j in queue.recent(app.db, 100) if j.kind == "ingest"} - first
    assert len(later) <= 5, f"300 files took {len(later)} syncs: the burst was not batched"


def test_a_folder_renamed_away_keeps_its_documents_and_syncs_again_when_back(
        app, keeper, tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    for name in ("one.txt", "two.txt"):
        (root / name).write_text(f"The text of {name}.")
    add_watch(app, root, "notes")
    wait_for(lambda: len(docs(app)) == 2, "the first scan")

    root.rename(tmp_path / "away")
    status = wait_for(lambda: folder_status(app)["state"] == "unavailable" and folder_status(app),
                      "the folder marked unavailable")
    assert "not there" in status["reason"] and "kept" in status["reason"]
    (tmp_path / "away" / "three.txt").write_text("Written while the folder was away.")
    assert set(docs(app)) == {"one.txt", "two.txt"}, "nothing removed while it is away"

    (tmp_path / "away").rename(root)
    wait_for(lambda: set(docs(app)) == {"one.txt", "two.txt", "three.txt"},
             "the sync after its return")
    assert folder_status(app)["state"] in ("watching", "syncing")
    assert folder_status(app)["reason"] is None


def sync_ended_after_the_folder_went(app, tmp_path, status: str, **outcome):
    """A watched folder renamed away and marked unavailable by the keeper, then its sync job
    (started before the rename) ending ``status``: (the folder's id, the job's id, the
    reason it was marked with), the job's outcome recorded."""
    from searchapp.store import watched_folders as rows
    from searchapp.watching.availability import unavailable
    from searchapp.watching.sync import record

    root = tmp_path / "notes"
    root.mkdir()
    added = add_watch(app, root, "notes")
    root.rename(tmp_path / "away")
    reason = unavailable(str(root), None)
    with app.db.session() as s:
        rows.write_status(s, added["id"], available=False, reason=reason)
    job_id = queue.enqueue(app.db, "ingest", {"corpus": "notes"})
    job = queue.claim(app.db, "w", kinds=("ingest",))
    queue.finish(app.db, job.lease, status, **outcome)
    record(app, added["id"], queue.get(app.db, job_id))
    return added["id"], job_id, reason


def test_a_sync_that_failed_because_the_folder_went_keeps_the_unavailable_reason(app, tmp_path):
    """The order that raced in CI: the folder is marked unavailable first, then its sync job
    (started before the rename) ends failed; the status must still say why it is away."""
    from searchapp.store import watched_folders as rows
    from searchapp.watching.sync import record

    folder, job_id, reason = sync_ended_after_the_folder_went(
        app, tmp_path, "failed", error="notes cannot be read now (No such file or directory)")
    status = folder_status(app)
    assert status["state"] == "unavailable" and status["reason"] == reason

    with app.db.session() as s:  # an available folder shows the failed sync's error
        rows.write_status(s, folder, available=True, reason=None)
    record(app, folder, queue.get(app.db, job_id))
    assert folder_status(app)["reason"].startswith("the last sync failed")


def test_a_sync_that_succeeds_after_the_folder_went_away_keeps_why_it_is_away(app, tmp_path):
    """The other order that raced in CI: a sync that read the folder just before it was
    renamed ends *succeeded* after the keeper marked it unavailable."""
    from searchapp.store import watched_folders as rows
    from searchapp.watching.sync import record

    folder, job_id, reason = sync_ended_after_the_folder_went(
        app, tmp_path, "succeeded", result={"added": 1})
    status = folder_status(app)
    assert status["state"] == "unavailable" and status["reason"] == reason
    assert status["files"]["in_step"] == 1, "the sync's counts are still recorded"

    with app.db.session() as s:  # an available folder: the sync clears an older failure
        rows.write_status(s, folder, available=True, reason="the last sync failed: x")
    record(app, folder, queue.get(app.db, job_id))
    assert folder_status(app)["reason"] is None


@pytest.mark.slow
def test_an_unmounted_folder_is_unavailable_not_empty(app, keeper, tmp_path):
    root = tmp_path / "share"
    root.mkdir()
    with small_disk(root, 4 << 20):
        (root / "manual.txt").write_text("The share's manual.")
        add_watch(app, root, "notes")
        wait_for(lambda: set(docs(app)) == {"manual.txt"}, "the first scan")
    # unmounted: the mount point is an empty folder on another file system
    status = wait_for(lambda: folder_status(app)["state"] == "unavailable" and folder_status(app),
                      "the folder marked unavailable")
    assert "mounted" in status["reason"]
    assert set(docs(app)) == {"manual.txt"}


@pytest.mark.slow
def test_a_half_written_file_waits_until_it_is_left_alone(app, keeper, tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    add_watch(app, root, "notes")
    wait_for(lambda: synced(app), "the first scan")
    with open(root / "report.txt", "w") as out:
        def still_writing():
            out.write("More of the report. ")
            out.flush()
            return folder_status(app)["files"]["waiting"] >= 1 and synced(app)

        status = wait_for(still_writing, "a sync that finds the file still being written")
        assert "report.txt" not in docs(app), "a file being written is not read"
        assert status["files"]["failed"] == 0
        out.write("The end.")
    wait_for(lambda: docs(app).get("report.txt", "").endswith("The end."),
             "the whole file once it is left alone")


def test_a_file_without_read_permission_is_kept_reported_and_retried(request, tmp_path):
    if ran_where_permissions_apply(request, tmp_path):  # root: run where chmod 000 binds
        return
    app, keeper = request.getfixturevalue("app"), request.getfixturevalue("keeper")  # noqa: F841
    root = tmp_path / "notes"
    root.mkdir()
    secret = root / "secret.txt"
    secret.write_text("First version.")
    add_watch(app, root, "notes")
    wait_for(lambda: docs(app) == {"secret.txt": "First version."}, "the first scan")
    secret.write_text("Second version.")
    secret.chmod(0)
    try:
        status = wait_for(lambda: (s := synced(app)) and s["files"]["failed"] == 1 and s,
                          "the unreadable file reported")
        assert "Permission denied" in status["failures"][0]["reason"]
        assert docs(app) == {"secret.txt": "First version."}, "kept, not removed"
    finally:
        secret.chmod(0o600)
    wait_for(lambda: docs(app) == {"secret.txt": "Second version."}, "the retry")


@pytest.mark.slow
def test_include_and_exclude_globs_choose_the_files(app, keeper, tmp_path):
    root = tmp_path / "notes"
    (root / "drafts").mkdir(parents=True)
    (root / "keep.md").write_text("# Kept")
    (root / "skip.txt").write_text("Not markdown.")
    (root / "drafts" / "wip.md").write_text("# A draft")
    add_watch(app, root, "notes", include=["*.md"], exclude=["drafts/*"])
    wait_for(lambda: set(docs(app)) == {"keep.md"}, "only the included, not excluded file")


@pytest.mark.slow
def test_a_paused_folder_is_not_synced_and_a_removed_one_keeps_its_documents(
        app, keeper, tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.txt").write_text("Alpha.")
    folder = add_watch(app, root, "notes")
    wait_for(lambda: set(docs(app)) == {"a.txt"}, "the first scan")
    assert set_paused(app, str(root), True)["state"] == "paused"
    wait_for(lambda: folder["id"] not in keeper.held, "the keeper letting it go")
    (root / "b.txt").write_text("Beta.")
    assert set(docs(app)) == {"a.txt"}
    set_paused(app, folder["id"], False)
    wait_for(lambda: set(docs(app)) == {"a.txt", "b.txt"}, "the sync after resume")
    remove_watch(app, folder["id"])
    assert list_watches(app) == [] and set(docs(app)) == {"a.txt", "b.txt"}


def test_adding_a_folder_refuses_what_cannot_be_watched(app, tmp_path):
    with pytest.raises(WatchError, match="not there"):
        add_watch(app, tmp_path / "missing", "notes")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(WatchError, match="no longer a folder"):
        add_watch(app, tmp_path / "file.txt", "notes")
    with pytest.raises(WatchError, match="data folder"):
        add_watch(app, tmp_path, "notes")  # the data folder lies inside it
    (tmp_path / "ok").mkdir()
    with pytest.raises(WatchError, match="may watch folders under"):
        add_watch(app, tmp_path / "ok", "notes", roots=[tmp_path / "elsewhere"])
    add_watch(app, tmp_path / "ok", "notes")
    with pytest.raises(AlreadyExistsError):
        add_watch(app, tmp_path / "ok", "notes")
    assert [f["path"] for f in list_watches(app)] == [str((tmp_path / "ok").resolve())]


def test_one_keeper_at_a_time_holds_a_folder_and_a_dead_ones_folder_is_taken_over(
        app, tmp_path):
    _two_keepers(app, tmp_path)


def test_on_postgresql_keepers_share_folders_by_lease_and_sync_them(
        postgres_url, monkeypatch, tmp_path):
    from searchapp.context import App

    monkeypatch.setenv("SEARCHAPP_DATABASE_URL", postgres_url)
    app = App()
    try:
        _two_keepers(app, tmp_path)
        stop = threading.Event()
        keeper = Keeper(app, FAST, owner="pg-keeper")
        threads = [threading.Thread(target=keeper.run, args=(stop,)),
                   threading.Thread(target=_ingest_worker, args=(app, stop))]
        for thread in threads:
            thread.start()
        try:
            (tmp_path / "notes" / "pg.txt").write_text("Stored in PostgreSQL.")
            wait_for(lambda: docs(app) == {"pg.txt": "Stored in PostgreSQL."}, "a sync on PG")
            assert wait_for(lambda: synced(app), "the status")["worker"] == "pg-keeper"
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=60)
    finally:
        app.db.dispose()


def _two_keepers(app, tmp_path) -> None:
    """Keeper "a" takes the folder, "b" does not; "a" stops renewing (dead) and "b" takes it."""
    (tmp_path / "notes").mkdir()
    folder = add_watch(app, tmp_path / "notes", "notes")
    short = Tuning(lease=1.0, refresh=0.1, rescan=3600)
    first, second = Keeper(app, short, owner="a"), Keeper(app, short, owner="b")
    try:
        first.refresh(time.monotonic())
        second.refresh(time.monotonic())
        assert folder["id"] in first.held and folder["id"] not in second.held
        # "a" dies: it never renews; once its lease ends "b" takes the folder
        wait_for(lambda: second.refresh(time.monotonic()) or folder["id"] in second.held,
                 "the take-over", timeout=10)
        assert folder_status(app)["worker"] == "b"
    finally:
        for keeper in (first, second):
            for held in keeper.held.values():
                keeper._unschedule(held)


def _ingest_now(app, folder: Path, **options) -> queue.JobView:
    """One ``--sync`` ingest of ``folder`` run here to its end (no embedding)."""
    from searchapp.intake.files_job import request_ingest

    job_id = request_ingest(app, "notes", [folder], sync=True, options=options or None)
    job = queue.claim(app.db, "test", kinds=("ingest",))
    run_job(app, job)
    return queue.get(app.db, job_id)


def test_a_sync_that_did_not_see_every_file_removes_nothing(app, tmp_path, monkeypatch):
    root = tmp_path / "notes"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text(f"Text of {name}.")
    assert _ingest_now(app, root).result["added"] == 3
    monkeypatch.setenv("SEARCHAPP_MAX_FILES", "1")  # the ingest stops after one file
    stopped = _ingest_now(app, root).result
    assert stopped["removed"] == 0 and any("Nothing was removed" in n for n in stopped["notes"])
    assert set(docs(app)) == {"a.txt", "b.txt", "c.txt"}
    monkeypatch.delenv("SEARCHAPP_MAX_FILES")
    moved = _ingest_now(app, root, device="another file system")  # unmounted since added
    assert moved.status == "failed" and "another file system" in moved.error
    assert set(docs(app)) == {"a.txt", "b.txt", "c.txt"}


def _worker(env: dict, log: Path):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "searchapp", "worker"], env=env,
                            stdout=open(log, "ab"), stderr=subprocess.STDOUT)


@pytest.mark.slow
def test_a_worker_killed_mid_sync_resumes_with_nothing_lost_or_doubled(app, tmp_path):
    """The real ``searchapp worker`` (keeper and jobs) SIGKILLed once the first batch of a
    folder's first sync is committed; the next worker takes the folder's lease and the job over."""
    from searchapp.intake.files_job import BATCH_DOCUMENTS
    from tests.browser import stop

    root = tmp_path / "notes"
    root.mkdir()
    count = BATCH_DOCUMENTS * 3 + 10
    for i in range(count):
        (root / f"n{i:03}.txt").write_text(f"Note {i}: something worth finding, number {i}.")
    add_watch(app, root, "notes")
    env = {**os.environ, "SEARCHAPP_WATCH_LEASE": "2", "SEARCHAPP_WATCH_SETTLE": "0.2"}
    first = _worker(env, tmp_path / "first.log")
    try:
        wait_for(lambda: docs(app), "the first committed batch", timeout=180)
    finally:
        first.kill()  # SIGKILL, as the OOM killer or kill -9 would
        first.wait()
    stored = len(docs(app))
    assert 0 < stored < count, "the kill lands mid-sync"

    second = _worker(env, tmp_path / "second.log")
    try:
        status = wait_for(lambda: (s := synced(app)) and s["files"]["in_step"] == count and s,
                          "the sync finished by the next worker", timeout=180)
    finally:
        stop(second.pid)
    assert len(docs(app)) == count and status["files"]["failed"] == 0
    with app.db.session() as s:
        from sqlalchemy import text
        doubled = s.execute(text("SELECT external_id FROM documents GROUP BY corpus_id, "
                                 "external_id HAVING count(*) > 1")).all()
    assert doubled == []


@pytest.mark.slow
def test_on_postgresql_a_killed_workers_folder_is_taken_over_by_another_worker(
        postgres_url, tmp_path):
    """Two real ``searchapp worker`` processes on one PostgreSQL database (each with its own
    data folder, as on two machines): one holds the folder's lease; SIGKILLed, it never
    gives the lease back, and the other takes the folder over when the lease ends and
    keeps it in step."""
    from searchapp.config import Settings
    from searchapp.context import App
    from tests.browser import stop

    root = tmp_path / "notes"
    root.mkdir()
    (root / "first.txt").write_text("Written before any worker ran.")
    env = {**os.environ, "SEARCHAPP_DATABASE_URL": postgres_url, "SEARCHAPP_WATCH_LEASE": "2",
           "SEARCHAPP_WATCH_SETTLE": "0.2", "SEARCHAPP_DEVICE": "cpu"}
    app = App(Settings.from_env({**env, "SEARCHAPP_DATA_DIR": str(tmp_path / "here")}))
    try:
        add_watch(app, root, "notes")
        first = _worker({**env, "SEARCHAPP_DATA_DIR": str(tmp_path / "a")}, tmp_path / "a.log")
        try:
            holder = wait_for(lambda: (s := synced(app)) and s["worker"], "the first worker's "
                              "sync", timeout=180)
            assert holder.endswith(f":{first.pid}"), holder
            second = _worker({**env, "SEARCHAPP_DATA_DIR": str(tmp_path / "b")},
                             tmp_path / "b.log")
        finally:
            first.kill()  # SIGKILL: no lease given back, no status written
            first.wait()
        try:
            wait_for(lambda: folder_status(app)["worker"] == f"{holder.rsplit(':', 1)[0]}:"
                     f"{second.pid}", "the take-over by the second worker", timeout=120)
            (root / "second.txt").write_text("Written after the first worker died.")
            wait_for(lambda: docs(app) == {"first.txt": "Written before any worker ran.",
                                           "second.txt": "Written after the first worker died."},
                     "the new file synced by the second worker", timeout=120)
        finally:
            stop(second.pid)
    finally:
        app.db.dispose()
