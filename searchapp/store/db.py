"""Engine and sessions. SQLite gets WAL, foreign keys and a busy timeout.

Every driver error goes through one place, the engine's ``handle_error`` event,
which turns those a person can act on into one-line ``StorageError``\\ s
(``store/failures.py``: busy, read-only, disk full, not a database, a
concurrent change, ...). A write that waits longer than the busy timeout
(``SEARCHAPP_BUSY_TIMEOUT``, 30 s) for another process' write lock is rolled
back and raised as ``DatabaseBusyError``: nothing half-written.

A SQLite database whose folder (or file) this process may not write is opened
read-only (``mode=ro``; ``immutable=1`` when no other connection has the file
open, as a read-only folder cannot take WAL's shared-memory file): reading
works, every write raises ``ReadOnlyError`` naming the folder.

Example:
    >>> db = Database("sqlite://")          # in memory
    >>> with db.session() as s:
    ...     _ = s.execute(text("select 1"))
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event, text  # noqa: F401 - doctest
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from searchapp.config import DEFAULT_BUSY_TIMEOUT
from searchapp.errors import ConfigError, DatabaseBusyError, DatabaseUnavailableError, os_error
from searchapp.store.failures import Target, classify
from searchapp.store.migrations import migrate

BUSY_MESSAGES = ("database is locked", "database table is locked")  # SQLITE_BUSY, SQLITE_LOCKED


def _sqlite_pragmas(busy_ms: int, read_only: bool):
    """The connect hook: WAL, foreign keys, and how long a write waits for the lock."""

    def on_connect(dbapi_conn, _record) -> None:
        cur = dbapi_conn.cursor()
        if read_only:
            cur.execute("PRAGMA query_only=1")  # a write is SQLITE_READONLY, never attempted
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        if not read_only:
            _enter_wal(cur, busy_ms / 1000)
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    return on_connect


def _enter_wal(cur, wait_seconds: float) -> None:
    """Switch the file to WAL, retrying while another connection holds it.

    Why a loop: changing the journal mode needs the file to itself, and SQLite answers
    SQLITE_BUSY at once there instead of calling the busy handler, so several processes
    opening one *new* database at the same moment (the app, a worker and a command
    started together) would see "database is locked" within milliseconds. A file already
    in WAL (every open but the first) returns at once: the mode is kept in the file.
    """
    deadline = time.monotonic() + wait_seconds
    pause = 0.005
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            locked = any(m in str(exc).lower() for m in BUSY_MESSAGES)
            if not locked or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)  # back off: the other connection's switch takes milliseconds
        pause = min(pause * 2, 0.2)


def sqlite_file(url: str | URL) -> Path | None:
    """The file of a SQLite URL; None for another database or an in-memory one.

    Example:
        >>> sqlite_file("sqlite:////tmp/p%3Fone/searchapp.db"), sqlite_file("sqlite://")
        (PosixPath('/tmp/p?one/searchapp.db'), None)
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def is_read_only(path: Path) -> bool:
    """Whether this process may not write the SQLite file ``path`` or create files beside it
    (a read-only folder or mount, or a file without write permission)."""
    folder_ok = os.access(path.parent, os.W_OK) if path.parent.exists() else True
    file_ok = os.access(path, os.W_OK) if path.exists() else True
    return not (folder_ok and file_ok)


def make_engine(url: str | URL, busy_seconds: float = 30.0, read_only: bool = False) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite files get their folder created (unless
    ``read_only``: then the file is opened read-only). Parameters never appear in errors."""
    try:
        parsed = make_url(url)
        if parsed.get_backend_name() != "sqlite":
            return create_engine(parsed, pool_pre_ping=True, hide_parameters=True)
        kwargs: dict = {"connect_args": {"check_same_thread": False, "timeout": busy_seconds},
                        "hide_parameters": True}
        path = sqlite_file(parsed)
        if path is None:
            kwargs["poolclass"] = StaticPool
        elif read_only:
            kwargs["creator"] = _read_only_connector(path, busy_seconds)
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise (os_error(exc, path.parent) or exc) from exc
        engine = create_engine(parsed, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas(int(busy_seconds * 1000), read_only))
        return engine
    except (ArgumentError, ModuleNotFoundError) as exc:
        raise ConfigError(f"Cannot use database URL {str(url)!r}: {exc}") from exc


def _read_only_connector(path: Path, busy_seconds: float):
    """sqlite3.connect for a file this process may not write.

    ``mode=ro`` needs WAL's ``-shm`` file to exist already (another connection,
    with write access, has the database open); without it no writer is there,
    and ``immutable=1`` reads the file as it is.
    """
    shm = path.with_name(path.name + "-shm")
    flag = "mode=ro" if shm.exists() else "immutable=1"
    uri = f"file:{quote(str(path))}?{flag}"

    def connect():
        return sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=busy_seconds)

    return connect


def is_busy(exc: BaseException) -> bool:
    """Whether a database error means "another process holds the lock" (SQLite's BUSY)."""
    if isinstance(exc, DatabaseBusyError):
        return True
    return isinstance(exc, OperationalError) and any(
        m in str(exc.orig).lower() for m in BUSY_MESSAGES)


def describe_url(url: str | URL) -> str:
    """A database as messages name it: the file of a SQLite URL, else the URL without its
    password.

    Example:
        >>> describe_url("postgresql://me:secret@db/search")
        'postgresql://me:***@db/search'
    """
    path = sqlite_file(url)
    if path is not None:
        return str(path)
    return make_url(url).render_as_string(hide_password=True)


class Database:
    """An engine plus a session factory, migrated on construction.

    ``busy_seconds`` (``Settings.busy_timeout``, SEARCHAPP_BUSY_TIMEOUT; default 30) is how
    long a write waits for a lock another process holds before DatabaseBusyError.
    ``read_only`` None: a SQLite file is opened read-only when this process cannot write
    it or its folder (``is_read_only``); True or False forces it. ``backup_dir``: where a
    schema upgrade of a SQLite file writes its backup first (the App gives
    ``DATA_DIR/backups``; default ``backups/`` beside the file).
    """

    def __init__(self, url: str | URL, busy_seconds: float | None = None,
                 read_only: bool | None = None, backup_dir: Path | None = None):
        self.url = url
        self.busy_seconds = DEFAULT_BUSY_TIMEOUT if busy_seconds is None else busy_seconds
        try:
            path = sqlite_file(url)
        except ArgumentError as exc:
            raise ConfigError(f"Cannot use database URL {str(url)!r}: {exc}") from exc
        if read_only is None:
            read_only = path is not None and is_read_only(path)
        self.read_only = read_only
        if read_only and path is not None and not path.is_file():
            raise DatabaseUnavailableError(
                str(path), "the data folder is read-only and holds no database yet; run "
                "searchapp once with write access to create it")
        self.target = Target(describe_url(url), None if path is None else str(path.parent),
                             self.busy_seconds)
        self.engine = make_engine(url, self.busy_seconds, read_only)
        event.listen(self.engine, "handle_error", self._classify)
        with self.engine.connect() as conn:
            migrate(conn, read_only=read_only, backup_dir=backup_dir)
        self._factory = sessionmaker(self.engine, expire_on_commit=False)

    def _classify(self, context) -> None:
        """The engine's handle_error hook: a driver error a person can act on is raised as its
        StorageError (``store/failures.py``); any other goes on as it was."""
        if context.is_pre_ping:  # the pool's own liveness check handles its errors
            return
        error = classify(context.original_exception, self.target)
        if error is not None:
            raise error from context.original_exception

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on any error."""
        s = self._factory()
        try:
            try:
                yield s
                s.commit()
            except BaseException:
                s.rollback()
                raise
        finally:
            s.close()

    @contextmanager
    def reader(self) -> Iterator[Connection]:
        """A plain connection for short reads on the query path (no ORM session).

        A Session costs about 80 µs per use in bookkeeping; a search that reads
        ten rows by primary key does not need it.
        """
        with self.engine.connect() as conn:
            yield conn

    def dispose(self) -> None:
        self.engine.dispose()
