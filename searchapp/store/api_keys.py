"""The API keys table: rows by name, id or hash; the key itself is never stored.

The service (``searchapp.access.keys``) makes the keys and their hashes; this
module only stores and finds rows. A lookup is by the unique hash column: one
indexed read per API request.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     row = add_key(s, "helpdesk", "sa_Abc", "ab" * 32, read_only=True)
    ...     [k.name for k in list_keys(s)], key_by_hash(s, "ab" * 32).read_only
    (['helpdesk'], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, delete, select, update
from sqlalchemy.orm import Session

from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.schema import ApiKey, utcnow


@dataclass(frozen=True)
class KeyRow:
    """A stored key as callers see it (never the key, never its hash)."""

    id: int
    name: str
    prefix: str
    read_only: bool
    created_at: datetime
    last_used_at: datetime | None


def _row(key: ApiKey) -> KeyRow:
    return KeyRow(key.id, key.name, key.prefix, bool(key.read_only), key.created_at,
                  key.last_used_at)


def add_key(s: Session, name: str, prefix: str, key_hash: str, read_only: bool) -> KeyRow:
    """Store a new key's row (the caller checked that the name is free)."""
    key = ApiKey(name=name, prefix=prefix, key_hash=key_hash, read_only=read_only,
                 created_at=utcnow())
    s.add(key)
    s.flush()
    return _row(key)


def list_keys(s: Session) -> list[KeyRow]:
    """Every key, oldest first."""
    return [_row(k) for k in s.scalars(select(ApiKey).order_by(ApiKey.id))]


def find_key(s: Session, name_or_id: str) -> KeyRow | None:
    """The key named ``name_or_id``, else the one with that id, else None."""
    key = s.scalar(select(ApiKey).where(ApiKey.name == name_or_id))
    if key is None and name_or_id.isdigit():
        key = s.get(ApiKey, int(name_or_id))
    return None if key is None else _row(key)


def delete_key(s: Session, key_id: int) -> bool:
    """Remove a key; True when there was one."""
    return s.execute(delete(ApiKey).where(ApiKey.id == key_id)).rowcount == 1


_BY_HASH = select(ApiKey.id, ApiKey.name, ApiKey.prefix, ApiKey.read_only, ApiKey.created_at,
                  ApiKey.last_used_at)


def key_by_hash(s: Session | Connection, key_hash: str) -> KeyRow | None:
    """The key whose SHA-256 is ``key_hash``, or None. Takes a Session or a plain Connection
    (the door asks on every API request)."""
    row = s.execute(_BY_HASH.where(ApiKey.key_hash == key_hash)).first()
    return None if row is None else KeyRow(row[0], row[1], row[2], bool(row[3]), row[4], row[5])


def any_key(s: Session | Connection) -> bool:
    """Whether at least one key exists (then the API asks every request for one)."""
    return s.execute(select(ApiKey.id).limit(1)).first() is not None


def touch_key(s: Session, key_id: int, when: datetime | None = None) -> None:
    """Record that a key was used."""
    s.execute(update(ApiKey).where(ApiKey.id == key_id).values(last_used_at=when or utcnow()))
