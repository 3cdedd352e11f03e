"""Training a cross-encoder (``searchapp/embedding/cross_encoder.py``) on labelled pairs.

Augmented SBERT (Thakur et al. 2021, ``augment``) trains a cross-encoder on the
few gold judgements to label many more pairs for the bi-encoder; the reranker
(``reranker``) trains one to reorder a query's top hits. The pretrained body
learns slowly, the new pair head faster (``HEAD_LR``).

Training (``train``) is the same loop as the bi-encoder's in small: AdamW,
linear warm-up and decay, gradient clipping, bf16 autocast on CUDA (float32
on the CPU), and a checkpoint every ``checkpoint_every`` steps (safetensors
plus JSON, ``searchapp.embedding.checkpoint``) that a restarted job resumes from.

Example:
    >>> ce = CrossEncoder.from_bi_encoder(bundled_path, device="cpu")        # doctest: +SKIP
    >>> train(ce, [("a cat", "a kitten", 1), ("a cat", "a car", 0)] * 8, work)  # doctest: +SKIP
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

from searchapp.embedding import checkpoint
from searchapp.embedding.cross_encoder import CrossEncoder
from searchapp.errors import CheckpointError

CHECKPOINT = "cross_checkpoint.safetensors"
HEAD_LR = 1e-3
Pair = tuple[str, str, int]  # first text, second text, label 0/1
Progress = Callable[[int, int, str], None]


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
