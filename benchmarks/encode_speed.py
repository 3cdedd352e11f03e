"""Sentences per second of our encoder against sentence-transformers ``encode``.

Every path encodes the same sentences (unique STSb sentences, then NLI
premises/hypotheses, as in ``ingest_search.py``), in rounds: each round runs
every path once, in the same order, so the paths share the machine's
conditions; the result keeps every round's time. Before the rounds each path
encodes the first 500 sentences once (warm-up: oneDNN kernels, caches).

Paths:
- ``st``: ``SentenceTransformer(model).encode(texts)``, default backend and
  batch size (32): the reference; its vectors are the fp32 reference too.
- ``st-onnx``: ``SentenceTransformer(model, backend="onnx")`` where it installs
  and runs offline (``pip install sentence-transformers[onnx]``); otherwise the
  result records why not.
- ``ours``: ``SiameseEncoder.load(model).encode(texts)``, the path chosen at
  load time for this CPU (``encoder.speed_path``).
- ``ours-fp32``: the same, forced to float32 (what a CPU without native bf16 gets).
- ``ours-batch32``: ``encode(texts, batch_size=32)`` on the chosen path:
  fixed batches instead of batches by token budget.

For each: seconds per round, sentences/s (best round), ratio to ``st`` and to
the fastest sentence-transformers backend (per round and best against best),
and the minimum cosine of its vectors to the ``st`` vectors (exact means
≥ 0.9999 for every sentence).

Run:  PYTHONPATH=. .venv/bin/python benchmarks/encode_speed.py [--n 10000] [--rounds 3]
      [--device cuda --out benchmarks/results/encode_speed_cuda.json]  (on a GPU)
Writes benchmarks/results/encode_speed.json (an ``experiments`` entry already
in that file, the measured options that were not kept, is carried over).
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

RESULT = ROOT / "benchmarks" / "results" / "encode_speed.json"
MODEL = "all-MiniLM-L6-v2"
EXACT = 0.9999


def min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float((a * b).sum(axis=1).min())


def load_paths(model_path: Path, device: str = "cpu") -> tuple[dict, dict, dict]:
    """name → encode function; name → notes; the encoder's choice.

    On ``cuda`` the peers are sentence-transformers in float32 with its default batch
    (``st``, still the reference) and in fp16 with batches of 256 (``st-fp16-b256``,
    the fastest a user of it would set up); its ONNX backend runs on the CPU, so it
    is left out there.
    """
    from sentence_transformers import SentenceTransformer

    from searchapp.embedding.encoder import SiameseEncoder

    paths, notes = {}, {}
    st = SentenceTransformer(str(model_path), device=device)
    paths["st"] = st.encode
    if device == "cuda":
        st16 = SentenceTransformer(str(model_path), device=device).half()
        paths["st-fp16-b256"] = lambda texts: st16.encode(texts, batch_size=256)
        notes["st-onnx"] = "not measured on cuda (its ONNX backend runs on the CPU)"
    else:
        try:
            st_onnx = SentenceTransformer(str(model_path), device="cpu", backend="onnx")
            paths["st-onnx"] = st_onnx.encode
        except Exception as exc:  # any failure to install/export/run is the finding
            notes["st-onnx"] = f"not available: {type(exc).__name__}: {str(exc)[:300]}"
    start = time.perf_counter()
    ours = SiameseEncoder.load(model_path, device=device)
    load_s = time.perf_counter() - start
    fp32 = SiameseEncoder.load(model_path, device=device, precision="fp32")
    paths["ours"] = ours.encode
    paths["ours-fp32"] = fp32.encode
    if device == "cuda":  # the GPU batch's size limits, measured (speed.CUDA_TOKEN_BUDGET,
        # speed.MAX_BATCH), on the chosen path and on float32
        for name, enc in (("ours", ours), ("ours-fp32", fp32)):
            paths[f"{name}-budget-131072-max-4096"] = _with_limits(enc.encode, 131072, 4096)
    if device != "cuda":  # on a GPU, batches of 32 are known to starve it
        paths["ours-batch32"] = lambda texts: ours.encode(texts, batch_size=32)
    choice = {"speed_path": ours.speed_path, "reason": ours.speed_reason,
              "load_s_with_probe": round(load_s, 2)}
    return paths, notes, choice


def _with_limits(encode, budget: int, max_batch: int):
    """``encode`` with the GPU batches' token budget and most texts per batch set for the
    call."""
    import functools

    from searchapp.embedding import speed

    def run(texts):
        kept = speed.CUDA_TOKEN_BUDGET, speed.token_batches
        speed.CUDA_TOKEN_BUDGET = budget
        speed.token_batches = functools.partial(kept[1], max_batch=max_batch)
        try:
            return encode(texts)
        finally:
            speed.CUDA_TOKEN_BUDGET, speed.token_batches = kept
    return run


def long_texts(csv_file: Path, n: int) -> list[str]:
    """``n`` texts from the ``text`` column of ``csv_file``, repeated as needed (long inputs:
    sections of a manual, cut at the model's 256 tokens by every path alike)."""
    import pandas as pd

    pool = [t for t in pd.read_csv(csv_file, keep_default_na=False)["text"] if t.strip()]
    return [pool[i % len(pool)] for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--texts", type=Path, default=None,
                        help="a CSV with a text column to encode instead of the sentences")
    args = parser.parse_args()

    import torch

    from searchapp.embedding import speed
    from searchapp.embedding.models import BUNDLED

    cpu = speed.read_cpuinfo()
    texts = long_texts(args.texts, args.n) if args.texts else first_sentences(args.n)
    paths, notes, choice = load_paths(BUNDLED[MODEL](), args.device)
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else None
    if gpu:
        print(f"GPU: {gpu}; torch {torch.__version__}")
    print(f"CPU: {cpu.model}; flags: {' '.join(cpu.relevant_flags)}; "
          f"torch threads {torch.get_num_threads()}; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
    print(f"chosen path: {choice['speed_path']} ({choice['reason']})")
    for name, why in notes.items():
        print(f"{name}: {why}")

    for encode in paths.values():  # warm-up, not timed
        encode(texts[:500])
    times: dict[str, list[float]] = {name: [] for name in paths}
    loads: list[float] = []
    vectors: dict[str, np.ndarray] = {}
    for r in range(args.rounds):
        loads.append(round(os.getloadavg()[0], 2))
        for name, encode in paths.items():
            start = time.perf_counter()
            out = encode(texts)
            if args.device == "cuda":
                torch.cuda.synchronize()
            times[name].append(round(time.perf_counter() - start, 3))
            vectors.setdefault(name, np.asarray(out, dtype=np.float32))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items())
              + f" (load avg {loads[-1]})")

    peers = [p for p in ("st", "st-onnx", "st-fp16-b256") if p in times]
    fastest_peer = min(peers, key=lambda p: min(times[p]))
    rows = {}
    for name, ts in times.items():
        rows[name] = {
            "seconds": ts,
            "sentences_per_s": round(len(texts) / min(ts), 1),
            "ratio_to_st": round(min(times["st"]) / min(ts), 3),
            "ratio_to_st_per_round": [round(a / b, 3) for a, b in zip(times["st"], ts,
                                                                      strict=True)],
            "ratio_to_fastest_st_backend": round(min(times[fastest_peer]) / min(ts), 3),
            "min_cosine_to_st_fp32": round(min_cosine(vectors[name], vectors["st"]), 6),
        }
    print(f"\n{'path':14s} {'sent/s':>8s} {'× st':>6s} {'× ' + fastest_peer:>10s} "
          f"{'min cos':>9s}  seconds per round")
    for name, row in rows.items():
        print(f"{name:14s} {row['sentences_per_s']:8.1f} {row['ratio_to_st']:6.2f} "
              f"{row['ratio_to_fastest_st_backend']:10.2f} {row['min_cosine_to_st_fp32']:9.6f}"
              f"  {row['seconds']}")
    ours = rows["ours"]
    target = ours["ratio_to_st"] >= 1.5 and ours["ratio_to_fastest_st_backend"] >= 1.0
    exact = all(r["min_cosine_to_st_fp32"] >= EXACT for r in rows.values())
    print(f"\nours ({choice['speed_path']}): {ours['ratio_to_st']:.2f}× sentence-transformers "
          f"default, {ours['ratio_to_fastest_st_backend']:.2f}× its fastest backend "
          f"({fastest_peer}); target (≥ 1.5× and ≥ 1.0×) {'met' if target else 'NOT met'}; "
          f"every path exact (cos ≥ {EXACT}): {exact}")

    previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
    result = {
        "sentences": len(texts),
        "texts": str(args.texts) if args.texts else "STSb, then NLI sentences",
        "rounds": args.rounds,
        "device": args.device, "gpu": gpu,
        "cpu": {"model": cpu.model, "flags": cpu.relevant_flags,
                "native_bf16": cpu.native_bf16, "cores": os.cpu_count()},
        "torch": torch.__version__, "python": platform.python_version(),
        "torch_threads": torch.get_num_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(unset)"),
        "load_avg_at_round_start": loads,
        "chosen": choice,
        "paths": rows,
        "fastest_st_backend": fastest_peer,
        "not_measured": notes,
        "target_met": target,
        "all_exact": exact,
        "command": "PYTHONPATH=. .venv/bin/python " + " ".join(sys.argv),
    }
    if "experiments" in previous:
        result["experiments"] = previous["experiments"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
