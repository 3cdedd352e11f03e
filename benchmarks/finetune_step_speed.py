"""Seconds per training step, ours against sentence-transformers, in lockstep.

The end-to-end comparison (``finetune_speed.py``) times whole short runs, one
after the other, so load from other jobs on a shared machine lands unevenly.
Here both trainers are built once and step in turn on the same batch: ours
takes step i, then sentence-transformers takes step i on the same 16 STSb
pairs, so whatever else the machine does falls on both alike. Ours is
``Trainer.train_step``; the peer is sentence-transformers' own model and
``CosineSimilarityLoss`` in the loop its ``fit`` ran up to v2 (``fit`` itself
now needs the ``datasets`` package): smart-batching collate, AdamW 2e-5,
WarmupLinear, clipping at 1. Each step is timed in wall and CPU seconds; the
first ``--warmup`` steps are left out; medians and the ratio ours / peer are
printed (below 1: ours is faster).

Usage:
    PYTHONPATH=. python benchmarks/finetune_step_speed.py --steps 40
Results: benchmarks/results/finetune_step_speed.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finetune_speed import peer_optimizer  # the peer's optimiser, shared with the fit loop

from searchapp.embedding.encoder import SiameseEncoder
from searchapp.embedding.models import BUNDLED
from searchapp.training.data import load_training_data
from searchapp.training.trainer import TrainConfig, Trainer

ROOT = Path(__file__).resolve().parents[1]


def peer_stepper(model: str, data, steps: int):
    """A function rows → loss doing one sentence-transformers training step."""
    from sentence_transformers import InputExample, SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    st = SentenceTransformer(model, device="cpu")
    loss = CosineSimilarityLoss(st)
    optimizer, scheduler = peer_optimizer(loss, steps)
    loss.train()

    def step(rows) -> float:
        batch = [InputExample(texts=[data.texts[0][i], data.texts[1][i]],
                              label=float(data.labels[i])) for i in rows]
        features, labels = st.smart_batching_collate(batch)
        value = loss(features, labels)
        value.backward()
        torch.nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        return float(value)

    return step


def timed(fn, rows) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn(rows)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    args = p.parse_args()
    model = str(BUNDLED["all-MiniLM-L6-v2"]())
    df = pd.read_csv(Path(args.data) / "stsb" / "stsbenchmark.tsv.gz", sep="\t",
                     keep_default_na=False)
    frame = df[df.split == "train"][["sentence1", "sentence2", "score"]]
    with tempfile.TemporaryDirectory() as tmp:
        data = load_training_data(frame.to_csv(index=False).encode(), "stsb-train.csv")
        encoder = SiameseEncoder.load(model, device="cpu")
        trainer = Trainer(encoder, data, data.subset([0, 1, 2, 3]),
                          TrainConfig(max_steps=args.steps), Path(tmp))
        encoder.train()
        peer = peer_stepper(model, data, args.steps)
        order = np.random.default_rng(0).permutation(len(data))
        names = ("ours", "sentence-transformers")
        wall = {n: [] for n in names}
        cpu = {n: [] for n in names}
        for i in range(args.steps):
            rows = order[i * 16:(i + 1) * 16]
            for name, fn in zip(names, (trainer.train_step, peer), strict=True):
                w, c = timed(fn, rows)
                wall[name].append(round(w, 4))
                cpu[name].append(round(c, 4))
            print(f"step {i + 1}: ours {wall['ours'][-1]:.3f} s, "
                  f"peer {wall['sentence-transformers'][-1]:.3f} s", flush=True)
    result = {"machine": platform.node(), "torch_threads": torch.get_num_threads(),
              "steps": args.steps, "warmup_steps_left_out": args.warmup, "batch_size": 16,
              "wall_seconds": wall, "cpu_seconds": cpu}
    for label, table in (("wall", wall), ("cpu", cpu)):
        median = {k: statistics.median(v[args.warmup:]) for k, v in table.items()}
        ratio = median["ours"] / median["sentence-transformers"]
        result[f"{label}_median_seconds_per_step"] = {k: round(v, 4) for k, v in median.items()}
        result[f"{label}_ratio_ours_over_peer"] = round(ratio, 3)
        for name, value in median.items():
            print(f"{name:>22}: {value:.3f} {label} s/step")
        print(f"{'ratio ours / peer':>22}: {ratio:.3f} {label} "
              f"({'ours faster' if ratio < 1 else 'peer faster'})")
    out = ROOT / "benchmarks" / "results" / "finetune_step_speed.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
