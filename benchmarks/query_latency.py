"""Milliseconds to encode one query: ours against sentence-transformers, one text at a time.

A search encodes one short text; what counts there is latency, not
throughput. Each round encodes every query once, alone, with each path in
turn (so all paths share the machine's conditions); the result keeps the
median and p90 per path over all rounds.

Paths:
- ``st``: ``SentenceTransformer(model).encode([query])``, the peer.
- ``ours``: ``SiameseEncoder.load(model).encode([query])``: the query path
  chosen at load (``encoder.query_path``: whichever of the batch path and
  float32 was faster on one query on this machine).
- ``ours-bf16``, ``ours-fp32``: the two candidates, forced.

Queries: the first ``--n`` unique STSb sentences (short, like queries).

Run:  PYTHONPATH=. .venv/bin/python benchmarks/query_latency.py [--n 200] [--rounds 3]
Writes benchmarks/results/query_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from sentence_cache import first_sentences  # noqa: E402

RESULT = ROOT / "benchmarks" / "results" / "query_latency.json"
MODEL = "all-MiniLM-L6-v2"


def load_paths(model_path: Path) -> tuple[dict, dict]:
    """name → encode-one-text function; the encoder's choice."""
    from sentence_transformers import SentenceTransformer

    from searchapp.embedding.encoder import SiameseEncoder

    st = SentenceTransformer(str(model_path), device="cpu")
    ours = SiameseEncoder.load(model_path, device="cpu")
    paths = {"st": lambda q: st.encode([q]), "ours": lambda q: ours.encode([q])}
    for forced in ("cpu-bf16", "cpu-fp32"):
        paths[f"ours-{forced.split('-')[1]}"] = (
            lambda q, p=forced: ours._encode_on(p, [q], None))
    return paths, {"speed_path": ours.speed_path, "query_path": ours.query_path,
                   "reason": ours.speed_reason}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import torch

    from searchapp.embedding import speed
    from searchapp.embedding.models import BUNDLED

    cpu = speed.read_cpuinfo()
    queries = first_sentences(args.n)
    paths, choice = load_paths(BUNDLED[MODEL]())
    print(f"CPU: {cpu.model}; flags: {' '.join(cpu.relevant_flags)}; torch threads "
          f"{torch.get_num_threads()}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    print(f"chosen: batches {choice['speed_path']}, one query {choice['query_path']} "
          f"({choice['reason']})")
    for encode in paths.values():  # warm-up
        for q in queries[:20]:
            encode(q)
    ms: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(args.rounds):
        for q in queries:
            for name, encode in paths.items():
                started = time.perf_counter()
                encode(q)
                ms[name].append((time.perf_counter() - started) * 1000)
    summary = {name: {"p50_ms": round(float(np.median(v)), 2),
                      "p90_ms": round(float(np.percentile(v, 90)), 2), "n": len(v)}
               for name, v in ms.items()}
    peer = summary["st"]["p50_ms"]
    for name, row in summary.items():
        row["over_st_p50"] = round(row["p50_ms"] / peer, 3)
        print(f"{name:10s} p50 {row['p50_ms']:6.2f} ms  p90 {row['p90_ms']:6.2f} ms  "
              f"ours/st {row['over_st_p50']:.3f}")
    result = {"cpu": cpu.model, "cpu_flags": cpu.relevant_flags, "machine": platform.node(),
              "torch_threads": torch.get_num_threads(), "queries": len(queries),
              "rounds": args.rounds, "choice": choice, "paths": summary,
              "load_1min": os.getloadavg()[0]}
    RESULT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {RESULT}")


if __name__ == "__main__":
    main()
