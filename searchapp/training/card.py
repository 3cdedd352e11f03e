"""A trained model's card: made, saved with its weights as ``models/NAME``, summed up.

The learn and adapt jobs write the same card: who made the model from what
(``new_card``), what its training measured (``trained_fields``), and later the
verdict. ``save_model`` puts a trained folder in place in one rename, so a model
is either there with its card or not there; ``summary`` is the job's result.

Example:
    >>> card = new_card(7, "faq-v2", "base", "/models/base", "faq",
    ...                 {"source": "judgements"})
    >>> summary({**card, "verdict": {"verdict": "better"}}, Path("/models/faq-v2"))["verdict"]
    'better'
"""

from __future__ import annotations

import shutil
from pathlib import Path

from searchapp.context import App
from searchapp.embedding.models import write_card
from searchapp.errors import ModelError

TRAINING_KEYS = ("steps", "best_step", "seconds", "seconds_per_step", "device", "resumed_from")


def new_card(job_id: int, name: str, base: str, base_path: str, corpus: str,
             fields: dict) -> dict:
    """The card of model ``name``, trained by job ``job_id`` from ``base`` for ``corpus``:
    those first, then the job's own ``fields`` in their order."""
    return {"name": name, "job_id": job_id, "base_model": base, "base_path": base_path,
            "corpus": corpus, **fields}


def trained_fields(done: dict) -> dict:
    """A finished training's part of the card (``done``: {"config", "result"}, as the
    training steps save it): its settings, its metrics and how it went."""
    return {"hyperparameters": done["config"], "metrics": done["result"]["metrics"],
            "training": {k: done["result"][k] for k in TRAINING_KEYS}}


def finished(card: dict, job_id: int) -> bool:
    """Whether job ``job_id`` already saved its model with a verdict (it was killed after
    that)."""
    return card.get("job_id") == job_id and "verdict" in card


def save_model(app: App, name: str, folder: Path, card: dict) -> dict:
    """Copy a trained model folder to ``models/NAME`` with its card, atomically (one rename)."""
    target = app.settings.models_dir / name
    if target.exists():
        raise ModelError(f"A model named {name!r} already exists; it was not overwritten.")
    tmp = app.settings.models_dir / f".{name}.saving"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(folder, tmp)
    write_card(tmp, card)
    tmp.rename(target)
    return card


def summary(card: dict, path: Path) -> dict:
    """A learn or adapt job's result: the saved model, its verdict and how it was made."""
    verdict = card.get("verdict", {})
    return {"model": card["name"], "path": str(path), "corpus": card.get("corpus"),
            "verdict": verdict.get("verdict"), "sentence": verdict.get("sentence"),
            "comparison": verdict.get("comparison"), "threshold": verdict.get("threshold"),
            "augmentation": card.get("augmentation"), "negatives": card.get("negatives"),
            "metrics": card.get("metrics"), "recipe": card.get("recipe"),
            "step_seconds": card.get("step_seconds"),
            "trained_on_all": card.get("trained_on_all"), "fusion": card.get("fusion"),
            **card.get("training", {})}
