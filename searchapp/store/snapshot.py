"""A consistent copy of the database while the app and the workers keep writing.

- SQLite: the online backup API (``sqlite3.Connection.backup``) in one step. In
  WAL mode that step is one read transaction: it copies the pages as of one
  moment while writers go on committing to the WAL (a copy in several steps
  would start again after every write of another connection, and might never
  end during an ingest). The copy is checked with ``PRAGMA integrity_check``.
- PostgreSQL: ``pg_dump --format=custom`` under a snapshot exported from a
  REPEATABLE READ transaction, in which the corpora and their generations are
  read too: the dump and the manifest describe the same moment.

``corpora_in`` reads the corpora, their counts and generations from a copy, so
a manifest says what the copy holds, not what the live database held a moment
later.

Example:
    >>> import tempfile, sqlite3
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = sqlite3.connect(folder / "live.db").execute("create table t (x)")
    >>> copy_sqlite(folder / "live.db", folder / "copy.db").name
    'copy.db'
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from searchapp.errors import BackupError

PG_DUMP = "pg_dump"
PG_RESTORE = "pg_restore"


@dataclass(frozen=True)
class CorpusAt:
    """A corpus as a copy holds it: name, model, counts and the generation it is at."""

    name: str
    model: str
    documents: int
    embedded: int
    generation: int | None

    def as_dict(self) -> dict:
        return {"name": self.name, "model": self.model, "documents": self.documents,
                "embedded": self.embedded, "generation": self.generation}


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL, or None for another database or an in-memory one.

    Example:
        >>> sqlite_path("sqlite:////srv/data/searchapp.db"), sqlite_path("sqlite://")
        (PosixPath('/srv/data/searchapp.db'), None)
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def copy_sqlite(source: Path, dest: Path, busy_seconds: float = 30.0) -> Path:
    """Copy the SQLite database ``source`` to ``dest`` consistently (see the module); the copy
    is checked and left in rollback-journal mode, a single self-contained file."""
    dest.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=busy_seconds)
    try:
        out = sqlite3.connect(dest)
        try:
            src.backup(out)  # pages=-1: all at once, one read transaction
            out.execute("PRAGMA journal_mode=DELETE")
            check = out.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            out.close()
    except sqlite3.Error as exc:
        dest.unlink(missing_ok=True)
        raise BackupError(f"Cannot copy the database {source}: {exc}.") from exc
    finally:
        src.close()
    if check != "ok":
        dest.unlink(missing_ok=True)
        raise BackupError(f"The copy of {source} failed its integrity check ({check}); "
                          "nothing was written. Check the disk, then try again.")
    return dest


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` of a SQLite file: ``"ok"`` or the first problem.

    Example:
        >>> integrity(Path("/nonexistent/x.db"))
        'unable to open database file'
    """
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return str(con.execute("PRAGMA integrity_check").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error as exc:
        return str(exc)


def corpora_in(path: Path) -> tuple[int | None, list[CorpusAt]]:
    """(schema version, corpora) of a SQLite copy; older schemas without counters give what
    they have.

    Example:
        >>> corpora_in(Path("/nonexistent/x.db"))
        (None, [])
    """
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True) if path.exists() else None
    if con is None:
        return None, []
    try:
        return _read_corpora(con.execute)
    finally:
        con.close()


_CORPORA_SQL = """SELECT c.name, c.model_name, c.document_count, coalesce(e.count, 0), c.generation
    FROM corpora c LEFT JOIN models m ON m.name = c.model_name
    LEFT JOIN embedded_counts e ON e.corpus_id = c.id AND e.model_id = m.id ORDER BY c.name"""
_CORPORA_V1_SQL = """SELECT c.name, c.model_name,
    (SELECT count(*) FROM documents d WHERE d.corpus_id = c.id), 0, NULL
    FROM corpora c ORDER BY c.name"""


def _read_corpora(execute) -> tuple[int | None, list[CorpusAt]]:
    try:
        version = int(execute("SELECT version FROM schema_info").fetchone()[0])
    except Exception:  # not one of our databases (or empty): nothing to describe
        return None, []
    rows = execute(_CORPORA_SQL if version >= 2 else _CORPORA_V1_SQL).fetchall()
    return version, [CorpusAt(str(n), str(m), int(d or 0), int(e or 0),
                              None if g is None else int(g)) for n, m, d, e, g in rows]


def dump_postgres(url: str, dest: Path) -> tuple[int | None, list[CorpusAt]]:
    """``pg_dump`` of the database at ``url`` into ``dest`` (custom format), with the corpora
    read under the same snapshot. BackupError when pg_dump is not installed."""
    if shutil.which(PG_DUMP) is None:
        raise BackupError("Backing up a PostgreSQL database needs pg_dump (Debian: apt-get "
                          "install postgresql-client), which is not installed here.")
    import psycopg

    parsed = make_url(url)
    libpq = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    env = {**os.environ}
    with psycopg.connect(libpq) as conn:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        snapshot = conn.execute("SELECT pg_export_snapshot()").fetchone()[0]
        result = _read_corpora(lambda sql: conn.execute(sql))
        done = subprocess.run([PG_DUMP, "--format=custom", f"--snapshot={snapshot}",
                               f"--file={dest}", f"--dbname={libpq}"], env=env,
                              capture_output=True, text=True, check=False)
        conn.execute("COMMIT")
    if done.returncode != 0:
        dest.unlink(missing_ok=True)
        raise BackupError(f"pg_dump failed: {done.stderr.strip().splitlines()[-1:]}")
    return result


def restore_postgres(dump: Path, url: str) -> None:
    """``pg_restore`` a custom-format dump into the (empty) database at ``url``."""
    if shutil.which(PG_RESTORE) is None:
        raise BackupError("Restoring a PostgreSQL backup needs pg_restore (Debian: apt-get "
                          "install postgresql-client), which is not installed here.")
    libpq = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    done = subprocess.run([PG_RESTORE, "--no-owner", "--exit-on-error", f"--dbname={libpq}",
                           str(dump)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackupError("pg_restore failed (is the target database empty?): "
                          f"{' '.join(done.stderr.strip().splitlines()[-1:])}")


def redacted(url: str) -> str:
    """A database URL without its password, for a manifest.

    Example:
        >>> redacted("postgresql+psycopg://app:secret@db:5432/search")
        'postgresql+psycopg://app:***@db:5432/search'
    """
    with contextlib.suppress(Exception):
        return make_url(url).render_as_string(hide_password=True)
    return "(unreadable URL)"


def before_upgrade(db_path: Path, backup_dir: Path, from_version: int, to_version: int) -> Path:
    """``backup_dir/before-schema-N-TIME.tar``: the database as it is, before an upgrade to
    schema ``to_version`` changes it in place (a backup archive ``searchapp restore`` reads).

    Example:
        >>> before_upgrade(db, data / "backups", 3, 4).name          # doctest: +SKIP
        'before-schema-4-20261124T101502Z.tar'
    """
    from searchapp.store import archive

    backup_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = archive.utc_stamp().replace("-", "").replace(":", "")
    dest = backup_dir / f"before-schema-{to_version}-{stamp}.tar"
    copy = backup_dir / f".{dest.stem}.{os.getpid()}.db"
    try:
        copy_sqlite(db_path, copy)
        schema, corpora = corpora_in(copy)
        archive.write(dest, [("database/searchapp.db", copy)], {
            "kind": "before-upgrade", "schema_version": schema or from_version,
            "upgrading_to": to_version,
            "source": {"database": "sqlite", "url": f"sqlite:///{db_path}"},
            "corpora": [c.as_dict() for c in corpora]})
    finally:
        copy.unlink(missing_ok=True)
    return dest
