"""Learning from a corpus' judgements: the ``learn`` job, requested and run.

``request_learning`` reads what the judgements allow (``learning_plan``) before
any job exists. From 5 judged queries, too few to fine-tune, it queues the
``fit-fusion`` job instead (``evaluation.fusion_fit``: each query judged by a fit
on the others, kept only when the gain is shown); with fewer it refuses, saying
what is needed. With enough to fine-tune it queues a ``learn`` job that runs these steps, each
one's result saved in ``DATA_DIR/work/learn/NAME/`` so that a worker killed at
any point resumes with the next step (and a training inside a step from its
last checkpoint; the skeleton is ``job_steps.run_model_job``):

1. judgements → items, split by hash into training and held-out (``holdout``);
2. training rows: every document judged relevant to a query as a triplet with
   a judged or mined hard negative under the corpus' current model, guarded
   against false negatives (``mining``, ``negatives``); every judged pair as it is;
3. the bi-encoder fine-tuned on them, starting from the corpus' current model
   (``bi_training``): MultipleNegativesRankingLoss on the triplets (batches
   without repeated texts), the online contrastive loss on the judged pairs
   (``losses.MixedLoss`` when there are both);
4. with few judgements, Augmented SBERT (``augment_steps``): a cross-encoder
   trained on the same judgements labels candidate pairs, a second bi-encoder
   trains on gold and silver, and it is kept only if measurably better than the
   first on a part of the training judgements both left out (``DEV_FRACTION``);
5. the model saved as ``models/NAME`` with its card (``card``);
6. the current and the new model evaluated side by side on the held-out
   judgements (``verdict``): better, worse or not distinguishable, with the
   duplicate threshold the new model would need (``thresholds``); with
   ``train_on_all``, then the final model trained on every judgement (``final_model``).

The corpus is not switched: ``adoption.accept`` does that when the user says so.

Example:
    >>> started = request_learning(app, "faq", name="faq-v2")        # doctest: +SKIP
    >>> started.describe()                                           # doctest: +SKIP
    'Training on 412 judgements, 98 held out to judge the result.'
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from searchapp.context import App
from searchapp.embedding.models import check_trainable, refusal
from searchapp.errors import JobError, TrainingDataError
from searchapp.evaluation.fusion_fit import request_fusion_fit
from searchapp.evaluation.judged import Items
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.jobs.tasks import TaskContext
from searchapp.store import repo
from searchapp.training import holdout
from searchapp.training.augment_steps import augment_steps
from searchapp.training.bi_training import checked_hyper, train_step
from searchapp.training.card import trained_fields
from searchapp.training.final_model import train_on_all
from searchapp.training.job_payloads import LearnPayload
from searchapp.training.job_steps import Steps, run_model_job, work_folder
from searchapp.training.judged_items import (
    corpus_items,
    counts,
    items_from,
    items_json,
    positives,
)
from searchapp.training.learning_plan import plan_for
from searchapp.training.mining import mine
from searchapp.training.names import check_new_model
from searchapp.training.negatives import Example, training_data
from searchapp.training.recipe import recipe_named
from searchapp.training.verdict import (
    check_verdict_possible,
    fit_fusion_on_held_out,
    judge_side_by_side,
)

LEARN = "learn"  # the kind's name (``job_kinds`` declares it)
AUGMENT_BELOW = 500  # "auto" tries Augmented SBERT below this many positive training judgements
AUGMENT_CHOICES = ("auto", "on", "off")
DEV_FRACTION = 0.2  # of the training judgements, left out to decide on augmentation
DEV_SEED = "searchapp-augment-dev-v1"


@dataclass
class Started:
    """What ``request_learning`` queued: the job and how the judgements were split."""

    job_id: int
    train: dict
    held_out: dict
    augment: bool
    route: str = "finetune"  # or "fusion": too few judgements to fine-tune (learning_plan)
    plan: list[str] = field(default_factory=list)  # what more judgements would buy

    def describe(self) -> str:
        if self.route == "fusion":
            return ("Too few judgements to fine-tune, so hybrid search's fusion is fitted to "
                    f"the {self.train['queries']} judged queries instead (fit-fusion job "
                    f"{self.job_id}): each query is judged by a fit on the others, and the "
                    "fit is kept only when that shows a gain.")
        text = (f"Training on {self.train['judgements']} judgements ({self.train['queries']} "
                f"queries, {self.train['pairs']} pairs); {self.held_out['judgements']} held out "
                f"({self.held_out['queries']} queries, {self.held_out['pairs']} pairs) to judge "
                "the result" + ("; Augmented SBERT will be tried (a fifth of the training "
                                "judgements decides whether it is kept)." if self.augment
                                else "."))
        return text


def request_learning(app: App, corpus: str, *, name: str, augment: str = "auto",
                     recipe: str | None = None, train_on_all: bool = False,
                     **hyper) -> Started:
    """Check the corpus' judgements and the name, then queue the ``learn`` job.

    ``recipe``: the levers (``training.recipe``; None: the default, every lever);
    ``train_on_all``: after the verdict, train the final model on every judgement
    (the held-out part included) with the same recipe and steps; the verdict stays
    the one measured on the held-out part. ``hyper``: epochs, batch_size, lr, seed,
    max_steps (None: the defaults).
    """
    chosen = recipe_named(recipe)

    check_new_model(app, name)
    if augment not in AUGMENT_CHOICES:
        raise TrainingDataError(f"augment must be one of {', '.join(AUGMENT_CHOICES)}; "
                                f"got {augment!r}.")
    hyper = checked_hyper(hyper)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    check_trainable(state.model_name, app.settings, LEARN)
    if augment == "on":
        check_trainable(state.model_name, app.settings, "augment")
    if queue.active_for(app.db, LEARN, "corpus", state.name):
        raise JobError(f"Corpus {state.name!r} already has a learning job queued or running.")
    items = corpus_items(app, state.name)
    plan = plan_for(items)
    if plan.route is None and plan.train_positives < holdout.MIN_TRAIN_EXAMPLES:
        raise TrainingDataError(plan.refusal())  # else the held-out part says why below
    if plan.route == "fusion":
        job_id = request_fusion_fit(app, state.name, state.model_name)
        return Started(job_id, counts(items), {}, False, "fusion", plan.lines())
    train, held = holdout.split(items)
    holdout.check(train)
    check_verdict_possible(held)
    augmenting = augment == "on" or (augment == "auto" and positives(train) < AUGMENT_BELOW
                                     and not refusal(state.model_name, app.settings, "augment"))
    shutil.rmtree(work_folder(app, name), ignore_errors=True)  # an earlier failed job's
    job_id = submit(app.db, LearnPayload(
        state.name, name, state.model_name, augment=augmenting, hyper=hyper,
        recipe=chosen.as_dict(), train_on_all=bool(train_on_all)))
    return Started(job_id, counts(train), counts(held), augmenting, plan=plan.lines())


def learn_task(ctx: TaskContext, payload: LearnPayload) -> dict:
    """The ``learn`` job (see the module docstring); resumes step by step after a kill."""
    return run_model_job(ctx, payload, _Learning(ctx, payload))


def lap(clock: dict, key: str) -> None:
    """Seconds since the last lap, under ``key`` (the job's minutes per step)."""
    now = time.monotonic()
    clock[key] = round(now - clock.pop("last", clock["started"]), 1)
    clock["last"] = now


def split_items(app: App, corpus: str, augment: bool) -> dict:
    """Step 1: the judgements split into training, dev (when augmenting) and held-out."""
    train, held = holdout.split(corpus_items(app, corpus))
    holdout.check(train)
    dev = Items()
    if augment:  # a part of the training judgements decides whether augmentation helps
        train, dev = holdout.split(train, DEV_FRACTION, DEV_SEED)
    return {"train": items_json(train), "dev": items_json(dev), "held": items_json(held),
            "counts": {"train": counts(train), "dev": counts(dev), "held": counts(held)}}


class _Learning:
    """The learn job's part of ``run_model_job``: its steps, training, card and verdict."""

    def __init__(self, ctx: TaskContext, payload: LearnPayload):
        self.ctx, self.app, self.payload = ctx, ctx.app, payload
        self.keys = ["items", "mine", "gold"]
        if payload.augment:
            self.keys += ["cross", "silver", "augmented", "choose"]
        self.keys.append("verdict")
        if payload.train_on_all:
            self.keys.append("final")
        self.recipe = recipe_named(payload.recipe)  # "before": a job queued before recipes

    def train(self, steps: Steps) -> Path:
        """Steps 1 to 4; the chosen training's model folder."""
        app, payload, corpus = self.app, self.payload, self.payload.corpus
        self.clock = {"started": time.monotonic()}
        self.split = steps.done("items") or steps.save(
            "items", split_items(app, corpus, payload.augment))
        held = self.split["counts"]["held"]["judgements"]
        steps.reporter("items", "judgements")(
            1, 1, f"{self.split['counts']['train']['judgements']} to train on, {held} held out")
        train_items = items_from(self.split["train"])
        self.held_items = items_from(self.split["held"])
        self.mined = steps.done("mine") or steps.save("mine", mine(
            app, corpus, payload.base, train_items, steps.reporter("mine", "anchors"),
            self.recipe))
        self.examples = [Example(**e) for e in self.mined["examples"]]
        lap(self.clock, "items_and_mine")
        gold = train_step(app, steps, "gold", payload.base, self.examples, payload.hyper,
                          recipe=self.recipe)
        lap(self.clock, "train")
        self.chosen, self.augmentation = gold, {"tried": False}
        if payload.augment:
            self.chosen, self.augmentation = augment_steps(
                app, corpus, payload, steps, train_items, items_from(self.split["dev"]),
                self.examples, gold, payload.hyper)
        return Path(self.chosen["folder"])

    def card_fields(self) -> dict:
        corpus, chosen = self.payload.corpus, self.chosen
        return {"source": "judgements", "objective": training_data(self.examples).objective,
                "data": {"source": f"judgements of corpus {corpus!r}",
                         "examples": len(self.examples), "split": self.split["counts"]},
                "negatives": self.mined["summary"], "augmentation": self.augmentation,
                "recipe": self.recipe.as_dict(), **trained_fields(chosen)}

    def judge(self, steps: Steps, card: dict) -> None:
        """Step 6 (and the final model): the verdict, the fitted fusion, step times."""
        app, payload, ctx = self.app, self.payload, self.ctx
        corpus, name, held = payload.corpus, payload.name, self.held_items
        problem = holdout.unmeasurable(held)
        fits: list = []
        if problem:
            verdict = {"verdict": "not measured", "corpus": corpus, "sentence": (
                f"{name} was not measured against {payload.base}: {problem}. Judge more "
                "(the Label page proposes pairs), then evaluate both (searchapp evaluate "
                f"--corpus {corpus} --model {name}).")}
        else:
            verdict = judge_side_by_side(
                app, corpus, payload.base, name, held, steps.reporter("verdict", "documents"),
                note=f"held-out judgements, learning job {ctx.job_id}",
                store=not payload.train_on_all,
                on_candidate=lambda h: fits.append(
                    fit_fusion_on_held_out(app, corpus, name, held, h)))
        card["verdict"] = verdict
        if fits:
            card["fusion"] = fits[0].as_dict()
        lap(self.clock, "verdict")
        if payload.train_on_all and "trained_on_all" not in card:
            card["trained_on_all"] = train_on_all(app, payload, steps, self.split, self.recipe,
                                                  self.chosen)
            lap(self.clock, "final")
        if fits:
            fits[0].store(app)  # for the corpus once it uses this model; only a kept fit
        card["step_seconds"] = {k: v for k, v in self.clock.items()
                                if k not in ("started", "last")}
