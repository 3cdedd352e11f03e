"""Learning from a corpus' judgements (the ``learn`` job) and from its text alone (``adapt``).

``request_learning`` checks that the judgements are enough (``holdout.check``)
before any job exists, then queues a ``learn`` job that runs these steps, each
one's result saved in ``DATA_DIR/work/learn/NAME/`` so that a worker killed at
any point resumes with the next step (and a training inside a step from its
last checkpoint):

1. judgements → items, split by hash into training and held-out (``holdout``);
2. training rows: every document judged relevant to a query as a triplet with
   a judged or mined hard negative under the corpus' current model, guarded
   against false negatives (``negatives``); every judged pair as it is;
3. the bi-encoder fine-tuned on them, starting from the corpus' current model:
   MultipleNegativesRankingLoss on the triplets (batches without repeated
   texts), the online contrastive loss on the judged pairs (``losses.MixedLoss``
   when there are both);
4. with few judgements (``augment``), Augmented SBERT: a cross-encoder trained
   on the same judgements labels candidate pairs, a second bi-encoder trains on
   gold and silver, and it is kept only if measurably better than the first on
   a part of the training judgements both left out (``DEV_FRACTION``);
5. the model saved as ``models/NAME`` with its card;
6. the current and the new model evaluated side by side on the held-out
   judgements (``verdict``): better, worse or not distinguishable, with the
   duplicate threshold the new model would need (``thresholds``).

The corpus is not switched: ``adoption.accept`` does that when the user says so.
``request_adaptation`` queues ``adapt``: unsupervised SimCSE on the corpus'
texts (``simcse``), then step 6 on all the corpus' judgements when it has any
(none were trained on), and "not measured" when it has none.

Example:
    >>> started = request_learning(app, "faq", name="faq-v2")        # doctest: +SKIP
    >>> started.describe()                                           # doctest: +SKIP
    'Training on 412 judgements, 98 held out to judge the result.'
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from searchapp.base.private_files import replace_private
from searchapp.context import App
from searchapp.embedding.models import model_path, read_card, write_card
from searchapp.errors import JobError, ModelError, TrainingDataError
from searchapp.evaluation.enough import items_shortfall
from searchapp.evaluation.judged import Items, JudgedPair, JudgedQuery, from_judgements
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.store import repo
from searchapp.training import holdout
from searchapp.training.job_payloads import AdaptPayload, LearnPayload
from searchapp.training.names import check_new_model
from searchapp.training.negatives import (
    Example,
    anchors_of,
    mine_examples,
    pair_rows,
    training_data,
)
from searchapp.training.recipe import Recipe, recipe_named

log = logging.getLogger("searchapp.training")
LEARN, ADAPT = "learn", "adapt"  # the kinds' names (``job_kinds`` declares them)
AUGMENT_BELOW = 500  # "auto" tries Augmented SBERT below this many positive training judgements
AUGMENT_CHOICES = ("auto", "on", "off")
DEV_FRACTION = 0.2  # of the training judgements, left out to decide on augmentation
DEV_SEED = "searchapp-augment-dev-v1"
MIN_STEPS = 60  # few judgements: enough epochs for about this many steps (at most MAX_EPOCHS)
MAX_EPOCHS = 10
HYPER = ("epochs", "batch_size", "lr", "seed", "max_steps", "checkpoint_every")
STEP_NAMES = {"items": "Reading the judgements", "mine": "Mining hard negatives",
              "gold": "Fine-tuning on the judgements", "cross": "Training the cross-encoder",
              "silver": "Labelling candidate pairs with the cross-encoder",
              "augmented": "Fine-tuning on judged and cross-encoder-labelled pairs",
              "choose": "Checking whether augmentation helped",
              "final": "Training the final model on every judgement",
              "verdict": "Judging the new model against the current one"}


@dataclass
class Started:
    """What ``request_learning`` queued: the job and how the judgements were split."""

    job_id: int
    train: dict
    held_out: dict
    augment: bool

    def describe(self) -> str:
        text = (f"Training on {self.train['judgements']} judgements ({self.train['queries']} "
                f"queries, {self.train['pairs']} pairs); {self.held_out['judgements']} held out "
                f"({self.held_out['queries']} queries, {self.held_out['pairs']} pairs) to judge "
                "the result" + ("; Augmented SBERT will be tried (a fifth of the training "
                                "judgements decides whether it is kept)." if self.augment
                                else "."))
        return text


def work_folder(app: App, name: str) -> Path:
    """Where a learning job for model ``name`` keeps its steps' results."""
    return app.settings.work_dir / "learn" / name


def corpus_items(app: App, corpus: str) -> Items:
    """The corpus' judgements as evaluation items (``searchapp.evaluation.judged``)."""
    from searchapp.judgements.service import list_judgements

    return from_judgements(list_judgements(app, corpus))


def _counts(items: Items) -> dict:
    return {"judgements": items.judgements, "queries": len(items.queries),
            "pairs": len(items.pairs)}


def _positives(items: Items) -> int:
    return sum(len(q.relevant) for q in items.queries) + sum(p.label for p in items.pairs)


def _checked_hyper(hyper: dict) -> dict:
    """The training settings given (None: the default), each known and in its range."""
    from searchapp.training.trainer import TrainConfig

    unknown = set(hyper) - set(HYPER)
    if unknown:
        raise JobError(f"Unknown setting(s) {sorted(unknown)}; known: {', '.join(HYPER)}.")
    hyper = {k: v for k, v in hyper.items() if v is not None}
    TrainConfig(**hyper).check()
    return hyper


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
    hyper = _checked_hyper(hyper)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    if queue.active_for(app.db, LEARN, "corpus", state.name):
        raise JobError(f"Corpus {state.name!r} already has a learning job queued or running.")
    train, held = holdout.split(corpus_items(app, state.name))
    holdout.check(train)
    check_verdict_possible(held)
    augmenting = augment == "on" or (augment == "auto" and _positives(train) < AUGMENT_BELOW)
    shutil.rmtree(work_folder(app, name), ignore_errors=True)  # an earlier failed job's
    job_id = submit(app.db, LearnPayload(
        state.name, name, state.model_name, augment=augmenting, hyper=hyper,
        recipe=chosen.as_dict(), train_on_all=bool(train_on_all)))
    return Started(job_id, _counts(train), _counts(held), augmenting)


def check_verdict_possible(held: Items) -> None:
    """Refuse, before any job, held-out judgements that cannot give a verdict on the new
    model (the job would train for minutes, then say "not distinguishable": too few).

    The rule is the comparison's own (``evaluation.enough``), so the request and the
    verdict never disagree.

    Example:
        >>> check_verdict_possible(Items(queries=[JudgedQuery("q", {"d": 1})]))
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        searchapp.errors.TrainingDataError: The held-out judgements cannot give a verdict ...
    """
    short = items_shortfall(held)
    if short is None:
        return
    raise TrainingDataError(
        f"The held-out judgements cannot give a verdict on the new model: {short}. "
        f"A fifth of the judgements is held out to measure it (by a hash of each query or "
        f"pair): judge more search results or pairs (the Label page proposes them), then "
        f"learn.")


# ---- the job -----------------------------------------------------------------------------
class _Steps:
    """Numbered steps with their results kept as JSON files in the work folder."""

    def __init__(self, ctx, folder: Path, names: list[str]):
        self.ctx, self.folder, self.names = ctx, folder, names

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def done(self, key: str) -> dict | None:
        path = self.path(key)
        return json.loads(path.read_text("utf-8")) if path.is_file() else None

    def save(self, key: str, value: dict) -> dict:
        replace_private(self.path(key), lambda tmp: tmp.write_text(json.dumps(value), "utf-8"))
        return value

    def reporter(self, key: str, unit: str, log_every: float = 10.0):
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


def _items_json(items: Items) -> dict:
    return {"queries": [[q.query, q.grades] for q in items.queries],
            "pairs": [[p.a, p.b, p.label] for p in items.pairs],
            "skipped": items.skipped_queries}


def _items_from(data: dict) -> Items:
    return Items([JudgedQuery(q, {d: int(g) for d, g in grades.items()})
                  for q, grades in data["queries"]],
                 [JudgedPair(a, b, int(label)) for a, b, label in data["pairs"]],
                 data.get("skipped", 0))


def _finished(card: dict, job_id: int) -> bool:
    """Whether this job already saved its model with a verdict (it was killed after that)."""
    return card.get("job_id") == job_id and "verdict" in card


def _work_folder_made(app: App, name: str) -> Path:
    """The job's work folder (its steps' saved results), made when missing."""
    folder = work_folder(app, name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def learn_task(ctx, payload: LearnPayload) -> dict:
    """The ``learn`` job (see the module docstring); resumes step by step after a kill."""
    app, name, corpus = ctx.app, payload.name, payload.corpus
    done_card = read_card(app.settings.models_dir / name)
    if _finished(done_card, ctx.job_id):  # killed after its last step
        return _summary(done_card, app.settings.models_dir / name)
    folder = _work_folder_made(app, name)
    keys = ["items", "mine", "gold"]
    if payload.augment:
        keys += ["cross", "silver", "augmented", "choose"]
    keys.append("verdict")
    if payload.train_on_all:
        keys.append("final")
    steps = _Steps(ctx, folder, keys)
    clock = {"started": time.monotonic()}
    split = steps.done("items") or steps.save("items", _split_items(app, corpus,
                                                                    payload.augment))
    steps.reporter("items", "judgements")(1, 1, f"{split['counts']['train']['judgements']} to "
                                               "train on, "
                                               f"{split['counts']['held']['judgements']} held out")
    train_items, held_items = _items_from(split["train"]), _items_from(split["held"])
    recipe = recipe_named(payload.recipe)  # "before": a job queued before recipes
    mined = steps.done("mine") or steps.save("mine", _mine(app, corpus, payload.base,
                                                           train_items,
                                                           steps.reporter("mine", "anchors"),
                                                           recipe))
    examples = [Example(**e) for e in mined["examples"]]
    hyper = payload.hyper
    _lap(clock, "items_and_mine")
    gold = _train_step(app, steps, "gold", payload.base, examples, hyper, recipe=recipe)
    _lap(clock, "train")
    chosen, augmentation = gold, {"tried": False}
    if payload.augment:
        chosen, augmentation = _augment_steps(app, corpus, payload, steps, train_items,
                                              _items_from(split["dev"]), examples, gold, hyper)
    card = done_card if done_card.get("job_id") == ctx.job_id else _save_model(
        app, name, Path(chosen["folder"]), {
            "name": name, "job_id": ctx.job_id, "base_model": payload.base,
            "base_path": str(model_path(payload.base, app.settings)), "corpus": corpus,
            "source": "judgements", "objective": training_data(examples).objective,
            "data": {"source": f"judgements of corpus {corpus!r}",
                     "examples": len(examples), "split": split["counts"]},
            "negatives": mined["summary"], "augmentation": augmentation,
            "recipe": recipe.as_dict(),
            "hyperparameters": chosen["config"], "metrics": chosen["result"]["metrics"],
            "training": {k: chosen["result"][k] for k in ("steps", "best_step", "seconds",
                                                          "seconds_per_step", "device",
                                                          "resumed_from")}})
    problem = holdout.unmeasurable(held_items)
    fits: list = []
    if problem:
        verdict = {"verdict": "not measured", "corpus": corpus, "sentence": (
            f"{name} was not measured against {payload.base}: {problem}. Judge more "
            "(the Label page proposes pairs), then evaluate both (searchapp evaluate "
            f"--corpus {corpus} --model {name}).")}
    else:
        verdict = judge_side_by_side(app, corpus, payload.base, name, held_items,
                                     steps.reporter("verdict", "documents"),
                                     note=f"held-out judgements, learning job {ctx.job_id}",
                                     store=not payload.train_on_all,
                                     on_candidate=lambda h: fits.append(
                                         _fit_fusion(app, corpus, name, held_items, h)))
    card["verdict"] = verdict
    if fits:
        card["fusion"] = fits[0].as_dict()
    _lap(clock, "verdict")
    if payload.train_on_all and "trained_on_all" not in card:
        card["trained_on_all"] = _train_on_all(app, payload, steps, split, recipe, chosen)
        _lap(clock, "final")
    if fits:
        fits[0].store(app)  # for the corpus once it uses this model; only a kept fit
    card["step_seconds"] = {k: v for k, v in clock.items() if k not in ("started", "last")}
    write_card(app.settings.models_dir / name, card)
    shutil.rmtree(folder, ignore_errors=True)
    return _summary(card, app.settings.models_dir / name)


def _fit_fusion(app: App, corpus: str, name: str, held: Items, handle):
    """The new model's hybrid fusion fitted on the held-out judged queries only (it learned
    the training queries by heart: a fit on those would over-trust its semantic side);
    kept, as any fit, only when better on queries it was not fitted on."""
    from searchapp.evaluation.fusion_fit import fit_fusion

    return fit_fusion(app, corpus, model=name, items=Items(queries=held.queries), save=False,
                      handle=handle)


def _lap(clock: dict, key: str) -> None:
    """Seconds since the last lap, under ``key`` (the job's minutes per step)."""
    now = time.monotonic()
    clock[key] = round(now - clock.pop("last", clock["started"]), 1)
    clock["last"] = now


def _train_on_all(app: App, payload: LearnPayload, steps: _Steps, split: dict, recipe: Recipe,
                  chosen: dict) -> dict:
    """The final model trained on every judgement, held-out part included, with the same
    recipe and as many epochs as the verdict's model needed; it replaces the saved weights
    (the verdict stays the one measured before, on the model that never saw the held-out
    part)."""
    every = _items_from(split["train"])
    held = _items_from(split["held"])
    every = Items(every.queries + held.queries, every.pairs + held.pairs)
    mined = _mine(app, payload.corpus, payload.base, every,
                  steps.reporter("final", "anchors"), recipe)
    examples = [Example(**e) for e in mined["examples"]]
    config = chosen["config"]
    per_epoch = max(1, math.ceil(len(examples) / config["batch_size"]))
    epochs = max(1, math.ceil(chosen["result"]["best_step"] / per_epoch)) \
        if chosen["result"]["best_step"] else config["epochs"]
    hyper = {**payload.hyper, "epochs": epochs}
    final = train_bi_encoder(app, payload.base, examples, hyper, steps.folder / "final",
                             steps.reporter("final", "steps"), recipe=recipe)
    target = app.settings.models_dir / payload.name
    card = read_card(target)
    tmp = app.settings.models_dir / f".{payload.name}.final"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(final["folder"], tmp)
    write_card(tmp, card)
    old = app.settings.models_dir / f".{payload.name}.replaced"
    shutil.rmtree(old, ignore_errors=True)
    target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return {"examples": len(examples), "epochs": epochs, "steps": final["result"]["steps"],
            "note": "the verdict above was measured before: on the model trained without "
                    "the held-out judgements"}


def _split_items(app: App, corpus: str, augment: bool) -> dict:
    train, held = holdout.split(corpus_items(app, corpus))
    holdout.check(train)
    dev = Items()
    if augment:  # a part of the training judgements decides whether augmentation helps
        train, dev = holdout.split(train, DEV_FRACTION, DEV_SEED)
    return {"train": _items_json(train), "dev": _items_json(dev), "held": _items_json(held),
            "counts": {"train": _counts(train), "dev": _counts(dev), "held": _counts(held)}}


# ---- mining ------------------------------------------------------------------------------
class CorpusView:
    """The corpus under its current model, as the miners need it: texts, vectors, neighbours."""

    def __init__(self, app: App, corpus: str, model: str):
        from searchapp.evaluation.encoded import handle_for

        self.app, self.model = app, model
        self.handle = handle_for(app, corpus, model)
        with app.db.session() as s:
            rows = repo.document_texts(s, self.handle.corpus_id)
        self.texts = {ext: text for _, (ext, text) in rows.items()}
        self.pk = {ext: pk for pk, (ext, _) in rows.items()}
        self.ext = {pk: ext for ext, pk in self.pk.items()}

    def vectors_of(self, ids: list[str]) -> np.ndarray:
        """The model's vectors of documents by id, (n, dim) in the order given."""
        labels, matrix = self.handle.index.vectors_of([self.pk[i] for i in ids])
        row = {int(label): r for r, label in enumerate(labels.tolist())}
        return matrix[[row[self.pk[i]] for i in ids]]

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.app.encoder(self.model).encode(texts)

    def neighbours(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        labels, scores = self.handle.index.search(np.asarray(vectors, np.float32), k)
        return [[(self.ext[int(label)], float(score)) for label, score in zip(ls, ss, strict=True)
                 if int(label) in self.ext] for ls, ss in zip(labels, scores, strict=True)]

    def lexical(self, queries: list[str], k: int = 30) -> list[list[str]]:
        """Each query's ``k`` best lexical (BM25) hits, by document id."""
        from searchapp.search.service import search

        return [[h.id for h in search(self.app, self.handle, q, k=k, mode="lexical")]
                if q.strip() else [] for q in queries]

    def best_passage(self, query: np.ndarray, doc: str) -> str:
        """The document's passage nearest to ``query`` as it was encoded (with its heading),
        or its whole text when it is one passage."""
        from searchapp.embedding.passages import with_head

        pk, passages = self.pk[doc], self.handle.passages
        if passages is None or not passages.passage_counts.get(pk):
            return self.texts[doc]
        best, _ = passages.best_passages(np.asarray(query, np.float32), [pk])[pk]
        with self.app.db.session() as s:
            spans = repo.passage_spans(s, [pk]).get(pk)
            layout = repo.layouts_by_id(s, [pk]).get(pk)
        if spans is None or best >= len(spans):
            return self.texts[doc]
        a, b = (int(x) for x in spans[best])
        head = next((p[3] for p in layout or [] if len(p) > 3 and p[0] <= a < p[1]), None)
        return with_head(self.texts[doc][a:b], head)


def _mine(app: App, corpus: str, model: str, items: Items, report,
          recipe: Recipe | None = None) -> dict:
    """Query judgements → triplets with hard negatives; judged pairs → contrastive rows."""
    recipe = recipe or recipe_named("before")
    view = CorpusView(app, corpus, model)
    anchors = [a for a in anchors_of(Items(queries=items.queries)) if a.positive in view.texts]
    report(0, len(anchors), f"{len(anchors)} relevant documents")
    examples, summary = mine_examples(
        anchors, view.texts, view.vectors_of, view.encode, view.neighbours,
        report=lambda d, t: report(d, t, f"{d} of {t}"),
        lexical=view.lexical if recipe.lexical else None,
        passage_of=view.best_passage if recipe.passages else None)
    pairs = pair_rows(items, view.texts)
    report(1, 1, f"{len(examples)} triplets, {len(pairs)} judged pairs")
    return {"examples": [asdict(e) for e in examples + pairs],
            "summary": {**summary.as_dict(), "pairs": len(pairs)}}


# ---- training ----------------------------------------------------------------------------
def _config(hyper: dict, examples: int, batch_default: int = 16, lr_default: float = 2e-5,
            recipe: Recipe | None = None, device_type: str = "cpu"):
    """The trainer's settings: what the user set, else the recipe's (``cached``: large
    batches through the gradient cache, up to ``recipe.MAX_EPOCHS`` epochs stopped early),
    else about ``MIN_STEPS`` steps of batch 16."""
    from searchapp.training import recipe as recipes
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
                     report, lr_default: float = 2e-5, recipe: Recipe | None = None) -> dict:
    """Fine-tune ``base`` on the triplets (MNRL); the model saved in ``work/model``.

    Resumes from the trainer's checkpoint in ``work``. Returns {"folder", "config",
    "result"}, also saved as ``work/done.json`` (a finished training is not redone).
    """
    from searchapp.embedding.encoder import SiameseEncoder
    from searchapp.training.trainer import Trainer

    finished = work / "done.json"
    if finished.is_file():
        return json.loads(finished.read_text("utf-8"))
    data = training_data(examples)
    train_rows, dev_rows = dev_split(examples)
    encoder = SiameseEncoder.load(model_path(base, app.settings), device=app.settings.device,
                                  precision=app.settings.precision)
    config = _config(hyper, len(train_rows), lr_default=lr_default, recipe=recipe,
                     device_type=encoder.device.type)
    trainer = Trainer(encoder, data.subset(train_rows), data.subset(dev_rows), config, work,
                      progress=report)
    result = trainer.run()
    folder = work / "model"
    shutil.rmtree(folder, ignore_errors=True)
    encoder.save(folder)
    shutil.copy(trainer.history_path, folder / "training_history.json")
    trainer.clean_up()
    done = {"folder": str(folder), "config": _plain(asdict(config)), "result": result}
    finished.write_text(json.dumps(done), "utf-8")
    return done


def _plain(value):
    return json.loads(json.dumps(value, default=str))


def _train_step(app: App, steps: _Steps, key: str, base: str, examples: list[Example],
                hyper: dict, lr_default: float = 2e-5, recipe: Recipe | None = None) -> dict:
    return train_bi_encoder(app, base, examples, hyper, steps.folder / key,
                            steps.reporter(key, "steps"), lr_default, recipe)


# ---- Augmented SBERT ---------------------------------------------------------------------
def _augment_steps(app: App, corpus: str, payload: LearnPayload, steps: _Steps, train_items: Items,
                   dev_items: Items, examples: list[Example], gold: dict, hyper: dict
                   ) -> tuple[dict, dict]:
    """Cross-encoder, silver pairs, a second bi-encoder, and the choice between the two."""
    from searchapp.embedding.cross_encoder import CrossEncoder
    from searchapp.training import augment
    from searchapp.training.cross_train import CrossConfig, train

    base = payload.base
    cross_dir = steps.folder / "cross"
    if not (cross_dir / "model" / "cross_encoder.json").is_file():
        ce = CrossEncoder.from_bi_encoder(model_path(base, app.settings), app.settings.device)
        pairs = augment.gold_pairs(examples)
        config = CrossConfig(seed=hyper.get("seed") or 42, max_steps=hyper.get("max_steps"),
                             checkpoint_every=hyper.get("checkpoint_every") or 50)
        cross_result = train(ce, pairs, cross_dir, config,
                             progress=steps.reporter("cross", "steps"))
        ce.save(cross_dir / "model")
        steps.save("cross", {"pairs": len(pairs), **cross_result})
    silver = steps.done("silver")
    if silver is None:
        ce = CrossEncoder.load(cross_dir / "model", app.settings.device)
        silver = steps.save("silver", _silver(app, corpus, base, train_items, examples, ce,
                                              steps.reporter("silver", "pairs")))
    augmented = _train_step(app, steps, "augmented", base,
                            [Example(**e) for e in silver["examples"]], hyper)
    choice = steps.done("choose")
    if choice is None:
        choice = steps.save("choose", _choose(app, corpus, gold, augmented, dev_items,
                                              steps.reporter("choose", "documents")))
    info = {"tried": True, "kept": choice["kept"], "reason": choice["reason"],
            "dev": choice.get("comparison"), "silver": silver["summary"],
            "cross_encoder": steps.done("cross")}
    return (augmented if choice["kept"] else gold), info


def _silver(app: App, corpus: str, base: str, items: Items, examples: list[Example], ce,
            report) -> dict:
    import random

    from searchapp.training import augment

    view = CorpusView(app, corpus, base)
    anchors: dict[str, tuple[str, str | None]] = {}  # text → (group, document id or None)
    for q in items.queries:
        anchors.setdefault(q.query, (f"query\x1f{q.query}", None))
    for p in items.pairs:
        for d in (p.a, p.b):
            if d in view.texts:
                anchors.setdefault(view.texts[d], (f"doc\x1f{d}", d))
    others = sorted(set(view.texts) - {d for _, d in anchors.values() if d})
    for d in random.Random(7).sample(others, min(augment.EXTRA_ANCHORS, len(others))):
        anchors.setdefault(view.texts[d], (f"doc\x1f{d}", d))
    ordered = list(anchors.items())

    def candidates(rows):
        docs = [d for _, (_, d) in ordered if d is not None]
        queries = [t for t, (_, d) in ordered if d is None]
        vectors = {}
        if docs:
            vectors.update(zip(docs, view.vectors_of(docs), strict=True))
        if queries:
            vectors.update(zip(queries, view.encode(queries), strict=True))
        matrix = np.stack([vectors[d if d is not None else t] for t, (_, d) in ordered])
        near = view.neighbours(matrix, augment.SILVER_K + 1)
        return [[doc for doc, _ in n if doc != d][:augment.SILVER_K]
                for n, (_, (_, d)) in zip(near, ordered, strict=True)]

    judged = {(e.anchor, e.positive) for e in examples} | {(e.anchor, e.negative)
                                                           for e in examples}

    def score(pairs):
        return ce.predict(pairs, progress=lambda d, t: report(d, t, f"{d:,} of {t:,} pairs"))

    out, summary = augment.augment(examples, [(g, t) for t, (g, _) in ordered], candidates,
                                   view.texts, score, judged)
    return {"examples": [asdict(e) for e in out], "summary": summary.as_dict()}


def _choose(app: App, corpus: str, gold: dict, augmented: dict, dev: Items, report) -> dict:
    """Keep the augmented model only if it is better than the gold-only one on ``dev``."""
    from searchapp.embedding.encoder import SiameseEncoder
    from searchapp.evaluation.corpus import compare, evaluate
    from searchapp.evaluation.encoded import encode_corpus

    if not dev.queries and len({p.label for p in dev.pairs}) < 2:
        return {"kept": False, "reason": "too few judgements left out to tell whether "
                "augmentation helps; the model trained on the judgements alone is kept"}
    runs = []
    for trained in (gold, augmented):
        name = str(Path(trained["folder"]))
        encoder = SiameseEncoder.load(name, device=app.settings.device,
                                      precision=app.settings.precision)
        try:  # judged pairs alone need only their documents' vectors
            only = dev.documents() if not dev.queries else None
            handle = encode_corpus(app, corpus, name, report, encoder=encoder, only=only)
            runs.append(evaluate(app, handle, dev))
        finally:
            app.forget_encoder(name)
    comparison = compare(*runs)
    kept = comparison.verdict == "better"
    return {"kept": kept, "comparison": comparison.as_dict(),
            "reason": ("augmentation measurably helped on the judgements left out of training"
                       if kept else f"augmented against judgements alone: "
                                    f"{comparison.verdict} on the judgements left out of "
                                    "training, so the simpler model is kept")}


# ---- saving and judging ------------------------------------------------------------------
def _save_model(app: App, name: str, folder: Path, card: dict) -> dict:
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


def judge_side_by_side(app: App, corpus: str, current: str, candidate: str, items: Items,
                       report, note: str = "", store: bool = True,
                       on_candidate=None) -> dict:
    """Both models on the same judged items: metrics with intervals, verdict, threshold.

    Both evaluations are saved as evaluation runs of the corpus (the Evaluate
    page's history), with ``note``. ``store``: the candidate's vectors of the corpus,
    computed for the verdict anyway, are saved, so adopting it re-embeds nothing.
    ``on_candidate(handle)``: called with the corpus opened with the candidate (the
    learning job fits the candidate's hybrid fusion on it).
    """
    from searchapp.evaluation.corpus import compare, evaluate
    from searchapp.evaluation.encoded import handle_for
    from searchapp.judgements.service import save_evaluation_run
    from searchapp.training.adoption import threshold_proposal

    current_handle = handle_for(app, corpus, current)
    candidate_handle = handle_for(app, corpus, candidate, progress=report, store=store)
    runs = [evaluate(app, current_handle, items), evaluate(app, candidate_handle, items)]
    if on_candidate is not None:
        on_candidate(candidate_handle)
    comparison = compare(*runs)
    threshold = threshold_proposal(app, current, current_handle, candidate_handle, runs)
    for run in runs:
        save_evaluation_run(app, corpus, run.model, run.as_dict(), run.judgements, note)
    return {"verdict": comparison.verdict, "sentence": comparison.sentence(),
            "comparison": comparison.as_dict(), "current": runs[0].as_dict(),
            "candidate": runs[1].as_dict(), "threshold": threshold, "corpus": corpus}


def _summary(card: dict, path: Path) -> dict:
    verdict = card.get("verdict", {})
    return {"model": card["name"], "path": str(path), "corpus": card.get("corpus"),
            "verdict": verdict.get("verdict"), "sentence": verdict.get("sentence"),
            "comparison": verdict.get("comparison"), "threshold": verdict.get("threshold"),
            "augmentation": card.get("augmentation"), "negatives": card.get("negatives"),
            "metrics": card.get("metrics"), "recipe": card.get("recipe"),
            "step_seconds": card.get("step_seconds"),
            "trained_on_all": card.get("trained_on_all"), "fusion": card.get("fusion"),
            **card.get("training", {})}


# ---- unsupervised adaptation -------------------------------------------------------------
def request_adaptation(app: App, corpus: str, *, name: str, **hyper) -> int:
    """Queue the ``adapt`` job: unsupervised SimCSE on the corpus' texts, from its model.

    Example:
        >>> request_adaptation(app, "faq", name="faq-simcse", max_steps=200)  # doctest: +SKIP
        7
    """

    check_new_model(app, name)
    hyper = _checked_hyper(hyper)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    if state.documents < 64:
        raise TrainingDataError(f"Corpus {state.name!r} has {state.documents} documents; an "
                                "adaptation to its text needs at least 64.")
    shutil.rmtree(work_folder(app, name), ignore_errors=True)
    return submit(app.db, AdaptPayload(state.name, name, state.model_name, hyper))


def adapt_task(ctx, payload: AdaptPayload) -> dict:
    """The ``adapt`` job: SimCSE on the corpus' text, then judged on its judgements if any."""
    from searchapp.training.simcse import BATCH, LR, simcse_data
    from searchapp.training.trainer import Trainer

    app, name, corpus = ctx.app, payload.name, payload.corpus
    done_card = read_card(app.settings.models_dir / name)
    if _finished(done_card, ctx.job_id):  # killed after its last step
        return _summary(done_card, app.settings.models_dir / name)
    folder = _work_folder_made(app, name)
    steps = _Steps(ctx, folder, ["gold", "verdict"])
    hyper = {"batch_size": BATCH, "epochs": 1, **payload.hyper}
    trained = (folder / "gold" / "done.json")
    if trained.is_file():
        done = json.loads(trained.read_text("utf-8"))
    else:
        from searchapp.embedding.encoder import SiameseEncoder

        with app.db.session() as s:
            state = repo.corpus_state(s, corpus)
            texts = [t for _, batch in repo.iter_texts(s, state.id) for t in batch]
        data = simcse_data(texts, seed=hyper.get("seed") or 42)
        config = _config(hyper, len(data), batch_default=BATCH, lr_default=LR)
        encoder = SiameseEncoder.load(model_path(payload.base, app.settings),
                                      device=app.settings.device,
                                      precision=app.settings.precision)
        work = folder / "gold"
        trainer = Trainer(encoder, data, data.subset(list(range(min(64, len(data))))), config,
                          work, progress=steps.reporter("gold", "steps"))
        result = trainer.run()
        encoder.save(work / "model")
        trainer.clean_up()
        done = {"folder": str(work / "model"), "config": _plain(asdict(config)),
                "result": result, "sentences": len(data)}
        trained.write_text(json.dumps(done), "utf-8")
    card = done_card if done_card.get("job_id") == ctx.job_id else _save_model(
        app, name, Path(done["folder"]), {
            "name": name, "job_id": ctx.job_id, "base_model": payload.base,
            "base_path": str(model_path(payload.base, app.settings)), "corpus": corpus,
            "source": "corpus text", "objective": "simcse",
            "data": {"source": f"texts of corpus {corpus!r} (unsupervised SimCSE)",
                     "kind": "pairs", "examples": done.get("sentences")},
            "hyperparameters": done["config"], "metrics": done["result"]["metrics"],
            "training": {k: done["result"][k] for k in ("steps", "best_step", "seconds",
                                                        "seconds_per_step", "device",
                                                        "resumed_from")}})
    items = corpus_items(app, corpus)
    measurable = items.queries or len({p.label for p in items.pairs}) == 2
    if measurable:
        card["verdict"] = judge_side_by_side(app, corpus, payload.base, name, items,
                                             steps.reporter("verdict", "documents"),
                                             note=f"all judgements, adaptation job {ctx.job_id}")
    else:
        card["verdict"] = {"verdict": "not measured", "corpus": corpus, "sentence": (
            f"{name} was not measured: corpus {corpus!r} has no judgements to measure it on. "
            "Judge some search results or pairs (the Label page), then evaluate both models "
            "(searchapp evaluate --corpus ... --model ...) before switching.")}
    write_card(app.settings.models_dir / name, card)
    shutil.rmtree(folder, ignore_errors=True)
    return _summary(card, app.settings.models_dir / name)
