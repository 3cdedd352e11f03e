"""Adapting a model to a corpus' text alone: the ``adapt`` job, requested and run.

``request_adaptation`` queues ``adapt``: unsupervised SimCSE on the corpus'
texts (``simcse``), starting from its model, saved as ``models/NAME`` with its
card; then the new model judged side by side with the current one on all the
corpus' judgements when it has any (none were trained on), and "not measured"
when it has none. The skeleton (resumable steps, the card, the saved model) is
the learn job's: ``job_steps.run_model_job``.

Example:
    >>> request_adaptation(app, "faq", name="faq-simcse", max_steps=200)  # doctest: +SKIP
    7
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from searchapp.context import App
from searchapp.embedding.models import check_trainable, model_path
from searchapp.errors import TrainingDataError
from searchapp.jobs.kinds import submit
from searchapp.jobs.tasks import TaskContext
from searchapp.store import repo
from searchapp.training.bi_training import checked_hyper, plain, train_config
from searchapp.training.card import trained_fields
from searchapp.training.job_payloads import AdaptPayload
from searchapp.training.job_steps import Steps, run_model_job, work_folder
from searchapp.training.judged_items import corpus_items
from searchapp.training.names import check_new_model
from searchapp.training.simcse import BATCH, LR, simcse_data
from searchapp.training.verdict import judge_side_by_side

ADAPT = "adapt"  # the kind's name (``job_kinds`` declares it)
MIN_DOCUMENTS = 64  # fewer texts than this: too little to adapt to


def request_adaptation(app: App, corpus: str, *, name: str, **hyper) -> int:
    """Queue the ``adapt`` job: unsupervised SimCSE on the corpus' texts, from its model.

    Example:
        >>> request_adaptation(app, "faq", name="faq-simcse", max_steps=200)  # doctest: +SKIP
        7
    """
    check_new_model(app, name)
    hyper = checked_hyper(hyper)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    check_trainable(state.model_name, app.settings, ADAPT)
    if state.documents < MIN_DOCUMENTS:
        raise TrainingDataError(f"Corpus {state.name!r} has {state.documents} documents; an "
                                f"adaptation to its text needs at least {MIN_DOCUMENTS}.")
    shutil.rmtree(work_folder(app, name), ignore_errors=True)
    return submit(app.db, AdaptPayload(state.name, name, state.model_name, hyper))


def adapt_task(ctx: TaskContext, payload: AdaptPayload) -> dict:
    """The ``adapt`` job: SimCSE on the corpus' text, then judged on its judgements if any."""
    return run_model_job(ctx, payload, _Adaptation(ctx, payload))


class _Adaptation:
    """The adapt job's part of ``run_model_job``: one training step, then the verdict."""

    def __init__(self, ctx: TaskContext, payload: AdaptPayload):
        self.ctx, self.app, self.payload = ctx, ctx.app, payload
        self.keys = ["gold", "verdict"]

    def train(self, steps: Steps) -> Path:
        """SimCSE on the corpus' texts (not redone once ``gold/done.json`` is written)."""
        trained = steps.folder / "gold" / "done.json"
        if trained.is_file():
            self.done = json.loads(trained.read_text("utf-8"))
        else:
            self.done = self._simcse(steps, steps.folder / "gold")
            trained.write_text(json.dumps(self.done), "utf-8")
        return Path(self.done["folder"])

    def _simcse(self, steps: Steps, work: Path) -> dict:
        from searchapp.embedding.encoder import SiameseEncoder
        from searchapp.training.trainer import Trainer

        app, payload = self.app, self.payload
        hyper = {"batch_size": BATCH, "epochs": 1, **payload.hyper}
        with app.db.session() as s:
            state = repo.corpus_state(s, payload.corpus)
            texts = [t for _, batch in repo.iter_texts(s, state.id) for t in batch]
        data = simcse_data(texts, seed=hyper.get("seed") or 42)
        config = train_config(hyper, len(data), batch_default=BATCH, lr_default=LR)
        encoder = SiameseEncoder.load(model_path(payload.base, app.settings),
                                      device=app.settings.device,
                                      precision=app.settings.precision)
        trainer = Trainer(encoder, data, data.subset(list(range(min(64, len(data))))), config,
                          work, progress=steps.reporter("gold", "steps"))
        result = trainer.run()
        encoder.save(work / "model")
        trainer.clean_up()
        return {"folder": str(work / "model"), "config": plain(asdict(config)),
                "result": result, "sentences": len(data)}

    def card_fields(self) -> dict:
        corpus = self.payload.corpus
        return {"source": "corpus text", "objective": "simcse",
                "data": {"source": f"texts of corpus {corpus!r} (unsupervised SimCSE)",
                         "kind": "pairs", "examples": self.done.get("sentences")},
                **trained_fields(self.done)}

    def judge(self, steps: Steps, card: dict) -> None:
        """On all the corpus' judgements when they can measure it; else "not measured"."""
        app, payload, name = self.app, self.payload, self.payload.name
        corpus = payload.corpus
        items = corpus_items(app, corpus)
        measurable = items.queries or len({p.label for p in items.pairs}) == 2
        if measurable:
            card["verdict"] = judge_side_by_side(
                app, corpus, payload.base, name, items, steps.reporter("verdict", "documents"),
                note=f"all judgements, adaptation job {self.ctx.job_id}")
        else:
            card["verdict"] = {"verdict": "not measured", "corpus": corpus, "sentence": (
                f"{name} was not measured: corpus {corpus!r} has no judgements to measure it "
                "on. Judge some search results or pairs (the Label page), then evaluate both "
                "models (searchapp evaluate --corpus ... --model ...) before switching.")}
