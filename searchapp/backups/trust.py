"""What a restore takes from a backup only after checking it itself, never because the
backup says so: the originals' bytes, and the folders its database watches.

- An original is kept under the SHA-256 of its bytes (``originals/ab/abcd...``):
  ``original_named`` recomputes nothing itself but is told the digest the archive
  reader computed from the member's bytes, and refuses a member whose bytes are not
  the hash that names it (swapped bytes with a manifest entry to match pass the
  manifest check, not this one). Run by ``restore --check`` and by restore, while
  the bytes stream, so nothing of the data folder changes for a refused archive.
- The watched folders a backup's database lists were checked on another machine (or
  planted): each is restored *paused*, its identity unknown (``RESTORED``), and listed
  in the report; ``searchapp watch resume ID`` checks it as ``watch add`` does (and,
  from the browser or the API, against ``SEARCHAPP_WATCH_ROOTS``) and records it.

Example:
    >>> digest = hashlib.sha256(b"hello").hexdigest()
    >>> original_named("b.tar", f"originals/{digest[:2]}/{digest}", digest)
    >>> original_named("b.tar", f"originals/{digest[:2]}/{'0' * 64}", digest)
    Traceback (most recent call last):
    ...
    searchapp.errors.BackupError: b.tar: originals/2c/000... holds bytes whose SHA-256 is ...
"""

from __future__ import annotations

import hashlib  # noqa: F401  (the example's)
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, text

from searchapp.errors import BackupError
from searchapp.store.watched_folders import RESTORED

ORIGINALS = "originals/"
RESUME = "resume each with `searchapp watch resume ID` after checking it"


def original_named(archive_name: str, name: str, digest: str) -> None:
    """Refuse a member under ``originals/`` whose bytes (SHA-256 ``digest``, computed from
    them) are not the hash its name gives; other members pass."""
    if not name.startswith(ORIGINALS):
        return
    if name != f"{ORIGINALS}{digest[:2]}/{digest}":
        shown = name if len(name) < 30 else f"{name[:24]}..."
        raise BackupError(f"{archive_name}: {shown} holds bytes whose SHA-256 is "
                          f"{digest[:12]}..., not the hash that names it (altered, even if "
                          "its manifest agrees); nothing was restored.")


@dataclass(frozen=True)
class Watched:
    """A watched folder a backup's database lists: its id, corpus and path."""

    id: int
    corpus: str
    path: str

    def describe(self) -> str:
        """``#3 notes: /home/ann/notes``."""
        return f"#{self.id} {self.corpus}: {self.path}"


def describe(folders: tuple[Watched, ...] | list[Watched], restored: bool) -> str | None:
    """One line naming the watched folders, or None when there are none.

    Example:
        >>> describe([Watched(3, "notes", "/home/ann/notes")], restored=True)
        '1 watched folder restored paused: #3 notes: /home/ann/notes; resume each with ...'
    """
    if not folders:
        return None
    n = len(folders)
    names = "; ".join(f.describe() for f in folders)
    what = f"{n:,} watched folder{'' if n == 1 else 's'}"
    if restored:
        return f"{what} restored paused: {names}; {RESUME}"
    return f"{what} (a restore brings them paused): {names}"


_LIST = ("SELECT w.id, c.name, w.path FROM watched_folders w JOIN corpora c "
         "ON c.id = w.corpus_id ORDER BY w.id")
_PAUSE = ("UPDATE watched_folders SET paused = :yes, device = :restored, job_id = NULL, "
          "lease_owner = NULL, lease_until = NULL")


def listed_sqlite(con: sqlite3.Connection) -> tuple[Watched, ...]:
    """The watched folders of an open SQLite database (none when its schema predates them)."""
    has = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                      "name = 'watched_folders'").fetchone()
    if not has:
        return ()
    return tuple(Watched(int(i), str(c), str(p)) for i, c, p in con.execute(_LIST))


def pause_all(url: str) -> tuple[Watched, ...]:
    """Pause every watched folder of the restored database at ``url`` (SQLite file or
    PostgreSQL), its identity unknown here; the folders paused."""
    engine = create_engine(url)
    try:
        with engine.begin() as con:
            from sqlalchemy import inspect

            if not inspect(con).has_table("watched_folders"):
                return ()
            found = tuple(Watched(int(i), str(c), str(p)) for i, c, p in con.execute(text(_LIST)))
            con.execute(text(_PAUSE), {"yes": True, "restored": RESTORED})
    finally:
        engine.dispose()
    return found


def sqlite_url(path: Path) -> str:
    """``sqlite:///...`` of a database file."""
    return f"sqlite:///{Path(path)}"
