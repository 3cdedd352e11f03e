"""The ids of one upload so far, kept on disk: repeats found at once, memory that stays flat.

An upload must not name an id twice (which row would win?), and a file without
an id column numbers the repeats of a text (``-2``, ``-3``, ...). Both need every
id seen so far; a set of them would grow with the file (a hundred bytes an
id). ``SeenIds`` keeps them in a private temporary SQLite database instead
(deleted when closed), one ``INSERT OR IGNORE`` per batch: when every id of the
batch is new, that is all it costs.

Example:
    >>> with SeenIds() as seen:
    ...     seen.first_repeat(["a", "b"], [2, 3]), seen.first_repeat(["c", "a"], [4, 5])
    (None, ('a', 5, 2))
    >>> with SeenIds() as seen:
    ...     seen.occurrences(["x", "y", "x"], [1, 2, 3]), seen.occurrences(["x"], [4])
    ([1, 1, 2], [3])
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


class SeenIds:
    """Ids with the number of the row that first had them (and how often each was seen)."""

    def __init__(self):
        self._db = sqlite3.connect("")  # "": a private on-disk database, gone when closed
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE seen (key TEXT PRIMARY KEY, first INTEGER NOT NULL, "
                         "n INTEGER NOT NULL) WITHOUT ROWID")

    def __enter__(self) -> SeenIds:
        return self

    def __exit__(self, *exc) -> None:
        self._db.close()

    def _insert(self, keys: Sequence[str], numbers: Sequence[int]) -> bool:
        """Record the keys not seen before; True when every one of them was new."""
        before = self._db.total_changes
        self._db.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?, 1)",
                             zip(keys, numbers, strict=True))
        return self._db.total_changes - before == len(keys)

    def _first(self, key: str) -> int:
        return self._db.execute("SELECT first FROM seen WHERE key = ?", (key,)).fetchone()[0]

    def first_repeat(self, keys: Sequence[str], numbers: Sequence[int]
                     ) -> tuple[str, int, int] | None:
        """Record ids (``numbers``: their rows, distinct); the first one seen before, as
        (id, its row, the row that had it first), or None."""
        if self._insert(keys, numbers):
            return None
        for key, number in zip(keys, numbers, strict=True):
            first = self._first(key)
            if first != number:
                return key, number, first
        return None

    def occurrences(self, keys: Sequence[str], numbers: Sequence[int]) -> list[int]:
        """For each key, how many times it has been seen, this time included (1: the first)."""
        if self._insert(keys, numbers):
            return [1] * len(keys)
        out = []
        for key, number in zip(keys, numbers, strict=True):
            if self._first(key) == number:
                out.append(1)
            else:
                out.append(self._db.execute("UPDATE seen SET n = n + 1 WHERE key = ? "
                                            "RETURNING n", (key,)).fetchone()[0])
        return out
