"""Numbered schema migrations.

A new database gets the current schema from the ORM and is stamped with
``SCHEMA_VERSION``. An older one runs the SQL of each ``UPGRADES[v]`` (see
``upgrades.py``) for v above its stamp, in order, all in one transaction: a
failure leaves the database as it was. To change the schema: edit
``schema.py``, bump ``SCHEMA_VERSION`` and add the frozen SQL that brings a
database of the previous version to it.

SQLite cannot change some things in place (AUTOINCREMENT, NOT NULL foreign
keys), so its upgrades rebuild tables; that needs foreign keys off (or dropping
a parent table would cascade into its children) and an explicit transaction
(Python's sqlite3 commits DDL on its own otherwise). ``PRAGMA
foreign_key_check`` must come back clean before the commit.

Before a SQLite file is upgraded in place, a backup of it as it is goes to
``backup_dir/before-schema-N-TIME.tar`` (``store/snapshot.py``; ``searchapp
restore`` reads it): taken inside the upgrade's write lock, so no other
process changes the file between the copy and the upgrade.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, inspect, select, text
from sqlalchemy.exc import DBAPIError

from searchapp.errors import ConfigError, ForeignDatabaseError, SchemaTooNewError, StorageError
from searchapp.store import fulltext  # noqa: F401 - registers the full-text DDL with create_all
from searchapp.store.schema import SCHEMA_VERSION, Base, SchemaInfo
from searchapp.store.upgrades import UPGRADES, Derived, PerCorpus


def _expand(statements: list[str | PerCorpus | Derived], corpus_ids) -> list[str | Derived]:
    """Plain SQL: each ``PerCorpus`` statement once per corpus id (``corpus_ids()``, read when
    reached, after the statements before it ran).

    Example:
        >>> _expand(["A", PerCorpus("B {corpus}")], lambda: [3, 5])
        ['A', 'B 3', 'B 5']
    """
    out: list[str | Derived] = []
    for sql in statements:
        if isinstance(sql, PerCorpus):
            out += [sql.sql.format(corpus=int(i)) for i in corpus_ids()]
        else:
            out.append(sql)
    return out


SCHEMA_LOCK_KEY = 0x5EA2C4  # PostgreSQL advisory lock taken while the schema changes


def current_version(conn: Connection) -> int | None:
    """The stamped version, or None for a database without our tables.

    A ``schema_info`` table without one whole-number version (another program's
    database) is refused: nothing is created in it.
    """
    if not inspect(conn).has_table(SchemaInfo.__tablename__):
        return None
    try:
        versions = conn.execute(select(SchemaInfo.version)).scalars().all()
    except DBAPIError:
        versions = []
    if len(versions) != 1 or isinstance(versions[0], bool) or not isinstance(versions[0], int):
        raise ForeignDatabaseError(conn.engine.url.render_as_string(hide_password=True))
    return versions[0]


def _refuse_newer(version: int) -> None:
    if version > SCHEMA_VERSION:
        raise SchemaTooNewError(version, SCHEMA_VERSION)


def _statements(dialect: str, version: int) -> list[str | PerCorpus | Derived]:
    """The SQL that brings a database of ``version`` to SCHEMA_VERSION."""
    out = []
    for step in range(version + 1, SCHEMA_VERSION + 1):
        if dialect not in UPGRADES[step]:
            raise ConfigError(
                f"No upgrade of schema version {step - 1} to {step} for {dialect}; "
                f"known: {', '.join(sorted(UPGRADES[step]))}. Start from a new database.")
        out += UPGRADES[step][dialect]
    return out


def migrate(conn: Connection, read_only: bool = False, backup_dir: Path | None = None) -> int:
    """Bring the database to SCHEMA_VERSION; return the version it ends at.

    ``conn`` must not be inside a transaction: this manages its own. Several
    processes may start on one new database at once: the schema is created (or
    upgraded) under the database's write lock (SQLite ``BEGIN IMMEDIATE``,
    PostgreSQL an advisory lock), so the others wait, then find it made.
    ``read_only``: nothing is created or upgraded; a database that would need it
    is refused with a message saying so. A SQLite file is backed up to ``backup_dir``
    (default: ``backups/`` beside it) before an upgrade.
    """
    version = current_version(conn)
    conn.rollback()  # end the read's transaction: the change below takes the lock first
    if version is not None:
        _refuse_newer(version)
    if version == SCHEMA_VERSION:
        return version
    if read_only:
        raise StorageError(
            "The database " + ("has no searchapp tables yet" if version is None else
                               f"is at schema version {version} and needs an upgrade to "
                               f"{SCHEMA_VERSION}") +
            ", which a read-only data folder cannot take. Run searchapp once with write access "
            "to the folder.")
    if conn.dialect.name == "sqlite":
        _migrate_sqlite(conn, backup_dir)
        return SCHEMA_VERSION
    with conn.begin():
        if conn.dialect.name == "postgresql":  # one migrating process at a time
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
        version = current_version(conn)  # another process may have done it meanwhile
        if version is None:
            _create(conn)
            return SCHEMA_VERSION
        _refuse_newer(version)
        for sql in _statements(conn.dialect.name, version):
            for one in _expand([sql], lambda: [r[0] for r in conn.exec_driver_sql(
                    "SELECT id FROM corpora ORDER BY id")]):  # ids read after what came before
                _run(conn, one, conn.exec_driver_sql)
        conn.execute(SchemaInfo.__table__.update().values(version=SCHEMA_VERSION))
    return SCHEMA_VERSION


def _run(conn: Connection, step: str | Derived, execute) -> None:
    """One upgrade step: SQL through ``execute``, a ``Derived`` fill with the connection."""
    if isinstance(step, Derived):
        step.fill(conn)
    else:
        execute(step)


def _create(conn: Connection) -> None:
    """The current schema on an empty database, stamped with SCHEMA_VERSION."""
    Base.metadata.create_all(conn)
    conn.execute(SchemaInfo.__table__.insert().values(id=1, version=SCHEMA_VERSION))


def _migrate_sqlite(conn: Connection, backup_dir: Path | None) -> None:
    """Create or upgrade a SQLite database inside one ``BEGIN IMMEDIATE`` transaction."""
    raw = conn.connection.dbapi_connection
    saved_level = raw.isolation_level
    raw.isolation_level = None  # we issue BEGIN / COMMIT ourselves
    cur = raw.cursor()
    try:
        cur.execute("PRAGMA foreign_keys=OFF")
        cur.execute("BEGIN IMMEDIATE")  # one writer: a second process waits, then sees it done
        try:
            made = cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (SchemaInfo.__tablename__,)).fetchone()
            if made is None:
                _create(conn)  # through SQLAlchemy, on this connection, in this transaction
            else:
                version = cur.execute("SELECT version FROM schema_info").fetchone()[0]
                _refuse_newer(version)
                if version < SCHEMA_VERSION:
                    _backup_first(conn, backup_dir, version)
                for sql in _statements("sqlite", version):
                    for one in _expand([sql], lambda: [r[0] for r in cur.execute(
                            "SELECT id FROM corpora ORDER BY id").fetchall()]):
                        _run(conn, one, cur.execute)  # ids read after the statements before
                cur.execute("UPDATE schema_info SET version = ?", (SCHEMA_VERSION,))
            broken = cur.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise ConfigError(
                    f"The upgrade would keep {len(broken)} rows that point to missing rows "
                    f"(first: table {broken[0][0]}, row {broken[0][1]}, missing in "
                    f"{broken[0][2]}); the database was left unchanged. Delete those rows "
                    "(sqlite3 FILE 'PRAGMA foreign_key_check' lists them) and start again.")
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        finally:
            conn.rollback()  # SQLAlchemy's view of the transaction ends too (a no-op in SQLite)
    finally:
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()
        raw.isolation_level = saved_level


def _backup_first(conn: Connection, backup_dir: Path | None, version: int) -> None:
    """The pre-upgrade backup of a SQLite file (an in-memory database has nothing to keep)."""
    from searchapp.store.snapshot import before_upgrade, sqlite_path

    path = sqlite_path(conn.engine.url.render_as_string(hide_password=False))
    if path is None:
        return
    before_upgrade(path, backup_dir or path.parent / "backups", version, SCHEMA_VERSION)
