"""The worker the app starts never holds the web app's secrets, and runs at a lower CPU
priority than the server (searches first): read from /proc, not assumed."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from searchapp.base.passwords import hash_password
from searchapp.config import SECRET_VARIABLES, Settings
from searchapp.jobs.worker import WORKER_NICE, ensure_worker

REPO = Path(__file__).resolve().parents[1]


def test_a_spawned_worker_has_neither_password_variable_in_its_environment(monkeypatch,
                                                                         data_dir):
    settings = Settings.from_env({"SEARCHAPP_DATA_DIR": str(data_dir)})
    settings.ensure_dirs()
    stored = hash_password("correct horse", n=2**10)
    monkeypatch.setenv("SEARCHAPP_PASSWORD", "correct horse")
    monkeypatch.setenv("SEARCHAPP_PASSWORD_HASH", stored)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pid = ensure_worker(settings)
    try:
        environ = exec_environ(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    names = {entry.split(b"=", 1)[0].decode() for entry in environ.split(b"\0") if entry}
    assert f"SEARCHAPP_DATA_DIR={data_dir}".encode() in environ.split(b"\0")
    assert not names & set(SECRET_VARIABLES)
    assert b"correct horse" not in environ and stored.encode() not in environ


def exec_environ(pid: int, timeout: float = 30.0) -> bytes:
    """The environment of ``pid`` once its exec finished: while the kernel swaps the program
    in, /proc/PID/environ (and cmdline) read empty, and Popen may return in that window."""
    deadline = time.monotonic() + timeout
    while not (environ := Path(f"/proc/{pid}/environ").read_bytes()):
        assert time.monotonic() < deadline, "the worker never finished starting"
        time.sleep(0.001)
    return environ


def test_a_spawned_worker_runs_at_a_lower_priority_than_the_server(monkeypatch, data_dir):
    settings = Settings.from_env({"SEARCHAPP_DATA_DIR": str(data_dir)})
    settings.ensure_dirs()
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    wanted = min(19, os.getpriority(os.PRIO_PROCESS, 0) + WORKER_NICE)
    pid = ensure_worker(settings)
    try:
        deadline = time.monotonic() + 60
        while os.getpriority(os.PRIO_PROCESS, pid) < wanted:  # set as serve() starts
            assert time.monotonic() < deadline, "the worker kept the server's priority"
            time.sleep(0.02)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
