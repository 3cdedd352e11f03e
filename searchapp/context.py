"""App: settings, database, and the caches of loaded encoders and indexes.

One App per process. The CLI and the worker make one; the Streamlit app keeps
one in ``st.cache_resource`` (shared by all sessions, hence the locks).

Example:
    >>> app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": "/tmp/searchapp-doc"}))
    >>> app.model_ref("all-MiniLM-L6-v2").dimension
    384
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import numpy as np

from searchapp.config import Settings
from searchapp.errors import IndexCorruptError
from searchapp.index import VectorIndex, reconcile
from searchapp.models import load_encoder, model_path
from searchapp.store import repo
from searchapp.store.db import Database


@dataclass(frozen=True)
class ModelRef:
    """A model's database row, detached: id, name, dimension."""

    id: int
    name: str
    dimension: int


class App:
    """Everything a request, a command or a job needs, created once per process."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings.from_env()
        self.settings.ensure_dirs()
        self.db = Database(self.settings.database_url)
        self._encoders: dict[str, object] = {}
        self._indexes: dict[tuple[int, int], tuple[str, VectorIndex]] = {}
        self._lock = threading.RLock()

    # ---- models ---------------------------------------------------------------
    def encoder(self, model_name: str):
        """The loaded SiameseEncoder for a model name (loaded once, then reused)."""
        with self._lock:
            if model_name not in self._encoders:
                self._encoders[model_name] = load_encoder(model_name, self.settings)
            return self._encoders[model_name]

    def model_ref(self, model_name: str) -> ModelRef:
        """Register a model in the database on first use (dimension read from its config)."""
        path = model_path(model_name, self.settings)
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        dimension = int(config.get("hidden_size") or config["dim"])
        with self.db.session() as s:
            row = repo.get_or_create_model(s, model_name, dimension, path=str(path))
            return ModelRef(row.id, row.name, row.dimension)

    # ---- indexes --------------------------------------------------------------
    def index_path(self, corpus_id: int, model_id: int):
        return self.settings.index_dir / f"c{corpus_id}-m{model_id}.hnsw"

    def index(self, corpus_id: int, model: ModelRef) -> VectorIndex:
        """The index of (corpus, model), in step with the database's embeddings.

        Reuses the cached index while the database fingerprint is unchanged;
        otherwise loads the file and reconciles it with the database (a missing,
        stale or corrupt file is rebuilt) and saves it when it changed.
        """
        key = (corpus_id, model.id)
        with self.db.session() as s:
            fingerprint = repo.embedding_fingerprint(s, corpus_id, model.id)
        with self._lock:
            cached = self._indexes.get(key)
            if cached and cached[0] == fingerprint:
                return cached[1]
            index = self._sync(corpus_id, model, fingerprint)
            self._indexes[key] = (fingerprint, index)
            return index

    def _sync(self, corpus_id: int, model: ModelRef, fingerprint: str) -> VectorIndex:
        path = self.index_path(corpus_id, model.id)
        expect = {"corpus_id": corpus_id, "model_id": model.id, "dimension": model.dimension}
        try:
            index = VectorIndex.load(path, expect)
            if VectorIndex.stored_fingerprint(path) == fingerprint:
                return index
        except IndexCorruptError:
            index = VectorIndex(model.dimension)
        with self.db.session() as s:
            db_ids = repo.embedded_ids(s, corpus_id, model.id)

            def fetch(labels: np.ndarray) -> np.ndarray:
                return repo.vectors_for(s, model.id, labels, model.dimension)

            reconcile(index, db_ids, fetch)
        self.save_index(corpus_id, model, index, fingerprint)
        return index

    def save_index(self, corpus_id: int, model: ModelRef, index: VectorIndex,
                   fingerprint: str | None = None) -> None:
        """Write the index file and remember it as current for this fingerprint."""
        if fingerprint is None:
            with self.db.session() as s:
                fingerprint = repo.embedding_fingerprint(s, corpus_id, model.id)
        meta = {"corpus_id": corpus_id, "model_id": model.id, "model": model.name,
                "fingerprint": fingerprint}
        with self._lock:
            index.save(self.index_path(corpus_id, model.id), meta)
            self._indexes[(corpus_id, model.id)] = (fingerprint, index)

    def drop_indexes(self, corpus_id: int) -> None:
        """Forget and delete every index file of a corpus."""
        with self._lock:
            for key in [k for k in self._indexes if k[0] == corpus_id]:
                del self._indexes[key]
            for f in self.settings.index_dir.glob(f"c{corpus_id}-m*"):
                f.unlink(missing_ok=True)
