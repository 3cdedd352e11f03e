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
"""

from __future__ import annotations

from sqlalchemy import Connection, inspect, select

from searchapp.errors import ConfigError
from searchapp.store import fulltext  # noqa: F401 - registers the full-text DDL with create_all
from searchapp.store.schema import SCHEMA_VERSION, Base, SchemaInfo
from searchapp.store.upgrades import UPGRADES, PerCorpus


def _expand(statements: list[str | PerCorpus], corpus_ids) -> list[str]:
    """Plain SQL: each ``PerCorpus`` statement once per corpus id (``corpus_ids()``, read when
    reached, after the statements before it ran).

    Example:
        >>> _expand(["A", PerCorpus("B {corpus}")], lambda: [3, 5])
        ['A', 'B 3', 'B 5']
    """
    out: list[str] = []
    for sql in statements:
        if isinstance(sql, PerCorpus):
            out += [sql.sql.format(corpus=int(i)) for i in corpus_ids()]
        else:
            out.append(sql)
    return out


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


def _statements(dialect: str, version: int) -> list[str | PerCorpus]:
    """The SQL that brings a database of ``version`` to SCHEMA_VERSION."""
    out = []
    for step in range(version + 1, SCHEMA_VERSION + 1):
        if dialect not in UPGRADES[step]:
            raise ConfigError(
                f"No upgrade of schema version {step - 1} to {step} for {dialect}; "
                f"known: {', '.join(sorted(UPGRADES[step]))}. Start from a new database.")
        out += UPGRADES[step][dialect]
    return out


def migrate(conn: Connection) -> int:
    """Bring the database to SCHEMA_VERSION; return the version it ends at.

    ``conn`` must not be inside a transaction: this manages its own.
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
        _migrate_sqlite(conn)
    else:
        with conn.begin():
            version = current_version(conn)  # another process may have done it meanwhile
            for sql in _statements(conn.dialect.name, version):
                for one in _expand([sql], lambda: [r[0] for r in conn.exec_driver_sql(
                        "SELECT id FROM corpora ORDER BY id")]):
                    conn.exec_driver_sql(one)
            conn.execute(SchemaInfo.__table__.update().values(version=SCHEMA_VERSION))
    return SCHEMA_VERSION


def _migrate_sqlite(conn: Connection) -> None:
    raw = conn.connection.dbapi_connection
    saved_level = raw.isolation_level
    raw.isolation_level = None  # we issue BEGIN / COMMIT ourselves
    cur = raw.cursor()
    try:
        cur.execute("PRAGMA foreign_keys=OFF")
        cur.execute("BEGIN IMMEDIATE")  # one writer: a second process waits, then sees v2
        try:
            version = cur.execute("SELECT version FROM schema_info").fetchone()[0]
            for sql in _statements("sqlite", version):
                for one in _expand([sql], lambda: [r[0] for r in cur.execute(
                        "SELECT id FROM corpora ORDER BY id").fetchall()]):
                    cur.execute(one)
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
