"""Where the GPU encode's time goes: tokenizing, padding, the forward pass and the copy back,
for bf16 autocast and float32, on short sentences and long sections (one warm run each,
then one timed and one under cProfile).

Usage (on the GPU machine, after run.sh's set-up):
    python3 benchmarks/gpu/encode_profile.py --n 20000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from encode_speed import long_texts  # noqa: E402
from sentence_cache import first_sentences  # noqa: E402

from searchapp.embedding.encoder import SiameseEncoder  # noqa: E402
from searchapp.embedding.models import BUNDLED  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    model = BUNDLED["all-MiniLM-L6-v2"]()
    sets = {"short": first_sentences(args.n),
            "long": long_texts(ROOT / "benchmarks/.cache/pg-sections/corpus.csv", args.n // 4)}
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    for precision in ("bf16", "fp32"):
        enc = SiameseEncoder.load(model, device=args.device, precision=precision)
        for name, texts in sets.items():
            enc.encode(texts[:2000])
            started = time.perf_counter()
            ids = enc._token_ids(texts)
            tokenize = time.perf_counter() - started
            started = time.perf_counter()
            enc.encode(texts)
            sync()
            total = time.perf_counter() - started
            print(f"{precision} {name} ({len(texts)} texts, {sum(map(len, ids))} tokens): "
                  f"encode {total:.2f} s, of it tokenizing {tokenize:.2f} s")
            profile = cProfile.Profile()
            profile.runcall(enc.encode, texts)
            sync()
            pstats.Stats(profile).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
