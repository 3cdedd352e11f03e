"""API keys: random secrets handed out once, stored only as their SHA-256 hash.

A key is ``sa_`` followed by 32 random bytes in base64url (256 bits from
``secrets``). Only its SHA-256 is stored, with a name, the first characters
(to tell keys apart in a list) and whether it may only read. The check hashes
what a request presents and looks the hash up (one indexed read).

Why SHA-256 and not scrypt, as for the password: a slow hash protects secrets
people choose, which can be guessed from a list; a 256-bit random key cannot be
guessed: trying 10^12 hashes a second for the age of the universe covers about
2^88 of its 2^256 values. A slow hash would add nothing but 0.1 s and 32 MiB to
every API request. A stolen database therefore opens nothing either.

Example:
    >>> import tempfile
    >>> from searchapp.config import Settings
    >>> from searchapp.context import App
    >>> app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": tempfile.mkdtemp()}))
    >>> made = create(app.db, "helpdesk", read_only=True)
    >>> made.key.startswith("sa_"), len(made.key)
    (True, 46)
    >>> check(app.db, made.key).name, check(app.db, made.key + "x")
    ('helpdesk', None)
    >>> revoke(app.db, "helpdesk").name, check(app.db, made.key)
    ('helpdesk', None)
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import threading
import time
from dataclasses import dataclass

from searchapp.errors import AlreadyExistsError, ConflictError, InvalidParameterError, NotFoundError
from searchapp.store import api_keys
from searchapp.store.api_keys import KeyRow
from searchapp.store.db import Database

log = logging.getLogger(__name__)

KEY_PREFIX = "sa_"
KEY_BYTES = 32
SHOWN_CHARS = 10  # "sa_" and 7 characters: enough to tell keys apart, useless to an attacker
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
TOUCH_EVERY = 60.0  # seconds: "last used" is written at most this often per key


@dataclass(frozen=True)
class NewKey:
    """A key just created: its row and the key itself, shown once and never again."""

    row: KeyRow
    key: str


def hash_key(key: str) -> str:
    """The stored form of a key: SHA-256, hex.

    Example:
        >>> hash_key("sa_x")[:16]
        '51e4ed78638dd0bc'
    """
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """A key's name, if it is 1-100 letters, digits, ``.``, ``_`` or ``-`` and not only digits
    (``keys revoke 7`` means the key with id 7).

    Example:
        >>> check_name("nightly-export")
        'nightly-export'
    """
    name = (name or "").strip()
    if not NAME_RULE.fullmatch(name) or name.isdigit():
        raise InvalidParameterError(
            f"Invalid key name {name!r}: use 1-100 letters, digits, '.', '_' or '-', starting "
            "with a letter or digit and not only digits (e.g. helpdesk-form).")
    return name


def create(db: Database, name: str, read_only: bool = False) -> NewKey:
    """Make a key called ``name``; the key is in the result and nowhere else.

    Example:
        >>> create(app.db, "nightly-export").key                  # doctest: +SKIP
        'sa_Qm9vdHN0cmFwLi4u...'
    """
    name = check_name(name)
    key = KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)
    try:
        with db.session() as s:
            if api_keys.find_key(s, name) is not None:
                raise AlreadyExistsError(f"A key named {name!r} exists already; choose another "
                                         f"name or revoke it first (searchapp keys revoke "
                                         f"{name}).")
            row = api_keys.add_key(s, name, key[:SHOWN_CHARS], hash_key(key), read_only)
    except ConflictError:  # another process took the name at the same moment
        raise AlreadyExistsError(f"A key named {name!r} exists already; choose another name.") \
            from None
    log.info("API key %r created (%s)", name, "read-only" if read_only else "read-write")
    return NewKey(row, key)


def list_keys(db: Database) -> list[KeyRow]:
    """Every key (name, shown prefix, read-only, created, last used), oldest first.

    Example:
        >>> [k.name for k in list_keys(app.db)]                  # doctest: +SKIP
        ['helpdesk', 'nightly-export']
    """
    with db.session() as s:
        return api_keys.list_keys(s)


def revoke(db: Database, name_or_id: str | int) -> KeyRow:
    """Delete the key with this name (or id): requests with it are refused from now on.

    Example:
        >>> revoke(app.db, "helpdesk").name                       # doctest: +SKIP
        'helpdesk'
    """
    wanted = str(name_or_id).strip()
    with db.session() as s:
        row = api_keys.find_key(s, wanted)
        if row is None:
            names = ", ".join(k.name for k in api_keys.list_keys(s)) or "(none yet)"
            raise NotFoundError(f"No API key named {wanted!r}. Existing keys: {names}.")
        api_keys.delete_key(s, row.id)
    log.info("API key %r revoked", row.name)
    return row


def check(db: Database, key: str) -> KeyRow | None:
    """The key's row if ``key`` is a live key, else None (one indexed read, no session).

    Example:
        >>> check(app.db, "sa_not-a-key") is None                 # doctest: +SKIP
        True
    """
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    with db.reader() as conn:
        row = api_keys.key_by_hash(conn, hash_key(key))
    if row is not None:
        _touch_later(db, row.id)
    return row


def any_keys(db: Database) -> bool:
    """Whether any key exists (then every API request must carry one).

    Example:
        >>> any_keys(app.db)                                      # doctest: +SKIP
        False
    """
    with db.reader() as conn:
        return api_keys.any_key(conn)


_touched: dict[int, float] = {}
_touch_lock = threading.Lock()


def _touch_later(db: Database, key_id: int) -> None:
    """Record "last used" at most once a minute per key, in a thread of its own: a request
    never waits for a write lock another process may hold."""
    now = time.monotonic()
    with _touch_lock:
        if now - _touched.get(key_id, -TOUCH_EVERY) < TOUCH_EVERY:
            return
        _touched[key_id] = now

    def write() -> None:
        try:
            with db.session() as s:
                api_keys.touch_key(s, key_id)
        except Exception:  # a busy database delays "last used"; it never fails a request
            log.warning("could not record the use of API key %d", key_id, exc_info=True)

    threading.Thread(target=write, name="api-key-touch", daemon=True).start()
