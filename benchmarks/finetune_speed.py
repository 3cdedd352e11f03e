"""Training speed: our trainer against sentence-transformers' ``fit`` on the same data.

Both train all-MiniLM-L6-v2 with the cosine-similarity regression objective on
the same STSb training pairs, in the same order of size: batch 16, AdamW lr
2e-5, 10% linear warm-up, gradient clipping at 1, float32 on the CPU (bf16
autocast for ours / AMP for the peer on CUDA). The runs alternate (ours, peer,
ours, peer, ...) so that other load on a shared machine falls on both alike;
each round is a fresh model trained for ``--steps`` steps, timed end to end
(setup included), in wall-clock seconds and in CPU seconds of the process
(all threads; steadier than wall time on a machine shared with other jobs).
Per step: the median over the rounds after the first (a warm-up); the ratio is
ours / peer (below 1: ours is faster).

Usage:
    PYTHONPATH=. python benchmarks/finetune_speed.py --steps 100 --rounds 3
Results: benchmarks/results/finetune_speed[_SUFFIX].json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from searchapp.embedding.encoder import SiameseEncoder, pick_device
from searchapp.embedding.models import BUNDLED
from searchapp.training.data import load_training_data
from searchapp.training.trainer import TrainConfig, Trainer

ROOT = Path(__file__).resolve().parents[1]


def ours(model: str, train_file: Path, steps: int, device: str, work: Path
         ) -> tuple[float, float]:
    data = load_training_data(train_file)
    dev = data.subset([0, 1, 2, 3])  # evaluation is not what is timed: keep it tiny
    started, cpu = time.perf_counter(), time.process_time()
    encoder = SiameseEncoder.load(model, device=device)
    Trainer(encoder, data, dev, TrainConfig(max_steps=steps, checkpoint_every=10**6),
            work).run()
    if encoder.device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / steps, (time.process_time() - cpu) / steps


def peer(model: str, frame: pd.DataFrame, steps: int, device: str) -> tuple[float, float]:
    """sentence-transformers' ``fit``; without the ``datasets`` package (which ``fit`` needs)
    the same loop that ``fit`` ran up to v2, on sentence-transformers' own model and loss."""
    from sentence_transformers import InputExample, SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss
    from torch.utils.data import DataLoader

    lo, hi = frame.score.min(), frame.score.max()
    examples = [InputExample(texts=[a, b], label=float((s - lo) / (hi - lo)))
                for a, b, s in zip(frame.sentence1, frame.sentence2, frame.score, strict=True)]
    started, cpu = time.perf_counter(), time.process_time()
    st = SentenceTransformer(model, device=str(pick_device(device)))
    loader = DataLoader(examples, shuffle=True, batch_size=16)
    loss = CosineSimilarityLoss(st)
    try:
        st.fit(train_objectives=[(loader, loss)], epochs=1, steps_per_epoch=steps,
               warmup_steps=int(0.1 * steps), show_progress_bar=False,
               use_amp=st.device.type == "cuda")
        PEER_KIND["kind"] = "SentenceTransformer.fit"
    except ImportError:
        _fit_loop(st, loader, loss, steps)
        PEER_KIND["kind"] = ("the v2 fit loop on SentenceTransformer + CosineSimilarityLoss "
                             "(fit itself needs the datasets package, not installed)")
    if st.device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / steps, (time.process_time() - cpu) / steps


PEER_KIND = {"kind": ""}


def peer_optimizer(loss, steps: int):
    """sentence-transformers v2's optimiser and schedule: AdamW lr 2e-5, weight decay 0.01
    except on bias and LayerNorm, linear warm-up over 10% of ``steps`` then decay."""
    from transformers import get_linear_schedule_with_warmup

    named = list(loss.named_parameters())
    no_decay = ("bias", "LayerNorm.bias", "LayerNorm.weight")
    groups = [{"params": [p for n, p in named if not any(nd in n for nd in no_decay)],
               "weight_decay": 0.01},
              {"params": [p for n, p in named if any(nd in n for nd in no_decay)],
               "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=2e-5)
    return optimizer, get_linear_schedule_with_warmup(optimizer, int(0.1 * steps), steps)


def _fit_loop(st, loader, loss, steps: int) -> None:
    """What ``SentenceTransformer.fit`` did up to v2: smart batching collate, AdamW with
    weight decay 0.01 (none on bias/LayerNorm), WarmupLinear, clip at 1."""
    loader.collate_fn = st.smart_batching_collate
    optimizer, scheduler = peer_optimizer(loss, steps)
    on_cuda = st.device.type == "cuda"
    loss.train()
    batches = iter(loader)
    for _ in range(steps):
        features, labels = next(batches)
        features = [{k: v.to(st.device) if torch.is_tensor(v) else v for k, v in f.items()}
                    for f in features]
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=on_cuda):
            value = loss(features, labels.to(st.device))
        value.backward()
        torch.nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--model", default=None)
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    p.add_argument("--device", default="auto")
    p.add_argument("--suffix", default="")
    args = p.parse_args()
    model = args.model or str(BUNDLED["all-MiniLM-L6-v2"]())
    df = pd.read_csv(Path(args.data) / "stsb" / "stsbenchmark.tsv.gz", sep="\t",
                     keep_default_na=False)
    frame = df[df.split == "train"][["sentence1", "sentence2", "score"]]
    names = ("ours", "sentence-transformers fit")
    times: dict[str, list[float]] = {n: [] for n in names}  # wall seconds per step
    cpu: dict[str, list[float]] = {n: [] for n in names}  # CPU seconds per step (all threads)
    with tempfile.TemporaryDirectory() as tmp:
        train_file = Path(tmp) / "train.tsv"
        frame.to_csv(train_file, sep="\t", index=False)
        for r in range(args.rounds):
            for name, run in zip(names, (
                    lambda r=r: ours(model, train_file, args.steps, args.device,
                                     Path(tmp) / f"w{r}"),
                    lambda: peer(model, frame, args.steps, args.device)), strict=True):
                wall, used = run()
                times[name].append(round(wall, 4))
                cpu[name].append(round(used, 4))
                print(f"round {r + 1} {name}: {wall:.3f} s/step wall, {used:.3f} CPU s/step",
                      flush=True)
    result = {"machine": platform.node(), "device": str(pick_device(args.device)),
              "torch_threads": torch.get_num_threads(), "steps_per_round": args.steps,
              "rounds": args.rounds, "batch_size": 16, "wall_seconds_per_step": times,
              "cpu_seconds_per_step": cpu, "peer": PEER_KIND["kind"]}
    for label, table in (("wall", times), ("cpu", cpu)):
        timed = {k: v[1:] or v for k, v in table.items()}  # round 1 is a warm-up
        median = {k: statistics.median(v) for k, v in timed.items()}
        ratio = median["ours"] / median["sentence-transformers fit"]
        result[f"{label}_median"] = {k: round(v, 4) for k, v in median.items()}
        result[f"{label}_ratio_ours_over_peer"] = round(ratio, 3)
        for name, value in median.items():
            print(f"{name:>26}: {value:.3f} {label} s/step")
        verdict = "ours faster" if ratio < 1 else "peer faster"
        print(f"{'ratio ours / peer':>26}: {ratio:.3f} {label} ({verdict})")
    out = ROOT / "benchmarks" / "results" / f"finetune_speed{args.suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
