"""Numbered schema migrations.

A new database gets the current schema from the ORM and is stamped with
``SCHEMA_VERSION``. An older one runs each ``MIGRATIONS[v]`` for v above its
stamp, in order, inside one transaction. To change the schema: edit
``schema.py``, bump ``SCHEMA_VERSION`` and add the step that brings a database of
the previous version to it (e.g. ``ALTER TABLE ... ADD COLUMN``).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, inspect, select

from searchapp.errors import ConfigError
from searchapp.store.schema import SCHEMA_VERSION, Base, SchemaInfo

# version -> step that brings a database of version-1 to version
MIGRATIONS: dict[int, Callable[[Connection], None]] = {}


def current_version(conn: Connection) -> int | None:
    """The stamped version, or None for a database without our tables."""
    if not inspect(conn).has_table(SchemaInfo.__tablename__):
        return None
    return conn.execute(select(SchemaInfo.version)).scalar()


def migrate(conn: Connection) -> int:
    """Bring the database to SCHEMA_VERSION; return the version it ends at."""
    version = current_version(conn)
    if version is None:
        Base.metadata.create_all(conn)
        conn.execute(SchemaInfo.__table__.insert().values(id=1, version=SCHEMA_VERSION))
        return SCHEMA_VERSION
    if version > SCHEMA_VERSION:
        raise ConfigError(
            f"The database is at schema version {version}, newer than this searchapp "
            f"({SCHEMA_VERSION}). Upgrade searchapp or point SEARCHAPP_DATABASE_URL elsewhere."
        )
    for step in range(version + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[step](conn)
        conn.execute(SchemaInfo.__table__.update().values(version=step))
    return SCHEMA_VERSION
