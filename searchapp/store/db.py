"""Engine and sessions. SQLite gets WAL, foreign keys and a busy timeout.

A write that waits longer than the busy timeout (``SEARCHAPP_BUSY_TIMEOUT``,
30 s) for another process' write lock is rolled back and raised as
``DatabaseBusyError``: one line saying what to do, nothing half-written.

Example:
    >>> db = Database("sqlite://")          # in memory
    >>> with db.session() as s:
    ...     _ = s.execute(text("select 1"))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, text  # noqa: F401 - doctest
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from searchapp.config import DEFAULT_BUSY_TIMEOUT
from searchapp.errors import ConfigError, DatabaseBusyError
from searchapp.store.migrations import migrate

BUSY_MESSAGES = ("database is locked", "database table is locked")  # SQLITE_BUSY, SQLITE_LOCKED


def _sqlite_pragmas(busy_ms: int):
    """The connect hook: WAL, foreign keys, and how long a write waits for the lock."""

    def on_connect(dbapi_conn, _record) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    return on_connect


def make_engine(url: str, busy_seconds: float = 30.0) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite files get their folder created."""
    try:
        if url.startswith("sqlite"):
            kwargs: dict = {"connect_args": {"check_same_thread": False,
                                             "timeout": busy_seconds}}
            if url in ("sqlite://", "sqlite:///:memory:"):
                kwargs["poolclass"] = StaticPool
            else:
                db_path = url.split("///", 1)[-1]
                Path(db_path).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, **kwargs)
            event.listen(engine, "connect", _sqlite_pragmas(int(busy_seconds * 1000)))
            return engine
        return create_engine(url, pool_pre_ping=True)
    except (ArgumentError, ModuleNotFoundError) as exc:
        raise ConfigError(f"Cannot use database URL {url!r}: {exc}") from exc


def is_busy(exc: BaseException) -> bool:
    """Whether a database error means "another process holds the lock" (SQLite's BUSY)."""
    return isinstance(exc, OperationalError) and any(
        m in str(exc.orig).lower() for m in BUSY_MESSAGES)


class Database:
    """An engine plus a session factory, migrated on construction.

    ``busy_seconds`` (``Settings.busy_timeout``, SEARCHAPP_BUSY_TIMEOUT; default 30) is how
    long a write waits for a lock another process holds before DatabaseBusyError.
    ``backup_dir``: where a schema upgrade of a SQLite file writes its backup first
    (the App gives ``DATA_DIR/backups``; default ``backups/`` beside the file).
    """

    def __init__(self, url: str, busy_seconds: float | None = None,
                 backup_dir: Path | None = None):
        self.url = url
        self.busy_seconds = DEFAULT_BUSY_TIMEOUT if busy_seconds is None else busy_seconds
        self.engine = make_engine(url, self.busy_seconds)
        with self._busy_as_error(), self.engine.connect() as conn:
            migrate(conn, backup_dir)
        self._factory = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def _busy_as_error(self) -> Iterator[None]:
        """SQLite's "database is locked" becomes DatabaseBusyError (a one-line message)."""
        try:
            yield
        except OperationalError as exc:
            if is_busy(exc):
                raise DatabaseBusyError(self.busy_seconds) from exc
            raise

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on any error."""
        s = self._factory()
        try:
            with self._busy_as_error():
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
        with self._busy_as_error(), self.engine.connect() as conn:
            yield conn

    def dispose(self) -> None:
        self.engine.dispose()
