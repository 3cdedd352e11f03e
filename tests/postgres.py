"""A throwaway PostgreSQL server for tests and benchmarks.

Debian's ``postgresql`` package gives the server binaries (``initdb``,
``pg_ctl``) under ``/usr/lib/postgresql/VERSION/bin``; nothing else is needed:
``PostgresServer`` makes a cluster in a temporary folder, starts it on a free
port of 127.0.0.1 (its unix socket in that folder too, never in /run), hands
out one fresh database per caller and stops the server by its PID.

``initdb`` refuses to run as root. As root (a container, CI) the cluster is
made and run as the unprivileged ``postgres`` user that the Debian package
creates, in a folder outside pytest's private ``/tmp/pytest-of-root``, which
that user cannot enter. Durability is switched off (``fsync=off``): the
cluster lives for one test session.

Example (with the binaries and psycopg installed):
    >>> with PostgresServer.start() as server:          # doctest: +SKIP
    ...     url = server.create_database()
    >>> url                                             # doctest: +SKIP
    'postgresql+psycopg://searchapp@127.0.0.1:41234/t1'
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

USER = "searchapp"  # the cluster's superuser (trust authentication on 127.0.0.1 only)
START_SECONDS = 60.0
STOP_SECONDS = 30.0
SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",  # a throwaway cluster: nothing to keep after a crash
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",  # 8 benchmark workers plus parallel tests, with room
    "shared_buffers": "64MB",
}


def binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (newest Debian version first), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def unavailable_reason() -> str | None:
    """Why a server cannot be started here (None when it can): a skip reason for tests."""
    if binaries() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql; .ci/run does)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -r requirements-dev.txt)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a 'postgres' user for initdb to run as"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One running throwaway cluster; ``create_database`` gives each caller its own database."""

    def __init__(self, folder: Path, port: int, pid: int):
        self.folder, self.port, self.pid = folder, port, pid
        self._names = itertools.count(1)

    # ---- start and stop --------------------------------------------------------
    @classmethod
    def start(cls) -> PostgresServer:
        """initdb into a new temporary folder and start the server; waits until it accepts."""
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        bin_dir = binaries()
        folder = Path(tempfile.mkdtemp(prefix="searchapp-pg-"))
        run_as = _run_as(folder)
        data, port = folder / "data", free_port()
        subprocess.run([str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust",
                        "-E", "UTF8", "--locale=C", "--no-sync"],
                       check=True, capture_output=True, **run_as)
        options = " ".join([f"-p {port}", f"-k {folder}"]
                           + [f"-c {k}={v}" for k, v in SERVER_SETTINGS.items()])
        subprocess.run([str(bin_dir / "pg_ctl"), "start", "-D", str(data), "-o", options,
                        "-l", str(folder / "server.log"), "-w", "-t", str(int(START_SECONDS))],
                       check=True, capture_output=True, **run_as)
        pid = int((data / "postmaster.pid").read_text().split()[0])
        return cls(folder, port, pid)

    def stop(self) -> None:
        """Fast shutdown by PID (SIGINT), waited for with a deadline; then the folder goes."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_SECONDS
        while _alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(self.pid):
            os.kill(self.pid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- databases -------------------------------------------------------------
    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of one database on this server (driver: psycopg 3)."""
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = name or f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop a database made by ``create_database``, closing what still uses it."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run_as(folder: Path) -> dict:
    """subprocess arguments that run initdb/pg_ctl as ``postgres`` when we are root."""
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam("postgres")
    os.chown(folder, user.pw_uid, user.pw_gid)
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": [],
            "cwd": str(folder)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
