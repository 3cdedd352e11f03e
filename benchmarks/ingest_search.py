"""Ingest + embed + index 10,000 sentences, then search latency, against peers.

Peers, measured in the same run on the same sentences:
- embedding: sentence-transformers ``encode`` of the same model (ours adds
  SQLite writes and index building on top of the encoding);
- search: brute-force cosine over the same vectors with numpy (query encoding
  included on both sides), and the CLI as a user runs it (process start,
  imports and model load included).

Run:  PYTHONPATH=. python benchmarks/ingest_search.py [--n 10000] [--queries 200]
Writes benchmarks/results/ingest_search.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from sentence_cache import first_sentences  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def run_cli(*args: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "searchapp", *args], check=True, env=env,
                   capture_output=True, text=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cli-queries", type=int, default=5)
    args = parser.parse_args()
    texts = first_sentences(args.n)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(tmp / "data"), "SEARCHAPP_DEVICE": "cpu"}
    csv = tmp / "sentences.csv"
    pd.DataFrame({"text": texts}).to_csv(csv, index=False)

    # ours: the CLI, end to end (read, store, embed, store vectors, build and save the index)
    ingest_s = run_cli("ingest", str(csv), "--corpus", "bench", "--wait", env=env)

    # peer: sentence-transformers encoding alone, same model, same sentences
    from sentence_transformers import SentenceTransformer

    from searchapp.embedding.models import BUNDLED

    st_model = SentenceTransformer(str(BUNDLED["all-MiniLM-L6-v2"]()), device="cpu")
    start = time.perf_counter()
    st_vectors = st_model.encode(texts, batch_size=32)
    st_encode_s = time.perf_counter() - start

    # search in-process: ours (encode + HNSW/exact index + rows from SQLite) vs brute force
    os.environ.update(env)
    from searchapp.context import App
    from searchapp.search.service import search

    app = App()
    queries = texts[:: max(1, len(texts) // args.queries)][: args.queries]
    search(app, "bench", "warm up", k=10)
    ours, brute = [], []
    for q in queries:
        start = time.perf_counter()
        search(app, "bench", q, k=10)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        qv = st_model.encode([q])
        scores = st_vectors @ qv[0]
        np.argpartition(-scores, 10)[:10]
        brute.append(time.perf_counter() - start)
    cli = [run_cli("search", "--corpus", "bench", q, "-k", "10", env=env)
           for q in queries[: args.cli_queries]]

    result = {
        "n_sentences": len(texts),
        "ingest_embed_index_seconds_cli": round(ingest_s, 2),
        "sentence_transformers_encode_seconds": round(st_encode_s, 2),
        "ingest_vs_st_encode_ratio": round(ingest_s / st_encode_s, 3),
        "search_median_ms_in_process": round(1000 * statistics.median(ours), 2),
        "brute_force_median_ms_in_process": round(1000 * statistics.median(brute), 2),
        "search_vs_brute_ratio": round(statistics.median(ours) / statistics.median(brute), 3),
        "search_median_s_cli": round(statistics.median(cli), 2),
        "queries": len(queries),
        "cli_queries": len(cli),
        "machine": f"{os.cpu_count()} cores, CPU",
    }
    for key, value in result.items():
        print(f"{key:40s} {value}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ingest_search.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
