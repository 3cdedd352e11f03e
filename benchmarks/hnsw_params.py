"""HNSW build parameters: build time and recall@10 for ef_construction 100 and 200.

Bare hnswlib (M=16) on clustered synthetic vectors (``benchmarks/synthetic.py``),
500 held-out queries, recall against exact search, at ef_search 64, 128 and
256. It chose the app's default ef_construction; the result is in
``benchmarks/results/hnsw_params.json``.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/hnsw_params.py --docs 200000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import hnswlib
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synthetic import clustered_vectors  # noqa: E402

QUERIES = 500
K = 10


def build(vectors: np.ndarray, ef_construction: int) -> tuple[hnswlib.Index, float]:
    index = hnswlib.Index(space="ip", dim=vectors.shape[1])
    index.init_index(max_elements=len(vectors), ef_construction=ef_construction, M=16)
    started = time.perf_counter()
    for start in range(0, len(vectors), 1024):  # batches, as the embed job adds them
        end = min(start + 1024, len(vectors))
        index.add_items(vectors[start:end], np.arange(start, end))
    return index, time.perf_counter() - started


def measure(index: hnswlib.Index, queries: np.ndarray, truth: np.ndarray, ef: int) -> dict:
    index.set_ef(ef)
    ms, found = [], []
    for query in queries:
        started = time.perf_counter()
        labels, _ = index.knn_query(query[None], k=K)
        ms.append(1000 * (time.perf_counter() - started))
        found.append(labels[0])
    recall = np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth, strict=True)])
    return {"recall": round(float(recall), 4), "p50_ms": round(float(np.median(ms)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=200_000)
    args = parser.parse_args()
    everything = clustered_vectors(args.docs + QUERIES, seed=0)
    vectors, queries = everything[:args.docs], everything[args.docs:]
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :K]
    results = {}
    for ef_construction in (100, 200):
        index, seconds = build(vectors, ef_construction)
        for ef in (64, 128, 256):
            results[f"efc{ef_construction}_ef{ef}"] = {
                "build_s": round(seconds, 1), **measure(index, queries, truth, ef)}
        print(json.dumps(results), flush=True)
    out = {"what": f"bare hnswlib (M=16), {args.docs:,} clustered synthetic 384-d vectors, "
                   f"{QUERIES} held-out queries, k={K}, recall against exact search; build = "
                   "add_items in batches of 1024 on 2 threads",
           "command": f"PYTHONPATH=. .venv/bin/python benchmarks/hnsw_params.py --docs {args.docs}",
           "results": results}
    (HERE / "results" / "hnsw_params.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
