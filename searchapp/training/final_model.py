"""The learn job's last step with ``train_on_all``: the final model on every judgement.

The verdict is measured first, on a model that never saw the held-out
judgements; then the same recipe trains on all of them, held-out part included,
for as many epochs as the verdict's model needed, and the new weights replace
the saved ones under the same card (the verdict still the one measured before).

Example:
    >>> train_on_all(app, payload, steps, split, recipe, chosen)["epochs"]  # doctest: +SKIP
    3
"""

from __future__ import annotations

import math
import shutil

from searchapp.context import App
from searchapp.embedding.models import read_card, write_card
from searchapp.evaluation.judged import Items
from searchapp.training.bi_training import train_bi_encoder
from searchapp.training.job_payloads import LearnPayload
from searchapp.training.job_steps import Steps
from searchapp.training.judged_items import items_from
from searchapp.training.mining import mine
from searchapp.training.negatives import Example
from searchapp.training.recipe import Recipe


def train_on_all(app: App, payload: LearnPayload, steps: Steps, split: dict, recipe: Recipe,
                 chosen: dict) -> dict:
    """The final model trained on every judgement, held-out part included, with the same
    recipe and as many epochs as the verdict's model needed; it replaces the saved weights
    (the verdict stays the one measured before, on the model that never saw the held-out
    part)."""
    every = items_from(split["train"])
    held = items_from(split["held"])
    every = Items(every.queries + held.queries, every.pairs + held.pairs)
    mined = mine(app, payload.corpus, payload.base, every,
                 steps.reporter("final", "anchors"), recipe)
    examples = [Example(**e) for e in mined["examples"]]
    config = chosen["config"]
    per_epoch = max(1, math.ceil(len(examples) / config["batch_size"]))
    epochs = max(1, math.ceil(chosen["result"]["best_step"] / per_epoch)) \
        if chosen["result"]["best_step"] else config["epochs"]
    hyper = {**payload.hyper, "epochs": epochs}
    final = train_bi_encoder(app, payload.base, examples, hyper, steps.folder / "final",
                             steps.reporter("final", "steps"), recipe=recipe)
    _replace_weights(app, payload.name, final["folder"])
    return {"examples": len(examples), "epochs": epochs, "steps": final["result"]["steps"],
            "note": "the verdict above was measured before: on the model trained without "
                    "the held-out judgements"}


def _replace_weights(app: App, name: str, folder: str) -> None:
    """``models/NAME`` replaced by ``folder`` with the saved card, by two renames."""
    target = app.settings.models_dir / name
    card = read_card(target)
    tmp = app.settings.models_dir / f".{name}.final"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(folder, tmp)
    write_card(tmp, card)
    old = app.settings.models_dir / f".{name}.replaced"
    shutil.rmtree(old, ignore_errors=True)
    target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)
