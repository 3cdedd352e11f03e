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

from sqlalchemy import Connection, inspect, select

from searchapp.errors import ConfigError
from searchapp.store import fulltext  # noqa: F401 - registers the full-text DDL with create_all
from searchapp.store.schema import SCHEMA_VERSION, Base, SchemaInfo
from searchapp.store.upgrades import UPGRADES


def current_version(conn: Connection) -> int | None:
    """The stamped version, or None for a database without our tables."""
    if not inspect(conn).has_table(SchemaInfo.__tablename__):
        return None
    return conn.execute(select(SchemaInfo.version)).scalar()


def _refuse_newer(version: int) -> None:
    if version > SCHEMA_VERSION:
        raise ConfigError(
            f"The database is at schema version {version}, newer than this searchapp "
            f"({SCHEMA_VERSION}). Upgrade searchapp or point SEARCHAPP_DATABASE_URL elsewhere."
        )


def _statements(dialect: str, version: int) -> list[str]:
    """The SQL that brings a database of ``version`` to SCHEMA_VERSION."""
    out = []
    for step in range(version + 1, SCHEMA_VERSION + 1):
        if dialect not in UPGRADES[step]:
            raise ConfigError(
                f"No upgrade of schema version {step - 1} to {step} for {dialect}; "
                f"known: {', '.join(sorted(UPGRADES[step]))}. Start from a new database.")
        out += UPGRADES[step][dialect]
    return out


def migrate(conn: Connection, backup_dir: Path | None = None) -> int:
    """Bring the database to SCHEMA_VERSION; return the version it ends at.

    ``conn`` must not be inside a transaction: this manages its own. A SQLite file
    is backed up to ``backup_dir`` (default: ``backups/`` beside it) before an upgrade.
    """
    with conn.begin():
        version = current_version(conn)
        if version is None:
            Base.metadata.create_all(conn)
            conn.execute(SchemaInfo.__table__.insert().values(id=1, version=SCHEMA_VERSION))
            return SCHEMA_VERSION
    _refuse_newer(version)
    if version == SCHEMA_VERSION:
        return version
    if conn.dialect.name == "sqlite":
        _migrate_sqlite(conn, backup_dir)
    else:
        with conn.begin():
            version = current_version(conn)  # another process may have done it meanwhile
            for sql in _statements(conn.dialect.name, version):
                conn.exec_driver_sql(sql)
            conn.execute(SchemaInfo.__table__.update().values(version=SCHEMA_VERSION))
    return SCHEMA_VERSION


def _migrate_sqlite(conn: Connection, backup_dir: Path | None) -> None:
    raw = conn.connection.dbapi_connection
    saved_level = raw.isolation_level
    raw.isolation_level = None  # we issue BEGIN / COMMIT ourselves
    cur = raw.cursor()
    try:
        cur.execute("PRAGMA foreign_keys=OFF")
        cur.execute("BEGIN IMMEDIATE")  # one writer: a second process waits, then sees v2
        try:
            version = cur.execute("SELECT version FROM schema_info").fetchone()[0]
            if version < SCHEMA_VERSION:
                _backup_first(conn, backup_dir, version)
            for sql in _statements("sqlite", version):
                cur.execute(sql)
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
