"""Who is using a data folder: a lock every process of the app holds while it has it open.

Every process that opens an App on a data folder (the server, the worker, a CLI
command, a script) holds a *shared* ``flock`` on ``DATA_DIR/.in-use/folder.lock``
for as long as it lives, and an *exclusive* lock on a file of its own beside it,
``DATA_DIR/.in-use/<pid>-<token>.json``, that says who it is (pid and kind). A
restore takes ``folder.lock`` *exclusively* without waiting: it gets it only when
no process holds the folder, and keeps it until the new folder is in place, so no
process can open the old folder meanwhile. When it cannot, the holder files that
are still locked name who holds the folder. The kernel drops every lock when a
process ends (kill -9 included), so a crashed process never blocks a restore and a
recycled pid is never mistaken for a holder: the lock, not the pid, says alive.

A process that finds ``folder.lock`` taken exclusively waits ``wait`` seconds for
the restore to finish, then refuses (``DataFolderBusyError``); after it gets the
lock it checks that the file is still the one at the path (a restore may have
swapped the folder meanwhile) and takes the new one if not.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> hold(folder, kind="worker")
    True
    >>> [(h.pid == os.getpid(), h.kind) for h in holders(folder)]
    [(True, 'worker')]
    >>> with exclusive(folder):
    ...     pass
    Traceback (most recent call last):
    ...
    searchapp.errors.DataFolderBusyError: ... is in use by a worker (pid ...); stop them ...
    >>> release(folder)
    >>> holders(folder)
    []
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import stat
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from searchapp.errors import DataFolderBusyError

LOCK_DIR = ".in-use"
GATE = "folder.lock"
WAIT_SECONDS = 5.0  # an App opening a folder waits this long for a restore to finish
_KIND = {"kind": ""}
_held: dict[Path, list[int]] = {}  # data folder -> [gate fd, own file fd, holds]
_guard = threading.Lock()


@dataclass(frozen=True)
class Holder:
    """A process holding a data folder: its pid and what it is (server, worker, cli ...)."""

    pid: int
    kind: str

    def describe(self) -> str:
        """``the server (pid 4121)``.

        Example:
            >>> Holder(7, "worker").describe()
            'a worker (pid 7)'
        """
        article = "the" if self.kind == "server" else "a"
        return f"{article} {self.kind or 'process'} (pid {self.pid})"


def set_kind(kind: str) -> None:
    """Say what this process is (``server``, ``worker``, ``cli ingest``); its holds say so.

    Example:
        >>> set_kind("worker"); process_kind()
        'worker'
        >>> set_kind("")
    """
    _KIND["kind"] = kind


def process_kind() -> str:
    """What this process said it is (``set_kind``), or ``python`` with its script's name.

    Example:
        >>> set_kind("server"); process_kind()
        'server'
        >>> set_kind("")
    """
    return _KIND["kind"] or f"python process ({Path(sys.argv[0] or 'python').name})"


def _lock_dir(data_dir: Path) -> Path:
    """``DATA_DIR/.in-use``, a private folder of our own (never a link someone put there)."""
    folder = Path(data_dir) / LOCK_DIR
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder} is not a folder (a link or a file); remove it")
    return folder


def _open_gate(folder: Path) -> int:
    return os.open(folder / GATE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


def hold(data_dir: Path, kind: str | None = None, wait: float = WAIT_SECONDS) -> bool:
    """Hold ``data_dir`` until as many ``release`` calls (one lock per folder and process;
    later calls count and return at once). False when the folder cannot hold a lock file
    (read-only: nothing can be restored over it from here either). Raises
    DataFolderBusyError when a restore holds it for more than ``wait`` seconds.

    Example:
        >>> hold(Path(tempfile.mkdtemp()), "cli")                   # doctest: +SKIP
        True
    """
    data_dir = Path(data_dir).resolve()
    with _guard:
        if data_dir in _held:
            _held[data_dir][2] += 1
            return True
        try:
            folder = _lock_dir(data_dir)
        except OSError:
            return False
        deadline = time.monotonic() + wait
        while True:
            try:
                gate = _open_gate(folder)
            except OSError:
                return False
            try:
                fcntl.flock(gate, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(gate)
                if time.monotonic() >= deadline:
                    raise DataFolderBusyError(
                        f"{data_dir} is being restored from a backup now; try again when "
                        "the restore has finished.") from None
                time.sleep(0.05)
                continue
            try:
                same = os.fstat(gate).st_ino == os.stat(folder / GATE,
                                                        follow_symlinks=False).st_ino
            except OSError:
                same = False
            if same:
                break
            os.close(gate)  # the folder was swapped while we waited: hold the new one
            folder = _lock_dir(data_dir)
        own = _own_file(folder, kind or process_kind())
        _held[data_dir] = [gate, own, 1]
        return True


def _own_file(folder: Path, kind: str) -> int:
    """This process' holder file, locked exclusively, with its pid and kind inside."""
    path = folder / f"{os.getpid()}-{secrets.token_hex(4)}.json"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, json.dumps({"pid": os.getpid(), "kind": kind}).encode())
    return fd


def release(data_dir: Path) -> None:
    """Undo one ``hold``; the last one unlocks (a process that ends releases it anyway).

    Example:
        >>> release(Path("/nonexistent"))
    """
    data_dir = Path(data_dir).resolve()
    with _guard:
        fds = _held.get(data_dir)
        if fds is None:
            return
        fds[2] -= 1
        if fds[2] > 0:
            return
        del _held[data_dir]
    gate, own, _ = fds
    with contextlib.suppress(OSError):
        os.unlink(Path(f"/proc/self/fd/{own}").readlink())
    os.close(own)
    os.close(gate)


def holders(data_dir: Path) -> list[Holder]:
    """The live processes holding ``data_dir`` (their files still locked); stale files of
    processes that ended are removed on the way.

    Example:
        >>> holders(Path("/nonexistent"))
        []
    """
    folder = Path(data_dir) / LOCK_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:  # its process holds it: alive
                found.append(_read_holder(fd, path))
                continue
            with contextlib.suppress(OSError):
                path.unlink()  # its process ended
        finally:
            os.close(fd)
    return found


def _read_holder(fd: int, path: Path) -> Holder:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return Holder(int(info["pid"]), str(info.get("kind", ""))[:80])
    except (ValueError, KeyError, TypeError, OSError):
        pid = path.name.split("-", 1)[0]
        return Holder(int(pid) if pid.isdigit() else 0, "")


@contextlib.contextmanager
def exclusive(data_dir: Path) -> Iterator[None]:
    """Hold ``data_dir`` alone while the block runs (a restore), or raise
    DataFolderBusyError naming who holds it and what to do. Never waits.

    Example:
        >>> import tempfile
        >>> with exclusive(Path(tempfile.mkdtemp())):
        ...     pass
    """
    data_dir = Path(data_dir)
    try:
        folder = _lock_dir(data_dir)
        gate = _open_gate(folder)
    except OSError as exc:
        raise DataFolderBusyError(f"Cannot lock {data_dir} to restore into it: "
                                  f"{exc.strerror or exc}.") from None
    try:
        try:
            fcntl.flock(gate, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DataFolderBusyError(busy_message(data_dir, holders(data_dir))) from None
        found = holders(data_dir)  # none once the gate is ours; a belt to the braces
        if found:
            raise DataFolderBusyError(busy_message(data_dir, found))
        yield
    finally:
        os.close(gate)


def busy_message(data_dir: Path, found: list[Holder]) -> str:
    """The refusal naming who holds the folder and what to do.

    Example:
        >>> busy_message(Path("/srv/d"), [Holder(4, "server"), Holder(5, "worker")])[:60]
        '/srv/d is in use by the server (pid 4), a worker (pid 5); st'
    """
    who = ", ".join(h.describe() for h in found) or "another process of the app"
    return (f"{data_dir} is in use by {who}; stop them (the app, its worker and any "
            "searchapp command using this folder), then restore.")
