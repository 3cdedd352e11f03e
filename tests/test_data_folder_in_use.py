"""A data folder in use by any process of the app (server, worker, CLI writer, a script
holding an App) is never restored over; once they have all stopped, it is.

Every holder is a real process on a real folder; the test waits on the holders' own
lock files (``data_lock.holders``), never on a sleep.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchapp.backups import service as backups
from searchapp.base import data_lock
from searchapp.corpora import documents as docs
from searchapp.corpora.service import create_corpus
from searchapp.errors import BackupError, DataFolderBusyError
from tests.browser import served_app

REPO = Path(__file__).resolve().parents[1]
HOLD_APP = ("import sys\nfrom searchapp.context import App\napp = App()\n"
            "print('ready', flush=True)\nsys.stdin.read()\n")


def env_for(folder: Path) -> dict[str, str]:
    return {**os.environ, "SEARCHAPP_DATA_DIR": str(folder), "SEARCHAPP_DEVICE": "cpu",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO),
                                                        os.environ.get("PYTHONPATH")]))}


def wait_held_by(folder: Path, proc: subprocess.Popen, timeout: float = 60.0
                 ) -> data_lock.Holder:
    """The holder entry of ``proc`` once it holds ``folder`` (its lock file is the signal;
    polled, with a deadline)."""
    pid = proc.pid
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for holder in data_lock.holders(folder):
            if holder.pid == pid:
                return holder
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never held {folder} (exit code {proc.poll()})")


@pytest.fixture
def archive_and_target(app, tmp_path):
    """A backup of a small corpus, and a second data folder with a database of its own."""
    create_corpus(app, "tiny")
    docs.upsert(app, "tiny", [docs.Doc("d1", "one"), docs.Doc("d2", "two")])
    made = backups.backup(app, tmp_path / "b.tar")
    target = tmp_path / "live"
    first = backups.restore(made.path, target)
    return made.path, first.data_dir


def restore_cli(archive: Path, target: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searchapp", "restore", str(archive),
                           "--data-dir", str(target), "--force"], capture_output=True,
                          text=True, env=env_for(target), timeout=120)


def test_a_script_holding_an_app_blocks_restore_until_it_exits(archive_and_target):
    archive, target = archive_and_target
    holder = subprocess.Popen([sys.executable, "-c", HOLD_APP], env=env_for(target),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert wait_held_by(target, holder).pid == holder.pid
        with pytest.raises(BackupError, match=rf"in use by .*pid {holder.pid}.*stop them"):
            backups.restore(archive, target, force=True)
        assert not list(target.parent.glob("live.replaced-*"))  # nothing moved
        refused = restore_cli(archive, target)
        assert refused.returncode == 1
        assert refused.stderr.startswith("error: ") and "Traceback" not in refused.stderr
        assert f"pid {holder.pid}" in refused.stderr
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    done = backups.restore(archive, target, force=True)  # its lock went with it
    assert done.replaced is not None


def test_a_cli_writer_waiting_on_its_input_blocks_restore(archive_and_target):
    archive, target = archive_and_target
    writer = subprocess.Popen([sys.executable, "-m", "searchapp", "documents", "upsert",
                               "--corpus", "tiny", "--id", "d9", "--text", "-"],
                              env=env_for(target), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        held = wait_held_by(target, writer)
        assert held.kind == "`searchapp documents`"
        with pytest.raises(BackupError, match=r"in use by a `searchapp documents` \(pid"):
            backups.restore(archive, target, force=True)
    finally:
        _out, err = writer.communicate("nine", timeout=120)
    assert writer.returncode == 0, err
    assert backups.restore(archive, target, force=True).replaced is not None


def test_a_running_server_blocks_restore_until_it_stops(
        archive_and_target, tmp_path):
    archive, target = archive_and_target
    with served_app(target, tmp_path / "server.log") as (server, _url):
        assert wait_held_by(target, server).kind == "server"
        refused = restore_cli(archive, target)
        assert refused.returncode == 1, refused.stdout
        assert f"the server (pid {server.pid})" in refused.stderr
        assert not list(target.parent.glob("live.replaced-*"))
    assert restore_cli(archive, target).returncode == 0


def test_an_app_opening_a_folder_being_restored_waits_then_says_so(tmp_path):
    folder = tmp_path / "restoring"
    folder.mkdir()
    with data_lock.exclusive(folder):
        started = time.monotonic()
        with pytest.raises(DataFolderBusyError, match="being restored"):
            data_lock.hold(folder, "cli", wait=0.2)
        assert time.monotonic() - started < 5
    assert data_lock.hold(folder, "cli", wait=0)
    data_lock.release(folder)
    assert data_lock.holders(folder) == []
