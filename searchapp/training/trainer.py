"""The siamese training loop: paper defaults, dev evaluation, checkpoints that resume.

Defaults are the Sentence-BERT paper's: batch 16, AdamW with lr 2e-5, a linear
warm-up over the first 10% of the steps then linear decay, 1 epoch (4 for
STS-sized data). Gradients are clipped to norm 1; on CUDA the forward pass
runs under bf16 autocast (the same code runs in float32 on the CPU).

All texts of a batch (both sides of every pair) go through the same encoder:
one network, shared weights. They are grouped by length into forward passes of
``batch_size`` texts each, so that little compute goes to padding.

The dev set is evaluated before training, after each epoch (or more often with
``evals_per_epoch``) and at the end; the best state is kept and is what the
trainer leaves in the encoder. Every ``checkpoint_every`` steps the whole state
(weights, optimiser, schedule, RNG, step, history) is written to ``work_dir``,
and a new Trainer on the same ``work_dir`` carries on from the last checkpoint.
Checkpoints are safetensors plus JSON (``searchapp.embedding.checkpoint``), never
pickles: a file planted in the work folder cannot run code when resumed from.

Example:
    >>> trainer = Trainer(encoder, train, dev, TrainConfig(epochs=4), work_dir)  # doctest: +SKIP
    >>> result = trainer.run()                                                   # doctest: +SKIP
    >>> result["metrics"]["after"]["spearman"]                                   # doctest: +SKIP
    86.9
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from searchapp.base.private_files import replace_private
from searchapp.embedding import checkpoint
from searchapp.errors import CheckpointError, InvalidParameterError, TrainingDataError
from searchapp.evaluation.metrics import encode_pairs, pair_metrics, retrieval_metrics, sts_metrics
from searchapp.training.averaging import WeightAverage
from searchapp.training.batching import unique_text_order
from searchapp.training.data import TrainingData
from searchapp.training.losses import MIXED, PAPER_CONCAT, SCORED_OBJECTIVES, make_loss

CHECKPOINT = "checkpoint.safetensors"
BEST = "best.safetensors"
LEGACY = ("checkpoint.pt", "best.pt")  # pickles of older versions: never read, removed
HISTORY = "history.json"
PRIMARY_METRIC = {**dict.fromkeys(SCORED_OBJECTIVES, "spearman"), "contrastive": "ap",
                  "softmax": "accuracy", "triplet": "accuracy", "mnrl": "mrr@10",
                  MIXED: "dev"}
Progress = Callable[[int, int, str], None]


@dataclass
class TrainConfig:
    """Hyper-parameters; the defaults are the paper's."""

    epochs: int = 1
    batch_size: int = 16
    lr: float = 2e-5
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    seed: int = 42
    checkpoint_every: int = 200  # steps
    evals_per_epoch: int = 1
    average_decay: float = 0.0  # > 0: evaluate and keep a moving average of the weights
    max_steps: int | None = None  # stop early (benchmarks, tests)
    concat: tuple[str, ...] = PAPER_CONCAT  # softmax feature parts
    history_every_seconds: float = 2.0  # how often history.json is rewritten
    unique_texts: bool = False  # no text twice in a batch (in-batch negatives; see batching)
    cache_mini: int = 0  # > 0: gradient cache (MNRL), forward passes of this many texts
    patience: int = 0  # > 0: stop after this many dev evaluations without a gain

    def check(self) -> TrainConfig:
        """Raise InvalidParameterError for a value out of its range."""
        rules = [("epochs", 1, 1000), ("batch_size", 2, 4096), ("lr", 1e-8, 1.0),
                 ("warmup_ratio", 0.0, 1.0), ("checkpoint_every", 1, 10**9),
                 ("evals_per_epoch", 1, 1000), ("average_decay", 0.0, 0.9999),
                 ("cache_mini", 0, 4096), ("patience", 0, 1000)]
        for name, low, high in rules:
            value = getattr(self, name)
            if not low <= value <= high:
                raise InvalidParameterError(f"{name} must be between {low} and {high}; "
                                            f"got {value}.")
        return self


@dataclass
class _State:
    step: int = 0
    history: list[dict] = field(default_factory=list)  # one entry per step or evaluation
    before: dict | None = None
    best: dict | None = None  # {"step", "metrics"}
    resumed_from: int | None = None


class Trainer:
    """Fine-tunes a SiameseEncoder on TrainingData with the data's objective."""

    def __init__(self, encoder, train: TrainingData, dev: TrainingData, config: TrainConfig,
                 work_dir: Path, progress: Progress | None = None):
        self.encoder, self.train_data, self.dev, self.config = encoder, train, dev, config.check()
        if len(train) < config.batch_size:
            raise TrainingDataError(f"{len(train)} training examples after holding out a dev "
                                    f"set: fewer than one batch of {config.batch_size}.")
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.progress = progress or (lambda done, total, message: None)
        self.objective = train.objective
        torch.manual_seed(config.seed)
        self.loss = make_loss(self.objective, encoder.dimension,
                              num_labels=len(train.classes or ()) or 3, concat=config.concat)
        self.loss.to(encoder.device)
        self.steps_per_epoch = math.ceil(len(train) / config.batch_size)
        self.total = self.steps_per_epoch * config.epochs
        if config.max_steps:
            self.total = min(self.total, config.max_steps)
        self.optimizer = torch.optim.AdamW(self._param_groups(), lr=config.lr)
        warmup = int(config.warmup_ratio * self.total)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: _warmup_linear(s, warmup, self.total))
        self.state = _State()
        self.average = (WeightAverage([encoder, self.loss], config.average_decay)
                        if config.average_decay > 0 else None)

    # ---- the loop ---------------------------------------------------------------
    def run(self) -> dict:
        """Train (or carry on from the checkpoint) to the end; returns metrics and timings."""
        self._resume()
        cfg, state = self.config, self.state
        if state.before is None:
            state.before = self.evaluate()
            state.best = {"step": 0, "metrics": state.before}
            self._log({"step": 0, "dev": state.before})
        started, first_step = time.monotonic(), state.step
        on_cuda = self.encoder.device.type == "cuda"
        self.encoder.train()
        last_history = 0.0
        eval_at = self._eval_steps()
        stopped_early = False
        while state.step < self.total and not stopped_early:
            epoch, offset = divmod(state.step, self.steps_per_epoch)
            order = self._order(epoch)
            for start in range(offset * cfg.batch_size, len(order), cfg.batch_size):
                if state.step >= self.total:
                    break
                loss = self._step(order[start:start + cfg.batch_size], on_cuda)
                state.step += 1
                lr = self.scheduler.get_last_lr()[0]
                elapsed = time.monotonic() - started
                self._log({"step": state.step, "epoch": epoch + 1, "loss": round(loss, 6),
                           "lr": lr, "elapsed": round(elapsed, 2)})
                if state.step in eval_at or state.step == self.total:
                    self._evaluate_and_keep_best()
                    stopped_early = bool(cfg.patience) and self._stale() >= cfg.patience
                if state.step % cfg.checkpoint_every == 0 and state.step < self.total:
                    self._save_checkpoint()
                if time.monotonic() - last_history > cfg.history_every_seconds:
                    self._write_history()
                    last_history = time.monotonic()
                self.progress(state.step, self.total,
                              f"step {state.step}/{self.total} · loss {loss:.4f} · "
                              f"lr {lr:.2e}")  # the worker adds the rate and time left
                if stopped_early:
                    break
        seconds = time.monotonic() - started
        self._restore_best()
        self._write_history()
        steps_run = state.step - first_step
        return {"metrics": {"before": state.before, "after": state.best["metrics"]},
                "best_step": state.best["step"], "steps": state.step, "epochs": cfg.epochs,
                "stopped_early": stopped_early,
                "resumed_from": state.resumed_from, "seconds": round(seconds, 2),
                "seconds_per_step": round(seconds / max(steps_run, 1), 4),
                "device": str(self.encoder.device), "history_file": str(self.history_path)}

    def train_step(self, rows) -> float:
        """One optimiser step on the training examples at ``rows``; returns the loss."""
        return self._step(np.asarray(rows), self.encoder.device.type == "cuda")

    def _stale(self) -> int:
        """Dev evaluations since the best one (early stopping counts them)."""
        best = self.state.best["step"]
        return sum(1 for e in self.state.history if "dev" in e and e["step"] > best)

    def _step(self, rows: np.ndarray, on_cuda: bool) -> float:
        """One optimiser step on the examples ``rows``; returns the loss."""
        columns = [[col[i] for i in rows] for col in self.train_data.texts]
        if self.objective == MIXED and min(self.train_data.labels[i] for i in rows) >= 0:
            columns = columns[:2]  # judged pairs only: their (empty) third column is not read
        labels = None
        if self.train_data.labels is not None:
            labels = torch.tensor([self.train_data.labels[i] for i in rows],
                                  device=self.encoder.device)
        texts = [t for col in columns for t in col]
        if self.config.cache_mini and self.objective == "mnrl":
            loss = self._cached_backward(texts, len(rows), labels, on_cuda)
        else:
            vectors = self._embed(texts, len(rows), on_cuda)
            loss = self.loss(list(vectors.split(len(rows))), labels)  # (batch, dim) per column
            loss.backward()
        params = [p for g in self.optimizer.param_groups for p in g["params"]]
        torch.nn.utils.clip_grad_norm_(params, self.config.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        if self.average is not None:
            self.average.update()
        return float(loss.detach())

    def _cached_backward(self, texts: list[str], rows: int, labels, on_cuda: bool
                         ) -> torch.Tensor:
        """The loss of a large batch with the memory of a small one (GradCache, Gao et al.
        2021; sentence-transformers' CachedMultipleNegativesRankingLoss).

        1. every text embedded without a graph, ``cache_mini`` texts per pass, the RNG
           state before each pass kept (dropout must drop the same units again);
        2. the loss over the whole batch's vectors, backward to the vectors only;
        3. each pass again with its graph and its RNG state, backward from the cached
           gradient of its vectors into the weights.
        The gradient equals that of one pass over the whole batch.
        """
        size = self.config.cache_mini
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        chunks = [order[s:s + size] for s in range(0, len(order), size)]
        states, parts = [], []
        with torch.no_grad():
            for chunk in chunks:
                states.append(_rng_state(on_cuda))
                parts.append(self._forward([texts[i] for i in chunk], on_cuda))
        cached = torch.cat(parts).detach().requires_grad_()  # (texts, dim), sorted by length
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order)] = torch.arange(len(order))
        loss = self.loss(list(cached[inverse.to(cached.device)].split(rows)), labels)
        loss.backward()
        start = 0
        for chunk, state in zip(chunks, states, strict=True):
            _set_rng_state(state, on_cuda)
            vectors = self._forward([texts[i] for i in chunk], on_cuda)
            vectors.backward(cached.grad[start:start + len(chunk)].to(vectors.dtype))
            start += len(chunk)
        return loss.detach()

    def _forward(self, texts: list[str], on_cuda: bool) -> torch.Tensor:
        features = self.encoder.tokenize(texts)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=on_cuda):
            return self.encoder(features)  # (len(texts), dim)

    def _embed(self, texts: list[str], chunk: int, on_cuda: bool) -> torch.Tensor:
        """Vectors (len(texts), dim), with gradients, in the order of ``texts``.

        The texts of all columns are sorted by length and cut into forward passes
        of ``chunk`` texts, so each pass pads to a similar length: fewer padded
        tokens than one pass per column (what sentence-transformers does), same result.
        """
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        parts = []
        for start in range(0, len(order), chunk):
            features = self.encoder.tokenize([texts[i] for i in order[start:start + chunk]])
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=on_cuda):
                parts.append(self.encoder(features))  # (chunk, dim)
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order)] = torch.arange(len(order))
        return torch.cat(parts)[inverse.to(parts[0].device)]

    def _order(self, epoch: int) -> np.ndarray:
        """The shuffled example order of an epoch; the same again after a resume.

        With ``unique_texts`` the order is rearranged so that no batch holds a text
        twice (``batching.unique_text_order``): with in-batch negatives a repeated
        text would be another example's negative while being its positive.
        """
        rng = np.random.default_rng(self.config.seed + epoch)
        order = rng.permutation(len(self.train_data))
        if self.objective == MIXED:
            return self._mixed_order(order, rng)
        if self.config.unique_texts:
            order = unique_text_order(order, self.train_data.texts, self.config.batch_size)
        return order

    def _mixed_order(self, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Batches of one kind each (triplets, or judged pairs) in a shuffled sequence.

        Full batches of either kind come in random order, the two partial ones
        last (where they share one batch; ``MixedLoss`` handles that).
        """
        size, labels = self.config.batch_size, self.train_data.labels
        triplets = np.array([i for i in order if labels[i] < 0], dtype=np.int64)
        pairs = np.array([i for i in order if labels[i] >= 0], dtype=np.int64)
        if self.config.unique_texts and len(triplets):
            triplets = unique_text_order(triplets, self.train_data.texts, size)
        full, partial = [], []
        for rows in (triplets, pairs):
            cut = len(rows) - len(rows) % size
            full += [rows[s:s + size] for s in range(0, cut, size)]
            partial.append(rows[cut:])
        full = [full[i] for i in rng.permutation(len(full))]
        return np.concatenate([*full, *partial]).astype(np.int64)

    def _eval_steps(self) -> set[int]:
        per = self.config.evals_per_epoch
        marks = {round(self.steps_per_epoch * k / per) for k in range(1, per + 1)}
        return {e * self.steps_per_epoch + m for e in range(self.config.epochs) for m in marks}

    def _param_groups(self) -> list[dict]:
        """Weight decay on weights, none on biases and LayerNorm (as BERT and ST do)."""
        named = [*self.encoder.named_parameters(), *self.loss.named_parameters()]
        plain = [p for n, p in named if "bias" in n or "LayerNorm" in n or "norm" in n.lower()]
        plain_ids = {id(p) for p in plain}
        decayed = [p for _, p in named if id(p) not in plain_ids]
        return [{"params": decayed, "weight_decay": self.config.weight_decay},
                {"params": plain, "weight_decay": 0.0}]

    # ---- evaluation -----------------------------------------------------------------
    def evaluate(self, data: TrainingData | None = None) -> dict:
        """Dev metrics (×100) for the objective; the primary one is PRIMARY_METRIC."""
        return evaluate_objective(self.encoder, self.loss, data or self.dev)

    def _evaluate_and_keep_best(self) -> None:
        with self._evaluated_weights():
            metrics = self.evaluate()
            state, key = self.state, PRIMARY_METRIC[self.objective]
            self._log({"step": state.step, "dev": metrics})
            if metrics[key] > state.best["metrics"][key] or state.best["step"] == 0:
                state.best = {"step": state.step, "metrics": metrics}
                checkpoint.save(self.work_dir / BEST, self._weights(), {})
        self.encoder.train()
        self._write_history()

    def _evaluated_weights(self):
        """The weights that are evaluated and kept: the moving average when there is one."""
        return self.average.applied() if self.average is not None else contextlib.nullcontext()

    def _restore_best(self) -> None:
        best_file = self.work_dir / BEST
        raw_is_best = self.state.best["step"] == self.state.step and self.average is None
        if not raw_is_best and best_file.is_file():
            self._load_weights(load_weights(best_file))
        self.encoder.eval()

    # ---- checkpoints and history ---------------------------------------------------
    @property
    def history_path(self) -> Path:
        return self.work_dir / HISTORY

    def _log(self, entry: dict) -> None:
        self.state.history.append(entry)

    def _write_history(self) -> None:
        payload = {"total": self.total, "objective": self.objective,
                   "metric": PRIMARY_METRIC[self.objective], "entries": self.state.history}
        replace_private(self.history_path,  # a new name, renamed: never through a link
                        lambda tmp: tmp.write_text(json.dumps(payload), encoding="utf-8"))

    def _weights(self) -> checkpoint.Groups:
        """The trained tensors: the encoder and the loss head (softmax classifier)."""
        return {"encoder": self.encoder.state_dict(), "loss": self.loss.state_dict()}

    def _load_weights(self, groups: checkpoint.Groups) -> None:
        self.encoder.load_state_dict(groups["encoder"])
        self.loss.load_state_dict(groups.get("loss", {}))

    def _save_checkpoint(self) -> None:
        """Write the whole training state: tensors to safetensors, the rest as JSON."""
        s = self.state
        optimizer, optimizer_json = checkpoint.optimizer_parts(self.optimizer.state_dict())
        groups = {**self._weights(), "optimizer": optimizer,
                  "rng": {"torch": torch.get_rng_state()}}
        average = self.average.state_dict() if self.average is not None else None
        if average is not None:
            groups["average"] = {str(i): t for i, t in enumerate(average["average"])}
        state = {"step": s.step, "history": s.history, "before": s.before, "best": s.best,
                 "config": _plain(asdict(self.config)), "optimizer": optimizer_json,
                 "scheduler": self.scheduler.state_dict(),
                 "average_decay": average and average["decay"]}
        checkpoint.save(self.work_dir / CHECKPOINT, groups, state)

    def _resume(self) -> None:
        """Carry on from the checkpoint in ``work_dir`` if there is one of this config.

        Raises CheckpointError for a file that is not a safe checkpoint (it is
        never unpickled); a checkpoint of other settings is deleted instead.
        """
        path = self.work_dir / CHECKPOINT
        if not path.is_file():
            return
        groups, saved = checkpoint.load(path)
        if saved.get("config") != _plain(asdict(self.config)):
            path.unlink()  # a different run's checkpoint: start afresh
            return
        try:
            self._restore(groups, saved)
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"{path} does not fit this training run ({exc}); it was not "
                                  "used. Delete it to start the fine-tuning afresh.") from exc

    def _restore(self, groups: checkpoint.Groups, saved: dict) -> None:
        """Put every part of a loaded checkpoint back (weights, optimiser, schedule, RNG)."""
        self._load_weights(groups)
        self.optimizer.load_state_dict(
            checkpoint.optimizer_state(groups.get("optimizer", {}), saved["optimizer"]))
        self.scheduler.load_state_dict(saved["scheduler"])
        torch.set_rng_state(groups["rng"]["torch"])
        if self.average is not None:
            kept = groups.get("average", {})
            self.average.load_state_dict({"decay": saved["average_decay"],
                                          "average": [kept[str(i)] for i in range(len(kept))]})
        self.state = _State(saved["step"], saved["history"], saved["before"], saved["best"],
                            resumed_from=saved["step"])

    def clean_up(self) -> None:
        """Delete the checkpoint and best state once the model is saved (history stays)."""
        for name in (CHECKPOINT, BEST, *LEGACY):
            (self.work_dir / name).unlink(missing_ok=True)


def load_weights(path: Path) -> checkpoint.Groups:
    """``{"encoder": ..., "loss": ...}`` state dicts from a best-state file (``BEST``).

    For tools that read the kept states of several runs (weight soups); the
    file is safetensors, so reading it runs nothing from it.
    """
    return checkpoint.load(Path(path))[0]


def _plain(value):
    """``value`` as JSON gives it back (tuples become lists), so saved and current compare."""
    return json.loads(json.dumps(value))


def evaluate_objective(encoder, loss: torch.nn.Module, data: TrainingData) -> dict:
    """Metrics (×100) of ``encoder`` on ``data`` for the data's objective.

    Regression: Spearman/Pearson of cosine; 0/1 pairs: AP and best F1;
    classification: accuracy of the softmax head; triplets: how often the
    anchor is closer to the positive; positive pairs: retrieval of each
    sentence2 among all of them (MRR@10, recall@1).
    """
    objective, texts = data.objective, data.texts
    if objective == MIXED:
        return _evaluate_mixed(encoder, loss, data)
    if objective in SCORED_OBJECTIVES:
        m = sts_metrics(encode_pairs(encoder, texts[0], texts[1]), data.labels)
        return {"spearman": m["spearman"], "pearson": m["pearson"]}
    if objective == "contrastive":
        m = pair_metrics(encode_pairs(encoder, texts[0], texts[1]), data.labels)
        return {"ap": m["ap"], "f1": m["f1"]}
    vectors = [torch.from_numpy(encoder.encode(col)) for col in texts]  # (n, dim) each
    if objective == "softmax":
        with torch.no_grad():
            logits = loss.logits(vectors[0].to(encoder.device), vectors[1].to(encoder.device))
        right = (logits.argmax(1).cpu() == torch.tensor(data.labels)).float().mean()
        return {"accuracy": round(100 * float(right), 2)}
    if objective == "triplet":
        closer = (vectors[0] - vectors[1]).norm(dim=1) < (vectors[0] - vectors[2]).norm(dim=1)
        return {"accuracy": round(100 * float(closer.float().mean()), 2)}
    scores = vectors[0] @ vectors[1].T  # (n, n) anchors × positives; normalised vectors
    ranked = scores.argsort(dim=1, descending=True)[:, :10].tolist()
    m = retrieval_metrics(ranked, [{i} for i in range(len(ranked))])
    return {"mrr@10": m["mrr@10"], "recall@1": m["recall@1"]}


def _evaluate_mixed(encoder, loss: torch.nn.Module, data: TrainingData) -> dict:
    """Judged pairs' AP (when both answers are there) and the triplets' MRR@10; "dev" is the
    first of the two, the one the best state is kept by."""
    triplets = [i for i, y in enumerate(data.labels) if y < 0]
    pairs = [i for i, y in enumerate(data.labels) if y >= 0]
    out: dict = {}
    if len({data.labels[i] for i in pairs}) == 2:
        part = replace(data.subset(pairs), objective="contrastive")
        out["ap"] = evaluate_objective(encoder, loss, part)["ap"]
    if len(triplets) >= 2:
        part = replace(data.subset(triplets), objective="mnrl", labels=None)
        out["mrr@10"] = evaluate_objective(encoder, loss, part)["mrr@10"]
    out["dev"] = out.get("ap", out.get("mrr@10", 0.0))
    return out


def _rng_state(on_cuda: bool) -> tuple:
    return torch.get_rng_state(), torch.cuda.get_rng_state() if on_cuda else None


def _set_rng_state(state: tuple, on_cuda: bool) -> None:
    torch.set_rng_state(state[0])
    if on_cuda:
        torch.cuda.set_rng_state(state[1])


def _warmup_linear(step: int, warmup: int, total: int) -> float:
    """Learning-rate factor: 0 → 1 over ``warmup`` steps, then down to 0 at ``total``."""
    if step < warmup:
        return step / max(1, warmup)
    return max(0.0, (total - step) / max(1, total - warmup))

