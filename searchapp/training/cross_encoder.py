"""A cross-encoder: both texts through one transformer together, one score for the pair.

Where the siamese bi-encoder embeds each text alone and compares vectors, a
cross-encoder reads the pair at once (``[CLS] a [SEP] b [SEP]``), so every
word of one text attends to every word of the other: more accurate, but one
forward pass per pair, so it can only score pairs someone has already picked.
Augmented SBERT (Thakur et al. 2021, ``augment``) uses exactly that: a
cross-encoder trained on the few gold judgements labels many more pairs, and
the bi-encoder learns from both.

No cross-encoder weights can be installed here, so it starts from the bundled
bi-encoder's transformer weights (all-MiniLM-L6-v2's BERT): the token-level
knowledge is there, the pair head is new. The head reads the mean of the
token vectors (the pooling those weights were trained with) through dropout
and a linear layer to one logit; sigmoid(logit) is the probability that the
pair is relevant / duplicate. The head learns faster (``HEAD_LR``) than the
pretrained body.

Training (``train``) is the same loop as the bi-encoder's in small: AdamW,
linear warm-up and decay, gradient clipping, bf16 autocast on CUDA (float32
on the CPU), and a checkpoint every ``checkpoint_every`` steps (safetensors
plus JSON, ``searchapp.training.checkpoint``) that a restarted job resumes from.

Example:
    >>> ce = CrossEncoder.from_bi_encoder(bundled_path, device="cpu")        # doctest: +SKIP
    >>> train(ce, [("a cat", "a kitten", 1), ("a cat", "a car", 0)] * 8, work)  # doctest: +SKIP
    >>> ce.predict([("a dog", "a puppy")])                                          # doctest: +SKIP
    array([0.83], dtype=float32)
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoModel, AutoTokenizer

from searchapp.embedding.encoder import pick_device, pool
from searchapp.errors import CheckpointError, ModelError
from searchapp.training import checkpoint

WEIGHTS = "cross_encoder.safetensors"
CONFIG = "cross_encoder.json"
CHECKPOINT = "cross_checkpoint.safetensors"
HEAD_LR = 1e-3
MAX_LENGTH = 256
Pair = tuple[str, str, int]  # first text, second text, label 0/1
Progress = Callable[[int, int, str], None]


class CrossEncoder(torch.nn.Module):
    """transformer(a [SEP] b) → mean of the token vectors → dropout → linear → one logit."""

    def __init__(self, transformer: torch.nn.Module, tokenizer, max_length: int = MAX_LENGTH,
                 dropout: float = 0.1, seed: int = 42):
        super().__init__()
        self.transformer, self.tokenizer, self.max_length = transformer, tokenizer, max_length
        hidden = int(transformer.config.hidden_size)
        generator = torch.Generator().manual_seed(seed)  # the new head, the same every time
        self.head = torch.nn.Linear(hidden, 1)
        with torch.no_grad():
            self.head.weight.normal_(0.0, 0.02, generator=generator)
            self.head.bias.zero_()
        self.dropout = torch.nn.Dropout(dropout)

    @classmethod
    def from_bi_encoder(cls, path: str | Path, device: str = "auto", seed: int = 42
                        ) -> CrossEncoder:
        """A cross-encoder whose transformer is the model folder's (safetensors only)."""
        path = Path(path)
        if not any(path.glob("*.safetensors")):
            raise ModelError(f"{path} has no .safetensors weights; only safetensors are loaded.")
        transformer = AutoModel.from_pretrained(path, trust_remote_code=False,
                                                use_safetensors=True)
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        model = cls(transformer, tokenizer, seed=seed)
        return model.to(pick_device(device))

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def tokenize(self, first: Sequence[str], second: Sequence[str]) -> dict[str, torch.Tensor]:
        """Token ids of the pairs, padded to the longest, cut to ``max_length`` (longest first)."""
        batch = self.tokenizer(list(first), list(second), padding=True, truncation="longest_first",
                               max_length=self.max_length, return_tensors="pt")
        return {k: v.to(self.device) for k, v in batch.items()}

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits (batch,) for tokenised pairs."""
        inputs = {k: v for k, v in features.items()
                  if k in ("input_ids", "attention_mask", "token_type_ids")}
        tokens = self.transformer(**inputs).last_hidden_state.float()  # (batch, seq, dim)
        pooled = pool(tokens, features["attention_mask"], "mean")  # (batch, dim)
        return self.head(self.dropout(pooled)).squeeze(-1)

    @torch.inference_mode()
    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32,
                progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """The probability (n,) that each (first, second) pair is relevant / duplicate."""
        was_training = self.training
        self.eval()
        out = np.empty(len(pairs), dtype=np.float32)
        on_cuda = self.device.type == "cuda"
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        try:
            for start in range(0, len(order), batch_size):
                rows = order[start:start + batch_size]
                features = self.tokenize([pairs[i][0] for i in rows], [pairs[i][1] for i in rows])
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=on_cuda):
                    logits = self(features)
                out[rows] = torch.sigmoid(logits.float()).cpu().numpy()
                if progress:
                    progress(min(start + batch_size, len(order)), len(order))
        finally:
            self.train(was_training)
        return out

    # ---- saving ------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Weights (safetensors, atomically), transformer config and tokenizer into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        self.transformer.config.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        (folder / CONFIG).write_text(json.dumps({"max_length": self.max_length}), "utf-8")
        checkpoint.save(folder / WEIGHTS, {"model": self.state_dict()}, {"kind": "cross-encoder"})

    @classmethod
    def load(cls, folder: Path, device: str = "auto") -> CrossEncoder:
        """A cross-encoder saved by ``save`` (nothing in the folder is unpickled)."""
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
        transformer = AutoModel.from_config(config)
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
        settings = json.loads((folder / CONFIG).read_text("utf-8"))
        model = cls(transformer, tokenizer, max_length=int(settings["max_length"]))
        groups, _ = checkpoint.load(folder / WEIGHTS)
        model.load_state_dict(groups["model"])
        return model.to(pick_device(device)).eval()


@dataclass
class CrossConfig:
    """The cross-encoder's training settings (batch 16 and lr 2e-5 as for the bi-encoder)."""

    epochs: int = 4
    min_steps: int = 60  # few judgements: more epochs, so the new head gets enough steps
    batch_size: int = 16
    lr: float = 2e-5
    head_lr: float = HEAD_LR
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    seed: int = 42
    checkpoint_every: int = 50
    max_steps: int | None = None  # stop early (tests, benchmarks)


def train(model: CrossEncoder, pairs: Sequence[Pair], work_dir: Path,
          config: CrossConfig | None = None, progress: Progress | None = None) -> dict:
    """Train ``model`` on labelled pairs with binary cross-entropy; resumes from ``work_dir``.

    Returns {"steps", "seconds", "resumed_from", "loss"}; ``progress(done, total, message)``
    is called every step (a job's ``ctx.progress``: cancelling stops here).
    """
    config = config or CrossConfig()
    report = progress or (lambda done, total, message: None)
    work_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    per_epoch = math.ceil(len(pairs) / config.batch_size)
    epochs = max(config.epochs, math.ceil(config.min_steps / max(per_epoch, 1)))
    total = per_epoch * epochs
    if config.max_steps:
        total = min(total, config.max_steps)
    head = set(map(id, model.head.parameters()))
    body = [p for p in model.parameters() if id(p) not in head]
    optimizer = torch.optim.AdamW([
        {"params": body, "lr": config.lr, "weight_decay": config.weight_decay},
        {"params": list(model.head.parameters()), "lr": config.head_lr, "weight_decay": 0.0}])
    warmup = int(config.warmup_ratio * total)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: s / max(1, warmup) if s < warmup
        else max(0.0, (total - s) / max(1, total - warmup)))
    step = _resume(model, optimizer, scheduler, work_dir / CHECKPOINT, config, len(pairs))
    resumed_from = step or None
    started, first, loss_value = time.monotonic(), step, float("nan")
    on_cuda = model.device.type == "cuda"
    model.train()
    while step < total:
        epoch, offset = divmod(step, per_epoch)
        order = np.random.default_rng(config.seed + epoch).permutation(len(pairs))
        for start in range(offset * config.batch_size, len(order), config.batch_size):
            if step >= total:
                break
            rows = order[start:start + config.batch_size]
            features = model.tokenize([pairs[i][0] for i in rows], [pairs[i][1] for i in rows])
            labels = torch.tensor([float(pairs[i][2]) for i in rows], device=model.device)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=on_cuda):
                logits = model(features)
            loss = F.binary_cross_entropy_with_logits(logits.float(), labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            loss_value = float(loss.detach())
            if step % config.checkpoint_every == 0 and step < total:
                _save(model, optimizer, scheduler, work_dir / CHECKPOINT, config, len(pairs), step)
            report(step, total, f"cross-encoder step {step}/{total} · loss {loss_value:.4f}")
    model.eval()
    (work_dir / CHECKPOINT).unlink(missing_ok=True)
    seconds = time.monotonic() - started
    return {"steps": total, "seconds": round(seconds, 2), "resumed_from": resumed_from,
            "loss": round(loss_value, 6), "seconds_per_step": round(seconds / max(total - first, 1),
                                                                     4)}


def _signature(config: CrossConfig, n: int) -> dict:
    return json.loads(json.dumps({**asdict(config), "pairs": n}))


def _save(model, optimizer, scheduler, path: Path, config: CrossConfig, n: int, step: int
          ) -> None:
    tensors, plain = checkpoint.optimizer_parts(optimizer.state_dict())
    checkpoint.save(path, {"model": model.state_dict(), "optimizer": tensors,
                           "rng": {"torch": torch.get_rng_state()}},
                    {"step": step, "config": _signature(config, n), "optimizer": plain,
                     "scheduler": scheduler.state_dict()})


def _resume(model, optimizer, scheduler, path: Path, config: CrossConfig, n: int) -> int:
    """The step to carry on from: a checkpoint's of this training, else 0."""
    if not path.is_file():
        return 0
    groups, state = checkpoint.load(path)
    if state.get("config") != _signature(config, n):
        path.unlink()  # another training's checkpoint
        return 0
    try:
        model.load_state_dict(groups["model"])
        optimizer.load_state_dict(checkpoint.optimizer_state(groups.get("optimizer", {}),
                                                             state["optimizer"]))
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(groups["rng"]["torch"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path} does not fit this cross-encoder training ({exc}); it was "
                              "not used. Delete it to start afresh.") from exc
    return int(state["step"])
