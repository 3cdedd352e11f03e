"""Training speed: our trainer against sentence-transformers' ``fit`` on the same data.

Both train all-MiniLM-L6-v2 with the cosine-similarity regression objective on
the same STSb training pairs, in the same order of size: batch 16, AdamW lr
2e-5, 10% linear warm-up, gradient clipping at 1, float32 on the CPU (bf16
autocast for ours / AMP for the peer on CUDA). The runs alternate (ours, peer,
ours, peer, ...) so that other load on a shared machine falls on both alike;
each round is a fresh model trained for ``--steps`` steps, timed end to end
(setup included). Seconds per step are the median over the rounds after the
first (a warm-up), and the ratio is ours / peer (below 1: ours is faster).

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

from searchapp.encoder import SiameseEncoder, pick_device
from searchapp.models import BUNDLED
from searchapp.training.data import load_training_data
from searchapp.training.trainer import TrainConfig, Trainer

ROOT = Path(__file__).resolve().parents[1]


def ours(model: str, train_file: Path, steps: int, device: str, work: Path) -> float:
    data = load_training_data(train_file)
    dev = data.subset([0, 1, 2, 3])  # evaluation is not what is timed: keep it tiny
    started = time.perf_counter()
    encoder = SiameseEncoder.load(model, device=device)
    Trainer(encoder, data, dev, TrainConfig(max_steps=steps, checkpoint_every=10**6),
            work).run()
    if encoder.device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / steps


def peer(model: str, frame: pd.DataFrame, steps: int, device: str) -> float:
    from sentence_transformers import InputExample, SentenceTransformer, losses
    from torch.utils.data import DataLoader

    lo, hi = frame.score.min(), frame.score.max()
    examples = [InputExample(texts=[a, b], label=float((s - lo) / (hi - lo)))
                for a, b, s in zip(frame.sentence1, frame.sentence2, frame.score, strict=True)]
    started = time.perf_counter()
    st = SentenceTransformer(model, device=str(pick_device(device)))
    loader = DataLoader(examples, shuffle=True, batch_size=16)
    st.fit(train_objectives=[(loader, losses.CosineSimilarityLoss(st))], epochs=1,
           steps_per_epoch=steps, warmup_steps=int(0.1 * steps), show_progress_bar=False,
           use_amp=st.device.type == "cuda")
    if st.device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / steps


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
    times: dict[str, list[float]] = {"ours": [], "sentence-transformers fit": []}
    with tempfile.TemporaryDirectory() as tmp:
        train_file = Path(tmp) / "train.tsv"
        frame.to_csv(train_file, sep="\t", index=False)
        for r in range(args.rounds):
            times["ours"].append(ours(model, train_file, args.steps, args.device,
                                      Path(tmp) / f"w{r}"))
            times["sentence-transformers fit"].append(peer(model, frame, args.steps,
                                                           args.device))
            print(f"round {r + 1}: ours {times['ours'][-1]:.3f} s/step, "
                  f"peer {times['sentence-transformers fit'][-1]:.3f} s/step", flush=True)
    timed = {k: v[1:] or v for k, v in times.items()}  # round 1 is a warm-up
    median = {k: statistics.median(v) for k, v in timed.items()}
    ratio = median["ours"] / median["sentence-transformers fit"]
    result = {"machine": platform.node(), "device": str(pick_device(args.device)),
              "torch_threads": torch.get_num_threads(), "steps_per_round": args.steps,
              "rounds": args.rounds, "batch_size": 16, "seconds_per_step_rounds": times,
              "seconds_per_step_median": {k: round(v, 4) for k, v in median.items()},
              "ratio_ours_over_peer": round(ratio, 3)}
    for name, value in median.items():
        print(f"{name:>26}: {value:.3f} s/step")
    verdict = "ours faster" if ratio < 1 else "peer faster"
    print(f"{'ratio ours / peer':>26}: {ratio:.3f} ({verdict})")
    out = ROOT / "benchmarks" / "results" / f"finetune_speed{args.suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
