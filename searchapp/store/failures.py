"""Database errors classified once: each driver error that a person can act on becomes
one ``StorageError`` with a one-line message, raised from the engine's ``handle_error``
event (``Database`` installs it), so every session, reader, migration and claim gets
the same classes on SQLite and PostgreSQL.

=====================  ==================================  ===============================
class                  SQLite                              PostgreSQL (SQLSTATE)
=====================  ==================================  ===============================
DatabaseBusyError      SQLITE_BUSY, SQLITE_LOCKED          55P03, 57014 lock/stmt timeout
ReadOnlyError          SQLITE_READONLY (query_only too)    25006, 42501
DiskFullError          SQLITE_FULL                         53100
DiskIOError            SQLITE_IOERR                        58030
NotADatabaseError      SQLITE_NOTADB, SQLITE_CORRUPT       -
DatabaseUnavailable    SQLITE_CANTOPEN, SQLITE_PERM        08xxx, 28xxx, 3D000, 57P0x
ConflictError          SQLITE_CONSTRAINT_UNIQUE / _PK      23505, 40001, 40P01
InvalidParameterError  int past 64 bits, SQLITE_TOOBIG,    22003 (numeric out of range)
                       a lone surrogate (not Unicode)
=====================  ==================================  ===============================

Anything else is left as it is: a bug, shown by the front end's boundary with a
reference into the log. Messages never quote the statement's parameters (the
engine is made with ``hide_parameters=True`` as well), so a failed insert of
5,000 documents is one line, not 5,000 rows of text.

Example:
    >>> import sqlite3
    >>> target = Target("/data/searchapp.db", "/data", busy_seconds=30)
    >>> err = sqlite3.OperationalError("database or disk is full")
    >>> err.sqlite_errorname = "SQLITE_FULL"
    >>> str(classify(err, target))
    'The disk holding /data is full, so nothing was stored (the change was undone). Free...'
"""

from __future__ import annotations

from dataclasses import dataclass

from searchapp.errors import (
    ConflictError,
    DatabaseBusyError,
    DatabaseUnavailableError,
    DiskFullError,
    DiskIOError,
    InvalidParameterError,
    NotADatabaseError,
    ReadOnlyError,
    StorageError,
    os_error,
)

MAX_INTEGER = 2**63 - 1  # the largest id or count SQLite and PostgreSQL's BIGINT hold
_TOO_LARGE = ("A number is too large for the database (the largest is "
              f"{MAX_INTEGER:,}); nothing was stored.")


_NOT_UNICODE = ("A text holds characters that are not valid Unicode (bytes that were not "
                "UTF-8, e.g. in a file name or a terminal's input); nothing was stored.")


@dataclass(frozen=True)
class Target:
    """What the messages name: the database (a file path, or a URL without its password),
    the data folder a SQLite file lives in (None for a server), the busy timeout."""

    where: str
    folder: str | None = None
    busy_seconds: float = 30.0


def classify(exc: BaseException, target: Target) -> Exception | None:
    """The SearchAppError ``exc`` (a driver's exception) stands for, or None if unknown."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, OverflowError):  # sqlite3: "Python int too large to convert"
        return InvalidParameterError(_TOO_LARGE)
    if isinstance(exc, UnicodeEncodeError):  # a lone surrogate: undecodable bytes of a name
        return InvalidParameterError(_NOT_UNICODE)
    name = getattr(exc, "sqlite_errorname", None)
    if name:
        return _sqlite(name, target)
    state = getattr(exc, "sqlstate", None)
    if state or _is_psycopg_connect_error(exc):
        return _postgres(state or "", exc, target)
    if isinstance(exc, OSError):
        return os_error(exc, target.folder or target.where)
    return None


def _sqlite(name: str, t: Target) -> Exception | None:
    place = t.folder or t.where
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return DatabaseBusyError(t.busy_seconds)
    if name.startswith("SQLITE_READONLY"):
        return ReadOnlyError(place, folder=t.folder is not None)
    if name == "SQLITE_FULL":
        return DiskFullError(place)
    if name == "SQLITE_NOTADB":
        return NotADatabaseError(t.where)
    if name.startswith("SQLITE_CORRUPT"):
        return NotADatabaseError(t.where, damaged=True)
    if name.startswith("SQLITE_IOERR"):
        return DiskIOError(t.where, f"disk I/O error, {name}")
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return DatabaseUnavailableError(t.where, "the file cannot be opened (does its folder "
                                        "exist, and may this user read it?)")
    if name in ("SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"):
        return ConflictError()
    if name == "SQLITE_TOOBIG":
        return InvalidParameterError("A text or value is too large for the database; nothing "
                                     "was stored.")
    return None


def _postgres(state: str, exc: BaseException, t: Target) -> Exception | None:
    if state in ("55P03", "57014"):  # lock_not_available, query_canceled (a timeout)
        return DatabaseBusyError(t.busy_seconds)
    if state in ("25006", "42501"):  # read_only_sql_transaction, insufficient_privilege
        return ReadOnlyError(t.where, folder=False)
    if state == "53100":
        return DiskFullError(t.where)
    if state == "58030":
        return DiskIOError(t.where)
    if state in ("23505", "40001", "40P01"):  # unique, serialization failure, deadlock
        return ConflictError()
    if state == "22003":
        return InvalidParameterError(_TOO_LARGE)
    if not state or state.startswith(("08", "28", "57P")) or state == "3D000":
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return DatabaseUnavailableError(t.where, first[:200])
    return None


def _is_psycopg_connect_error(exc: BaseException) -> bool:
    """psycopg's OperationalError for a server that cannot be reached has no SQLSTATE."""
    return type(exc).__module__.startswith("psycopg") and type(exc).__name__ == "OperationalError"
