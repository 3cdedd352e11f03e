"""The ``finetune`` job: start it (validate, copy the data, enqueue) and run it.

``request_finetune`` checks everything a user can get wrong before any job
exists (the files, the objective, the name), then copies the training (and
dev) file into ``DATA_DIR/work/finetune/NAME/`` so the job never depends on
the user's file. The job trains in that folder (checkpoints, history.json)
and saves the result as ``DATA_DIR/models/NAME`` with a model card.

A worker that dies mid-training leaves the job "running"; the next worker
takes it over and the trainer carries on from the last checkpoint.

Example:
    >>> job = request_finetune(app, "pairs.csv", name="support-v1", epochs=4)  # doctest: +SKIP
    >>> job.data.describe()                                                 # doctest: +SKIP
    '5749 regression examples (sentence1=sentence1, ...); objective cosine; scores 0–5 ...'
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from searchapp.context import App
from searchapp.embedding.models import (
    BUNDLED,
    check_trainable,
    load_trainable,
    model_path,
    read_card,
    validate_name,
    write_card,
)
from searchapp.errors import JobError, ModelError
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.training.data import TrainingData, load_training_data, split_dev
from searchapp.training.job_payloads import FinetunePayload

log = logging.getLogger("searchapp.training")
JOB_FILE = "job.json"
HISTORY_IN_MODEL = "training_history.json"
HYPER = ("epochs", "batch_size", "lr", "seed", "evals_per_epoch", "average_decay",
         "checkpoint_every", "max_steps")


@dataclass
class Started:
    """What ``request_finetune`` did: the job, and the data as it will be trained."""

    job_id: int
    data: TrainingData
    dev: TrainingData | None


def work_folder(app: App, name: str) -> Path:
    """Where a fine-tuning job for model ``name`` keeps its data, checkpoints and history."""
    return app.settings.work_dir / "finetune" / name


def request_finetune(app: App, train: str | Path | bytes, *, name: str,
                   train_filename: str | None = None, dev: str | Path | bytes | None = None,
                   dev_filename: str | None = None, objective: str = "auto",
                   base: str | None = None, columns: dict | None = None,
                   **hyper) -> Started:
    """Validate the files and settings, copy the data into the work folder, enqueue the job.

    ``train``/``dev`` are paths or uploaded bytes (then give the filenames);
    ``hyper`` are TrainConfig fields (epochs, batch_size, lr, seed, ...).
    """
    from searchapp.training.trainer import TrainConfig

    validate_name(name)
    base = base or app.settings.model
    check_trainable(base, app.settings)  # raises with the known models listed
    if (app.settings.models_dir / name).exists():
        raise ModelError(f"A model named {name!r} already exists; choose another name.")
    if queue.active_for(app.db, "finetune", "name", name):
        raise JobError(f"A fine-tuning job for {name!r} is already queued or running.")
    unknown = set(hyper) - set(HYPER)
    if unknown:
        raise JobError(f"Unknown setting(s) {sorted(unknown)}; known: {', '.join(HYPER)}.")
    hyper = {k: v for k, v in hyper.items() if v is not None}
    batch = TrainConfig(**hyper).check().batch_size
    train_raw, train_filename = _raw(train, train_filename)
    data = load_training_data(train_raw, train_filename, objective=objective, columns=columns,
                              batch_size=batch)
    dev_data = dev_raw = None
    if dev is not None:
        dev_raw, dev_filename = _raw(dev, dev_filename)
        dev_data = load_dev(dev_raw, dev_filename, data, columns)
    folder = work_folder(app, name)
    shutil.rmtree(folder, ignore_errors=True)  # leftovers of an earlier failed job
    folder.mkdir(parents=True)
    payload = FinetunePayload(name, base, data.objective,
                              _copy(train_raw, train_filename, folder, "train"), train_filename,
                              columns=columns, dev_filename=dev_filename, hyper=hyper)
    if dev_raw is not None:
        payload.dev = _copy(dev_raw, dev_filename, folder, "dev")
    return Started(submit(app.db, payload), data, dev_data)


def load_dev(raw: bytes | str | Path, filename: str | None, train: TrainingData,
             columns: dict | None = None) -> TrainingData:
    """A dev file read like the training file: same objective, scaling and classes."""
    return load_training_data(raw, filename, objective=train.objective, columns=columns,
                              batch_size=2, score_range=train.score_range,
                              classes=train.classes)


def finetune(ctx, payload: FinetunePayload) -> dict:
    """The job: train, save ``models/NAME`` with its card, return the metrics."""
    from searchapp.training.trainer import TrainConfig, Trainer

    app, name = ctx.app, payload.name
    done = read_card(app.settings.models_dir / name)
    if done.get("job_id") == ctx.job_id:  # saved before a crash: nothing left to do
        return _summary(done, app.settings.models_dir / name)
    folder = work_folder(app, name)
    _claim_folder(folder, ctx.job_id)
    hyper = TrainConfig(**payload.hyper)
    data = load_training_data(payload.train, payload.train_filename,
                              objective=payload.objective, columns=payload.columns,
                              batch_size=hyper.batch_size)
    if payload.dev:
        train, dev = data, load_dev(payload.dev, payload.dev_filename, data, payload.columns)
        dev_source = payload.dev_filename
    else:
        train, dev = split_dev(data, 0.1, hyper.seed)
        dev_source = f"10% of {payload.train_filename} held out"
    base_path = model_path(payload.base, app.settings)
    encoder = load_trainable(base_path, app.settings)  # a USE model too (its table frozen)
    ctx.progress(0, 1, f"Evaluating {payload.base} on the dev set before training",
                 force=True)
    trainer = Trainer(encoder, train, dev, hyper, folder, progress=_reporter(ctx))
    result = trainer.run()
    card = {"name": name, "job_id": ctx.job_id, "base_model": payload.base,
            "base_path": str(base_path),
            "objective": train.objective, "data": train.to_card(),
            "dev": {"source": dev_source, "examples": len(dev)},
            "hyperparameters": asdict(hyper) | {"warmup": "linear", "optimizer": "AdamW"},
            "metrics": result["metrics"],
            "training": {k: result[k] for k in ("steps", "best_step", "seconds",
                                                "seconds_per_step", "device", "resumed_from")}}
    target = _save_model(app, encoder, name, card, trainer.history_path)
    trainer.clean_up()
    ctx.progress(result["steps"], result["steps"], f"Saved model {name}", force=True)
    return _summary(card, target)


def _summary(card: dict, path: Path) -> dict:
    return {"model": card["name"], "path": str(path), "objective": card["objective"],
            "metrics": card["metrics"], **card["training"]}


def _reporter(ctx, every_seconds: float = 10.0):
    """ctx.progress for every step, and a log line every ``every_seconds`` (CLI --wait)."""
    last = [0.0]

    def report(done: int, total: int, message: str) -> None:
        now = time.monotonic()
        if now - last[0] > every_seconds or done == total:
            log.info("job %s: %s", ctx.job_id, message)
            last[0] = now
        ctx.progress(done, total, message)

    return report


def training_history(app: App, name: str) -> dict | None:
    """The per-step history (loss, lr, dev metrics) of a model's training, if any."""
    for path in (work_folder(app, name) / "history.json",
                 app.settings.models_dir / name / HISTORY_IN_MODEL):
        if path.is_file():
            try:
                return json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:  # caught mid-write on a platform without atomic rename
                return None
    return None


def _raw(source, filename: str | None) -> tuple[bytes | Path, str]:
    if isinstance(source, bytes):
        return source, filename or "upload.csv"
    path = Path(source)
    return path, filename or path.name


def _copy(raw: bytes | Path, filename: str, folder: Path, stem: str) -> str:
    """Copy the user's file into the job's folder, keeping its extension(s)."""
    suffix = "".join(Path(filename).suffixes) or ".csv"
    target = folder / f"{stem}{suffix}"
    if isinstance(raw, bytes):
        target.write_bytes(raw)
    else:
        shutil.copyfile(raw, target)
    return str(target)


def _claim_folder(folder: Path, job_id: int) -> None:
    """Mark the folder as this job's; a different job's checkpoint there is not resumed."""
    from searchapp.training.trainer import BEST, CHECKPOINT, LEGACY

    marker = folder / JOB_FILE
    if marker.is_file() and json.loads(marker.read_text()).get("job_id") != job_id:
        for f in (CHECKPOINT, BEST, *LEGACY, "history.json"):
            (folder / f).unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"job_id": job_id}), encoding="utf-8")


def _save_model(app: App, encoder, name: str, card: dict, history: Path) -> Path:
    """Save weights, card and history into a temporary folder, then rename it into place.

    The rename is the one moment the model appears, complete with the card that
    names this job: a worker killed before it trains again from the last
    checkpoint, one killed after it finds the card and returns.
    """
    target = app.settings.models_dir / name
    if name in BUNDLED or target.exists():
        raise ModelError(f"A model named {name!r} already exists; it was not overwritten.")
    tmp = app.settings.models_dir / f".{name}.saving"
    shutil.rmtree(tmp, ignore_errors=True)
    encoder.save(tmp)
    shutil.copy(history, tmp / HISTORY_IN_MODEL)
    write_card(tmp, card)
    tmp.rename(target)
    return target
