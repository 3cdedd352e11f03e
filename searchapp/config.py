"""Settings from the environment, validated once at start.

Variables (all optional):
    SEARCHAPP_DATA_DIR      folder for the database, indexes and models (default ``data``)
    SEARCHAPP_DATABASE_URL  any SQLAlchemy URL (default SQLite at DATA_DIR/searchapp.db)
    SEARCHAPP_MODEL         default model for new corpora (default ``all-MiniLM-L6-v2``)
    SEARCHAPP_DEVICE        ``auto`` (CUDA when available), ``cpu`` or ``cuda``
    SEARCHAPP_PRECISION     ``auto`` (the fastest exact path for this CPU/GPU), ``fp32`` or
                            ``bf16`` (see ``searchapp/speed.py``)

Example:
    >>> s = Settings.from_env({"SEARCHAPP_DATA_DIR": "/tmp/x"})
    >>> s.database_url
    'sqlite:////tmp/x/searchapp.db'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from searchapp.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16")


@dataclass(frozen=True)
class Settings:
    """Where data lives and which model, device and precision to use."""

    data_dir: Path
    database_url: str
    model: str = DEFAULT_MODEL
    device: str = "auto"
    precision: str = "auto"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read and validate the ``SEARCHAPP_*`` variables."""
        env = os.environ if env is None else env
        data_dir = Path(env.get("SEARCHAPP_DATA_DIR", "") or "data").expanduser().resolve()
        if data_dir.exists() and not data_dir.is_dir():
            raise ConfigError(f"SEARCHAPP_DATA_DIR={data_dir} is a file; point it at a folder.")
        url = env.get("SEARCHAPP_DATABASE_URL", "") or f"sqlite:///{data_dir / 'searchapp.db'}"
        if "://" not in url:
            raise ConfigError(
                f"SEARCHAPP_DATABASE_URL={url!r} is not a SQLAlchemy URL; "
                "use e.g. sqlite:///path/to/file.db or postgresql://user@host/db."
            )
        device = (env.get("SEARCHAPP_DEVICE", "") or "auto").lower()
        if device not in DEVICES:
            raise ConfigError(
                f"SEARCHAPP_DEVICE={device!r} is not valid; use one of: {', '.join(DEVICES)}."
            )
        precision = (env.get("SEARCHAPP_PRECISION", "") or "auto").lower()
        if precision not in PRECISIONS:
            raise ConfigError(
                f"SEARCHAPP_PRECISION={precision!r} is not valid; use one of: "
                f"{', '.join(PRECISIONS)}."
            )
        model = env.get("SEARCHAPP_MODEL", "") or DEFAULT_MODEL
        return cls(data_dir=data_dir, database_url=url, model=model, device=device,
                   precision=precision)

    @property
    def models_dir(self) -> Path:
        """Fine-tuned and user-added models: ``DATA_DIR/models/NAME``."""
        return self.data_dir / "models"

    @property
    def index_dir(self) -> Path:
        """HNSW index files, one per (corpus, model)."""
        return self.data_dir / "indexes"

    @property
    def work_dir(self) -> Path:
        """Scratch space for jobs (checkpoints, uploads waiting for a job)."""
        return self.data_dir / "work"

    def ensure_dirs(self) -> None:
        """Create the data folders (idempotent)."""
        for d in (self.data_dir, self.models_dir, self.index_dir, self.work_dir):
            d.mkdir(parents=True, exist_ok=True)
