"""The bi-encoder trained on mined triplets and judged pairs: its settings and its run.

``checked_hyper`` checks the settings a request gives, before any job;
``train_config`` fills in the rest (the recipe's, or about ``MIN_STEPS`` steps);
``dev_split`` keeps a few groups out to pick the best step; ``train_bi_encoder``
trains, resumable from the trainer's checkpoints, and is not redone once finished.
The trainer and the encoder load torch and transformers, so they are imported
when a training runs, not when a request is checked.

Example:
    >>> train_config({}, 100).epochs      # 7 batches of 16 an epoch: 9 epochs, about 60 steps
    9
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import asdict
from pathlib import Path

from searchapp.context import App
from searchapp.embedding.models import load_trainable, model_path
from searchapp.errors import JobError
from searchapp.training import holdout
from searchapp.training import recipe as recipes
from searchapp.training.job_steps import Report, Steps
from searchapp.training.negatives import Example, training_data
from searchapp.training.recipe import Recipe

MIN_STEPS = 60  # few judgements: enough epochs for about this many steps (at most MAX_EPOCHS)
MAX_EPOCHS = 10
HYPER = ("epochs", "batch_size", "lr", "seed", "max_steps", "checkpoint_every")


def checked_hyper(hyper: dict) -> dict:
    """The training settings given (None: the default), each known and in its range."""
    from searchapp.training.trainer import TrainConfig

    unknown = set(hyper) - set(HYPER)
    if unknown:
        raise JobError(f"Unknown setting(s) {sorted(unknown)}; known: {', '.join(HYPER)}.")
    hyper = {k: v for k, v in hyper.items() if v is not None}
    TrainConfig(**hyper).check()
    return hyper


def train_config(hyper: dict, examples: int, batch_default: int = 16, lr_default: float = 2e-5,
                 recipe: Recipe | None = None, device_type: str = "cpu"):
    """The trainer's settings: what the user set, else the recipe's (``cached``: large
    batches through the gradient cache, up to ``recipe.MAX_EPOCHS`` epochs stopped early),
    else about ``MIN_STEPS`` steps of batch 16."""
    from searchapp.training.trainer import TrainConfig

    cached = recipe is not None and recipe.cached
    batch = int(hyper.get("batch_size") or (recipes.BIG_BATCH if cached else batch_default))
    batch = min(batch, max(2, examples)) if cached else batch
    per_epoch = max(1, math.ceil(examples / batch))
    epochs = hyper.get("epochs") or (
        min(recipes.MAX_EPOCHS, max(1, math.ceil(recipes.MIN_TRIPLETS / max(examples, 1))))
        if cached else min(MAX_EPOCHS, max(1, math.ceil(MIN_STEPS / per_epoch))))
    return TrainConfig(epochs=int(epochs), batch_size=batch,
                       lr=hyper.get("lr") or (recipes.CACHED_LR if cached else lr_default),
                       seed=hyper.get("seed") or 42, max_steps=hyper.get("max_steps"),
                       checkpoint_every=hyper.get("checkpoint_every") or 50,
                       unique_texts=True,
                       cache_mini=recipes.cache_size(batch, 3, device_type) if cached else 0,
                       evals_per_epoch=recipes.EVALS_PER_EPOCH if cached else 1,
                       patience=recipes.PATIENCE if cached else 0).check()


def dev_split(examples: list[Example], fraction: float = 0.1) -> tuple[list[int], list[int]]:
    """(training rows, dev rows) of the triplets, by the hash of their group; dev ≥ 2 rows.

    Example:
        >>> rows = [Example(f"q{i % 20}", "p", "n", f"g{i % 20}", "mined") for i in range(60)]
        >>> train, dev = dev_split(rows)
        >>> len(train) + len(dev), len(dev) >= 2, not {rows[i].group for i in dev} & \\
        ...     {rows[i].group for i in train}
        (60, True, True)
    """
    dev = [i for i, e in enumerate(examples) if holdout.held_out(e.group, fraction, "trainer-dev")]
    if len(dev) < 2:
        groups = sorted({e.group for e in examples})[:2]
        dev = [i for i, e in enumerate(examples) if e.group in groups]
    chosen = set(dev)
    return [i for i in range(len(examples)) if i not in chosen], dev


def train_bi_encoder(app: App, base: str, examples: list[Example], hyper: dict, work: Path,
                     report: Report, lr_default: float = 2e-5,
                     recipe: Recipe | None = None) -> dict:
    """Fine-tune ``base`` on the triplets (MNRL); the model saved in ``work/model``.

    Resumes from the trainer's checkpoint in ``work``. Returns {"folder", "config",
    "result"}, also saved as ``work/done.json`` (a finished training is not redone).
    """
    from searchapp.training.trainer import Trainer

    finished = work / "done.json"
    if finished.is_file():
        return json.loads(finished.read_text("utf-8"))
    data = training_data(examples)
    train_rows, dev_rows = dev_split(examples)
    encoder = load_trainable(model_path(base, app.settings), app.settings)
    config = train_config(hyper, len(train_rows), lr_default=lr_default, recipe=recipe,
                          device_type=encoder.device.type)
    trainer = Trainer(encoder, data.subset(train_rows), data.subset(dev_rows), config, work,
                      progress=report)
    result = trainer.run()
    folder = work / "model"
    shutil.rmtree(folder, ignore_errors=True)
    encoder.save(folder)
    shutil.copy(trainer.history_path, folder / "training_history.json")
    trainer.clean_up()
    done = {"folder": str(folder), "config": plain(asdict(config)), "result": result}
    finished.write_text(json.dumps(done), "utf-8")
    return done


def train_step(app: App, steps: Steps, key: str, base: str, examples: list[Example],
               hyper: dict, lr_default: float = 2e-5, recipe: Recipe | None = None) -> dict:
    """``train_bi_encoder`` as step ``key`` of a job: its work in the step's folder."""
    return train_bi_encoder(app, base, examples, hyper, steps.folder / key,
                            steps.reporter(key, "steps"), lr_default, recipe)


def plain(value):
    """``value`` as JSON would give it back (paths and other objects as strings)."""
    return json.loads(json.dumps(value, default=str))
