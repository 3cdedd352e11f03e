"""No file the app writes is reached through a link it did not make (issue 33, class 5).

Each test plants a link where the app writes (in the data folder or the
temporary folder) pointing at a "victim" file with known content, lets the
app do its writing (a real ``searchapp worker`` process for ``worker.pid``),
and checks the victim is untouched and the app said what to remove.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from searchapp.base.private_files import UnsafeFileError, open_private, private_temp_dir
from searchapp.cli.output import write_atomically
from searchapp.config import Settings
from searchapp.errors import LinkedFileError, SearchAppError
from searchapp.jobs import worker
from searchapp.reporting import fallback_log, log_exception
from searchapp.vectors.index import file_lock
from searchapp.web.applog import PrivateFileHandler
from tests.browser import REPO

VICTIM_TEXT = "root:x:0:0:do not touch\n"


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim" / "passwd"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT)
    return path


def untouched(victim: Path) -> bool:
    return victim.read_text() == VICTIM_TEXT


def test_the_worker_refuses_a_linked_pid_file_and_leaves_its_target_alone(tmp_path, victim):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / worker.PID_FILE).symlink_to(victim)
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data), "SEARCHAPP_DEVICE": "cpu",
           "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "searchapp", "worker"], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:  # it runs: it took the link for its pid file
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
    assert untouched(victim), victim.read_text()
    assert proc.returncode != 0
    assert "worker.pid is a symbolic link" in output and "Remove it" in output, output
    assert worker.worker_pid_in(data) is None  # nor is the link read as a live worker's pid


def test_starting_the_worker_does_not_append_its_log_through_a_link(tmp_path, victim):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / worker.LOG_FILE).symlink_to(victim)
    settings = Settings.from_env({"SEARCHAPP_DATA_DIR": str(data)})
    with pytest.raises(LinkedFileError, match=r"worker\.log is a symbolic link"):
        worker.ensure_worker(settings)
    assert untouched(victim)


def test_the_fallback_log_in_the_temporary_folder_follows_no_link(tmp_path, victim,
                                                                  monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    own = tmp_path / f"searchapp-{os.getuid()}"
    own.symlink_to(victim.parent)  # someone else made the folder name a link
    with pytest.raises(UnsafeFileError):
        private_temp_dir()
    assert fallback_log() == Path(os.devnull)
    _, target = log_exception(RuntimeError("boom"), None)
    assert target == Path(os.devnull) and untouched(victim)
    own.unlink()
    folder = private_temp_dir()
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    (folder / "searchapp.log").symlink_to(victim)  # a link inside our own folder
    _, target = log_exception(RuntimeError("boom"), tmp_path / "missing" / "app.log")
    assert untouched(victim) and target == Path(os.devnull)


def test_the_app_log_is_not_opened_through_a_link(tmp_path, victim):
    (tmp_path / "app.log").symlink_to(victim)
    with pytest.raises(UnsafeFileError, match=r"app\.log is a symbolic link"):
        PrivateFileHandler(tmp_path / "app.log", encoding="utf-8")
    os.link(victim, tmp_path / "hard.log")  # a second name of the victim
    with pytest.raises(UnsafeFileError, match="hard link"):
        open_private(tmp_path / "hard.log")
    assert untouched(victim)


def test_an_export_never_writes_through_a_planted_temporary_name_or_link(tmp_path, victim):
    out = tmp_path / "out.csv"
    for name in (f".out.csv.{os.getpid()}.tmp", "out.csv"):  # the old fixed name, the target
        (tmp_path / name).symlink_to(victim)
    write_atomically(out, lambda tmp: Path(tmp).write_text("a,b\n"))
    assert untouched(victim)
    assert not out.is_symlink() and out.read_text() == "a,b\n"


def test_an_index_lock_file_that_is_a_link_is_refused(tmp_path, victim):
    index = tmp_path / "faq.bin"
    index.with_suffix(".lock").symlink_to(victim)
    with pytest.raises(UnsafeFileError), file_lock(index, exclusive=True):
        pass
    assert untouched(victim)


def test_refusals_are_searchapp_errors_that_say_what_to_remove(tmp_path):
    (tmp_path / "worker.pid").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(SearchAppError) as refused:
        worker.hold_worker_lock(tmp_path)
    assert f"rm '{tmp_path / 'worker.pid'}'" in str(refused.value)
