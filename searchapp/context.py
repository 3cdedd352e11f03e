"""App: settings, database, and the process-wide caches (encoders, model rows, indexes).

One App per process. While it lives, the process holds its data folder
(``data_lock``: a restore refuses a folder some process holds). The CLI and
the worker make one; the Streamlit app keeps
one in ``searchapp.web.shared`` (shared by all sessions, hence the locks). Each
cache has its own lock, per key where loading is slow, so loading a model
never holds up a search on an index that is ready.

Example:
    >>> import tempfile   # a folder of its own: another checkout's newer schema can't be in it
    >>> app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": tempfile.mkdtemp()}))
    >>> app.model_ref("all-MiniLM-L6-v2").dimension
    384
"""

from __future__ import annotations

import json
import threading
import weakref

from searchapp.base import data_lock
from searchapp.config import Settings
from searchapp.embedding.models import load_encoder, model_path
from searchapp.errors import ReadOnlyError, os_error
from searchapp.store import repo
from searchapp.store.catalog import ModelRef
from searchapp.store.db import Database
from searchapp.vectors.index_cache import IndexCache
from searchapp.vectors.memo import GenerationMemo
from searchapp.vectors.passage_index import PassageIndexCache


class App:
    """Everything a request, a command or a job needs, created once per process."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings.from_env()
        try:
            self.settings.ensure_dirs()
        except OSError as exc:  # a read-only data folder still reads; anything else is an error
            error = os_error(exc, self.settings.data_dir)
            if not isinstance(error, ReadOnlyError):
                raise (error or exc) from exc
        # the folder is ours while this App lives: a restore never replaces it under us
        if data_lock.hold(self.settings.data_dir):
            weakref.finalize(self, data_lock.release, self.settings.data_dir)
        self.db = Database(self.settings.database_url, self.settings.busy_timeout,
                           backup_dir=self.settings.backup_dir)
        self.indexes = IndexCache(self.db, self.settings.index_dir)
        self.passage_indexes = PassageIndexCache(self.db, self.settings.index_dir)
        self.memo = GenerationMemo()
        self._encoders: dict[str, object] = {}
        self._encoder_locks: dict[str, threading.Lock] = {}
        self._refs: dict[str, ModelRef] = {}
        self._guard = threading.Lock()

    # ---- models ---------------------------------------------------------------
    def encoder(self, model_name: str):
        """The loaded SiameseEncoder for a model name (loaded once, then reused)."""
        loaded = self._encoders.get(model_name)
        if loaded is not None:
            return loaded
        with self._guard:
            lock = self._encoder_locks.setdefault(model_name, threading.Lock())
        with lock:  # only callers of this model wait while it loads
            if model_name not in self._encoders:
                self._encoders[model_name] = load_encoder(model_name, self.settings)
            return self._encoders[model_name]

    def install_encoder(self, model_name: str, encoder) -> None:
        """Use ``encoder``, already loaded, for ``model_name`` instead of loading it again.

        For a process that holds a loaded encoder already (the test suite shares
        one across its Apps; a benchmark compares two Apps on one model).

        Example:
            >>> app.install_encoder("all-MiniLM-L6-v2", loaded)      # doctest: +SKIP
        """
        with self._guard:
            self._encoders[model_name] = encoder

    def forget_encoder(self, model_name: str) -> None:
        """Drop a loaded encoder (a job's candidate model it no longer needs) from the cache.

        Example:
            >>> app.forget_encoder("work/learn/v2/gold-model")        # doctest: +SKIP
        """
        with self._guard:
            self._encoders.pop(model_name, None)

    def rest(self) -> None:
        """Free what a long-lived process holds between uses: the loaded encoders, the opened
        indexes and the memos; each loads again on its next use (a model in seconds, an
        index from its file, caught up to the store). The worker calls this once it has
        been idle a while (``SEARCHAPP_WORKER_REST``), so a machine's memory is not held
        all day by a worker that embedded a corpus once in the morning.

        Example:
            >>> app.rest()                                           # doctest: +SKIP
        """
        with self._guard:
            self._encoders.clear()
        self.indexes.clear()
        self.passage_indexes.clear()
        self.memo.clear()

    @property
    def loaded_models(self) -> tuple[str, ...]:
        """The names of the models whose encoders this App has loaded (or was given)."""
        return tuple(self._encoders)

    def model_ref(self, model_name: str) -> ModelRef:
        """The model's row, registered on first use (dimension read from its config once)."""
        ref = self._refs.get(model_name)
        if ref is not None:
            return ref
        path = model_path(model_name, self.settings)
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        dimension = int(config.get("hidden_size") or config["dim"])
        with self.db.session() as s:
            if self.db.read_only and repo.find_model(s, model_name) is None:
                # a read-only database cannot register it, and holds no vector of it (id 0)
                return ModelRef(0, model_name, dimension)
            row = repo.get_or_create_model(s, model_name, dimension, path=str(path))
            ref = ModelRef(row.id, row.name, row.dimension)
        self._refs[model_name] = ref
        return ref

    # ---- indexes --------------------------------------------------------------
    def drop_indexes(self, corpus_id: int) -> None:
        """Forget and delete every index file of a corpus (it was deleted)."""
        self.indexes.forget(corpus_id, delete_files=True)
        self.passage_indexes.forget(corpus_id, delete_files=True)
        self.memo.forget(corpus_id)
