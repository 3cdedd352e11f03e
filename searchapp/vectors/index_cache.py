"""The indexes of one process: one VectorIndex per (corpus, model), kept at the corpus' generation.

``IndexCache.get(corpus_id, model, generation)`` is the whole contract:

- the cached index is at ``generation`` already → returned as it is (a dict
  lookup: the search path does no other work);
- it is older → brought forward with what the database wrote after its
  generation (tombstoned documents deleted, newer vectors added): work
  proportional to the change, never to the corpus;
- none is cached → the file is loaded and brought forward the same way; a
  missing, corrupt or foreign file (another corpus or model, a generation the
  database never reached) is rebuilt from the stored vectors, never trusted.

A writer that has just stored a batch passes its vectors to ``advance`` so
the index takes them without reading them back. Each (corpus, model) has its
own lock: catching up one corpus never blocks searches of another, and two
threads never catch up the same index twice.

Example:
    >>> cache = IndexCache(app.db, app.settings.index_dir)          # doctest: +SKIP
    >>> index, generation = cache.get(corpus_id, model, generation)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from searchapp.errors import IndexCorruptError, os_error
from searchapp.store import repo
from searchapp.store.db import Database
from searchapp.vectors.index import VectorIndex

log = logging.getLogger("searchapp.vectors.index")
SAVE_AFTER_SECONDS = 2.0  # a catch-up that took longer is worth keeping on disk


@dataclass(frozen=True)
class IndexKey:
    corpus_id: int
    model_id: int


@dataclass
class _Entry:
    index: VectorIndex
    generation: int
    saved_generation: int = -1
    lock: threading.Lock = field(default_factory=threading.Lock)


class IndexCache:
    """Indexes by (corpus, model) for one process; see the module docstring."""

    suffix = ""  # file name: c{corpus}-m{model}{suffix}.hnsw
    index_class: type[VectorIndex] = VectorIndex

    def __init__(self, db: Database, index_dir: Path):
        self.db = db
        self.index_dir = Path(index_dir)
        self._entries: dict[IndexKey, _Entry] = {}
        self._locks: dict[IndexKey, threading.Lock] = {}
        self._current: dict[str, IndexKey] = {}  # corpus name -> the key it was last opened at
        self._guard = threading.Lock()  # protects the dicts, never held during I/O

    # ---- files -------------------------------------------------------------------
    def path(self, key: IndexKey) -> Path:
        return self.index_dir / f"c{key.corpus_id}-m{key.model_id}{self.suffix}.hnsw"

    def _expect(self, key: IndexKey, dimension: int) -> dict:
        return {"corpus_id": key.corpus_id, "model_id": key.model_id, "dimension": dimension}

    # ---- reading -----------------------------------------------------------------
    def get(self, corpus_id: int, model, generation: int | None = None
            ) -> tuple[VectorIndex, int]:
        """The index of (corpus, model) at ``generation`` or later, and the generation it is at.

        ``model`` is anything with ``id`` and ``dimension`` (a ``ModelRef``);
        ``generation=None`` asks the database for the current one.
        """
        key = IndexKey(corpus_id, model.id)
        entry = self._entries.get(key)
        if entry is not None and generation is not None and entry.generation >= generation:
            return entry.index, entry.generation
        with self._key_lock(key):
            entry = self._entries.get(key) or self._open(key, model.dimension)
            started = time.monotonic()
            changed = self._catch_up(key, entry, model.dimension)
            with self._guard:
                self._entries[key] = entry
            if changed and time.monotonic() - started > SAVE_AFTER_SECONDS:
                self._save(key, entry, model)
            return entry.index, entry.generation

    def _key_lock(self, key: IndexKey) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def _open(self, key: IndexKey, dimension: int) -> _Entry:
        """The saved file as an entry at its generation, or an empty one at generation 0."""
        path = self.path(key)
        try:
            index = self.index_class.load(path, self._expect(key, dimension))
            generation = int(index.meta.get("generation", -1))
            if generation < 0:
                raise IndexCorruptError(f"{path}: no generation in its metadata.")
            return _Entry(index, generation, saved_generation=generation)
        except IndexCorruptError as exc:
            if path.exists():
                log.warning("rebuilding index %s: %s", path.name, exc)
            return _Entry(self.index_class(dimension), 0)

    def _catch_up(self, key: IndexKey, entry: _Entry, dimension: int) -> bool:
        """Apply what the database wrote after ``entry.generation``; True if anything changed.

        One session, so on SQLite (WAL) every read sees the same snapshot; on
        databases with per-statement snapshots a change newer than the generation
        read first may be applied too, which is harmless (adding and deleting a
        label are idempotent) and picked up again next time.
        """
        with self.db.session() as s:
            now = repo.current_generation(s, key.corpus_id)
            if now == entry.generation:
                return False
            if now < entry.generation:  # a file from a database that never got this far
                log.warning("index %s is at generation %s, the database at %s: rebuilding",
                            self.path(key).name, entry.generation, now)
                entry.index, entry.generation = self.index_class(dimension), 0
            self._apply_changes(s, key, entry, dimension)
            entry.generation = now
        return True

    def _apply_changes(self, s, key: IndexKey, entry: _Entry, dimension: int) -> None:
        """Tombstoned documents out, vectors written after the entry's generation in."""
        entry.index.delete(repo.removed_since(s, key.corpus_id, entry.generation))
        for ids, vectors in repo.embeddings_since(s, key.corpus_id, key.model_id,
                                                  entry.generation, dimension):
            entry.index.add(ids, vectors)

    # ---- writing -----------------------------------------------------------------
    def advance(self, corpus_id: int, model, generation: int, ids,
                vectors: np.ndarray) -> VectorIndex:
        """Add a batch just stored at ``generation``; catch up instead if anything else changed.

        The embed job calls this after each committed batch: when the cached index
        was at ``generation - 1`` the batch is the whole difference, so it is
        added as it is, without reading the vectors back.
        """
        key = IndexKey(corpus_id, model.id)
        with self._key_lock(key):
            entry = self._entries.get(key)
            if entry is not None and entry.generation == generation - 1:
                entry.index.add(np.asarray(ids, dtype=np.int64), vectors)
                entry.generation = generation
                return entry.index
        return self.get(corpus_id, model, generation)[0]

    def save(self, corpus_id: int, model) -> float:
        """Write the cached index of (corpus, model) to its file; returns the seconds it took.

        Best effort, as the file is a cache of the database: a folder that cannot
        take it (read-only, full disk) is logged, the index stays in memory and the
        next process rebuilds it from the stored vectors.
        """
        key = IndexKey(corpus_id, model.id)
        with self._key_lock(key):
            entry = self._entries.get(key)
            if entry is None or entry.saved_generation == entry.generation:
                return 0.0
            started = time.monotonic()
            self._save(key, entry, model)
            return time.monotonic() - started

    def _save(self, key: IndexKey, entry: _Entry, model) -> None:
        meta = {**self._expect(key, model.dimension), "model": getattr(model, "name", ""),
                "generation": entry.generation}
        try:
            entry.index.save(self.path(key), meta)
        except OSError as exc:
            log.warning("index %s not saved (%s); it is rebuilt from the database when "
                        "needed", self.path(key).name, os_error(exc, self.index_dir) or exc)
            return
        entry.saved_generation = entry.generation

    def forget(self, corpus_id: int, delete_files: bool = False) -> None:
        """Drop a corpus' cached indexes (all models), and their files if asked."""
        with self._guard:
            for key in [k for k in self._entries if k.corpus_id == corpus_id]:
                del self._entries[key]
        if delete_files:
            for f in self.index_dir.glob(f"c{corpus_id}-m*"):
                f.unlink(missing_ok=True)

    def clear(self) -> None:
        """Drop every cached index (their files stay: the next use loads and catches up)."""
        with self._guard:
            self._entries.clear()
            self._current.clear()

    def opened(self, name: str, corpus_id: int, model_id: int) -> None:
        """Note that ``name`` is now (corpus_id, model_id): drop what it was before.

        A corpus deleted and created again under the same name gets a new id, and
        a corpus switched to another model uses another index; the old index is
        never asked for again, so it is freed here instead of waiting for a restart.
        """
        key = IndexKey(corpus_id, model_id)
        if self._current.get(name) == key:
            return
        with self._guard:
            old = self._current.get(name)
            self._current[name] = key
            if old is not None and old != key:
                self._entries.pop(old, None)

    def cached_generation(self, corpus_id: int, model_id: int) -> int | None:
        entry = self._entries.get(IndexKey(corpus_id, model_id))
        return None if entry is None else entry.generation

