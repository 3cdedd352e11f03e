"""The skeleton the ``learn`` and ``adapt`` jobs share: resumable steps, then one saved model.

Both jobs train a model from a corpus, save it as ``models/NAME`` with its card,
then judge it and write the verdict on the card. ``run_model_job`` runs that
skeleton once for both; the job itself says only what differs (a ``ModelJob``):
its steps (``keys``), how it trains (``train``), what its card says
(``card_fields``) and how it is judged (``judge``).

Each step's result is a JSON file in ``DATA_DIR/work/learn/NAME/`` (``Steps``), so
a worker killed at any point resumes with the next step; a job killed after it
saved its model uses that model (and its card) instead of saving again, and one
killed after its verdict returns the card's summary at once.

Example:
    >>> run_model_job(ctx, payload, MyJob())                        # doctest: +SKIP
    {'model': 'faq-v2', 'verdict': 'better', ...}
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from searchapp.base.private_files import replace_private
from searchapp.context import App
from searchapp.embedding.models import model_path, read_card, write_card
from searchapp.jobs.tasks import TaskContext
from searchapp.training.card import finished, new_card, save_model, summary
from searchapp.training.job_payloads import AdaptPayload, LearnPayload

log = logging.getLogger("searchapp.training")
STEP_NAMES = {"items": "Reading the judgements", "mine": "Mining hard negatives",
              "gold": "Fine-tuning on the judgements", "cross": "Training the cross-encoder",
              "silver": "Labelling candidate pairs with the cross-encoder",
              "augmented": "Fine-tuning on judged and cross-encoder-labelled pairs",
              "choose": "Checking whether augmentation helped",
              "final": "Training the final model on every judgement",
              "verdict": "Judging the new model against the current one"}
Report = Callable[..., None]  # progress(done, total, message="")


def work_folder(app: App, name: str) -> Path:
    """Where a learning job for model ``name`` keeps its steps' results."""
    return app.settings.work_dir / "learn" / name


class Steps:
    """Numbered steps with their results kept as JSON files in the work folder."""

    def __init__(self, ctx: TaskContext, folder: Path, names: list[str]):
        self.ctx, self.folder, self.names = ctx, folder, names

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def done(self, key: str) -> dict | None:
        """Step ``key``'s saved result, or None when it has not run to its end."""
        path = self.path(key)
        return json.loads(path.read_text("utf-8")) if path.is_file() else None

    def save(self, key: str, value: dict) -> dict:
        """Keep ``value`` as step ``key``'s result (written whole or not at all)."""
        replace_private(self.path(key), lambda tmp: tmp.write_text(json.dumps(value), "utf-8"))
        return value

    def reporter(self, key: str, unit: str, log_every: float = 10.0) -> Report:
        """``progress(done, total, message)`` for step ``key``: "Step k of K: ...", its unit.

        Also a log line every ``log_every`` seconds (``searchapp finetune --wait`` shows them).
        """
        number = self.names.index(key) + 1
        head = f"Step {number} of {len(self.names)}: {STEP_NAMES[key]}"
        last = [0.0]

        def report(done: int, total: int, message: str = "") -> None:
            text = f"{head} · {message}" if message else head
            if time.monotonic() - last[0] > log_every or done == total:
                log.info("job %s: %s", self.ctx.job_id, text)
                last[0] = time.monotonic()
            self.ctx.progress(done, total, text, force=done == 0 or done == total, unit=unit)

        return report


class ModelJob(Protocol):
    """What one job that trains a model says to ``run_model_job``."""

    keys: list[str]  # its steps, in order (``STEP_NAMES``)

    def train(self, steps: Steps) -> Path:
        """Run (or resume) the training steps; the trained model's folder."""

    def card_fields(self) -> dict:
        """The card's own part of this job (after name, job, base model and corpus)."""

    def judge(self, steps: Steps, card: dict) -> None:
        """The steps after the model was saved: the verdict (and more) added to ``card``."""


def run_model_job(ctx: TaskContext, payload: LearnPayload | AdaptPayload,
                  job: ModelJob) -> dict:
    """Train, save ``models/NAME`` with its card, judge, write the card; the job's summary.

    Resumes where a killed run of the same job stopped (see the module docstring);
    the work folder is removed once the card holds the verdict.
    """
    app, name = ctx.app, payload.name
    target = app.settings.models_dir / name
    done_card = read_card(target)
    if finished(done_card, ctx.job_id):  # killed after its last step
        return summary(done_card, target)
    folder = work_folder(app, name)
    folder.mkdir(parents=True, exist_ok=True)
    steps = Steps(ctx, folder, job.keys)
    trained = job.train(steps)
    if done_card.get("job_id") == ctx.job_id:  # killed after saving it
        card = done_card
    else:
        card = save_model(app, name, trained, new_card(
            ctx.job_id, name, payload.base, str(model_path(payload.base, app.settings)),
            payload.corpus, job.card_fields()))
    job.judge(steps, card)
    write_card(target, card)
    shutil.rmtree(folder, ignore_errors=True)
    return summary(card, target)
