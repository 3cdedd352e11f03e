"""Weight averaging across fine-tuning runs ("model soups", Wortsman et al. 2022).

A diagnostic, not a feature: it averages the encoder weights of the best
states (``best.safetensors``) that ``finetune_quality.py --work DIR`` left behind for
runs that differ only in their seed, and reports STSb dev and test
Spearman×100 of every subset of two or more runs, beside each run alone. It
answers whether training N runs and averaging them is worth N× the time.

Usage:
    PYTHONPATH=. python benchmarks/finetune_soup.py \\
        /tmp/ft-seed42/work-cosent/best.safetensors /tmp/ft-seed7/work-cosent/best.safetensors ...
Results: benchmarks/results/finetune_soup.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finetune_quality import ROOT, sts_test, stsb_splits  # the same splits and metric

from searchapp.embedding.encoder import SiameseEncoder
from searchapp.embedding.models import BUNDLED
from searchapp.training.trainer import load_weights


def soup(states: list[dict]) -> dict:
    """The element-wise mean of floating-point weights (integer buffers from the first)."""
    first = states[0]
    return {k: (sum(s[k].float() for s in states) / len(states)).to(first[k].dtype)
            if first[k].is_floating_point() else first[k] for k in first}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("best", nargs="+", help="best.safetensors files of runs from one base model")
    p.add_argument("--model", default=None, help="the runs' base model folder "
                   "(default: the bundled MiniLM)")
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "finetune_soup.json"))
    args = p.parse_args()
    splits = stsb_splits(Path(args.data))
    encoder = SiameseEncoder.load(args.model or str(BUNDLED["all-MiniLM-L6-v2"]()), device="cpu")
    states = [load_weights(Path(f))["encoder"] for f in args.best]
    rows = []
    for size in range(1, len(states) + 1):
        for members in itertools.combinations(range(len(states)), size):
            encoder.load_state_dict(soup([states[i] for i in members]))
            encoder.eval()
            row = {"runs": [args.best[i] for i in members],
                   "stsb_dev": sts_test(encoder, splits["dev"]),
                   "stsb_test": sts_test(encoder, splits["test"])}
            rows.append(row)
            print(json.dumps(row), flush=True)
    Path(args.out).write_text(json.dumps({"soups": rows}, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
