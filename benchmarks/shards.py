"""Shards and compressed vectors: recall@10, latency, memory and build time per (shards, kind).

Clustered synthetic 384-d unit vectors with a known neighbour structure
(``synthetic.clustered_vectors``: topics, clusters, near-duplicates), ids 1..N,
queries = fresh points of the same clusters. For S in 1, 2, 4, 8 the ids are
placed with ``shard_of(ids, S)`` and each shard builds one index of each kind
(``make_index``: float32 hnswlib with the app's IndexParams, sq8, pq re-ranked on
the float32 vectors, read here from memory where the shard reads the
``embeddings`` table), adding in chunks of 20,000 as a shard server reads them.
A query fans out to every shard (a thread pool, one task per shard) and the top
10 by score are merged. Recall is against exact search (brute force over all N in
chunks). The peer is S=1 float32: what the app does today. hnswlib builds on all
cores (its own threads); faiss on 1 (OMP_NUM_THREADS=1).

Run (2 cores, AMD EPYC; results/shards.json and results/shards_1000000.json):
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/shards.py \
        --vectors 200000 --compare-sq8                         # 4 min 52 s
    ... --vectors 1000000 --shards 1,8 --out benchmarks/results/shards_1000000.json  # 8 min 40 s
The default (1,000,000 vectors, 1, 2, 4 and 8 shards) takes about 17 minutes: each S
builds the float32 graphs again (200-240 s for 1M on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from searchapp.search.shards.compressed import (
    PQ_M,
    PROBE_SHARE,
    RERANK,
    SQ_MARGIN,
    TRAIN_AT,
    CompressedParams,
    load_faiss,
    make_index,
)
from searchapp.store.shard_rows import shard_of
from searchapp.vectors.index import LABEL_MAP_BYTES, IndexParams, VectorIndex, ef_search_for

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synthetic import clustered_vectors  # noqa: E402

K = 10
CHUNK = 20_000  # vectors per add, as vectors_in_shard reads them
TRUTH_CHUNK = 100_000


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int = K) -> np.ndarray:
    """Ids (1-based) of the exact top k of each query, over the vectors in chunks."""
    best_ids = np.zeros((len(queries), 0), np.int64)
    best_scores = np.zeros((len(queries), 0), np.float32)
    for start in range(0, len(vectors), TRUTH_CHUNK):
        scores = queries @ vectors[start:start + TRUTH_CHUNK].T
        ids = np.broadcast_to(np.arange(start + 1, start + 1 + scores.shape[1]), scores.shape)
        best_ids = np.hstack([best_ids, ids])
        best_scores = np.hstack([best_scores, scores])
        top = np.argsort(-best_scores, axis=1)[:, :k]
        best_ids = np.take_along_axis(best_ids, top, 1)
        best_scores = np.take_along_axis(best_scores, top, 1)
    return best_ids


def build_shard(kind: str, ids: np.ndarray, vectors: np.ndarray, full_vectors,
                params: CompressedParams | None = None):
    """One shard's index of ``kind`` over its ids; returns (index, seconds)."""
    started = time.perf_counter()
    index = VectorIndex(vectors.shape[1], IndexParams(), capacity=len(ids)) \
        if kind == "float32" else make_index(kind, vectors.shape[1], full_vectors, params)
    for start in range(0, len(ids), CHUNK):
        part = ids[start:start + CHUNK]
        index.add(part, vectors[part - 1])
    return index, time.perf_counter() - started


def fan_out(pool: ThreadPoolExecutor, shards: list, query: np.ndarray) -> np.ndarray:
    """The merged top K ids of one query over every shard (one task per shard)."""
    parts = list(pool.map(lambda index: index.search(query[None], K), shards))
    labels = np.concatenate([p[0][0] for p in parts])
    scores = np.concatenate([p[1][0] for p in parts])
    return labels[np.argsort(-scores, kind="stable")[:K]]


def measure(shards: list, queries: np.ndarray, truth: np.ndarray) -> dict:
    """Recall@10 and p50/p99 latency (ms) of the fanned-out queries, one at a time."""
    ms, hits = [], []
    with ThreadPoolExecutor(max_workers=len(shards)) as pool:
        fan_out(pool, shards, queries[0])  # threads started
        for query, want in zip(queries, truth, strict=True):
            started = time.perf_counter()
            found = fan_out(pool, shards, query)
            ms.append(1000 * (time.perf_counter() - started))
            hits.append(len(set(found.tolist()) & set(want.tolist())) / K)
    return {"recall_at_10": round(float(np.mean(hits)), 4),
            "p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p99_ms": round(float(np.percentile(ms, 99)), 3)}


def run_case(s: int, kind: str, vectors: np.ndarray, queries: np.ndarray,
             truth: np.ndarray, params: CompressedParams) -> dict:
    """Build S shards of one kind, measure them, and free them."""
    ids = np.arange(1, len(vectors) + 1, dtype=np.int64)
    owner = shard_of(ids, s)

    def full_vectors(labels):
        return labels, vectors[np.asarray(labels) - 1]

    shards, seconds = [], []
    for shard in range(s):
        index, took = build_shard(kind, ids[owner == shard], vectors, full_vectors, params)
        shards.append(index)
        seconds.append(took)
    memory = [index.memory_bytes() for index in shards]
    row = {"shards": s, "kind": kind, **measure(shards, queries, truth),
           "memory_per_shard_mb": round(max(memory) / 2**20, 1),
           "memory_total_mb": round(sum(memory) / 2**20, 1),
           "build_sum_s": round(sum(seconds), 1), "build_max_s": round(max(seconds), 1)}
    if kind != "float32":
        row["nlist"], row["nprobe"] = shards[0]._ivf.nlist, shards[0]._nprobe()
    return row


def with_ratios(row: dict, peer: dict) -> dict:
    """The row with its ratio to the peer (S=1 float32) for each number."""
    keys = ("recall_at_10", "p50_ms", "p99_ms", "memory_total_mb", "build_sum_s", "build_max_s")
    return {**row, "vs_peer": {k: round(row[k] / peer[k], 3) if peer[k] else None for k in keys}}


def formulas(dim: int = 384, m: int = IndexParams().M) -> dict:
    """Memory per passage, bytes = a + b*dim, for each kind (the trained tables aside)."""
    float32_a = (2 * m + 1) * 4 + 8 + 12 + (m + 1) * 4 / (m - 1) + LABEL_MAP_BYTES
    return {
        "float32": f"{float32_a:.1f} + 4*dim  (hnswlib: level-0 links (2M+1)*4, label 8, "
                   f"level and pointer 12, upper links (M+1)*4/(M-1), label map "
                   f"~{LABEL_MAP_BYTES}; M={m}) = {float32_a + 4 * dim:.0f} B at dim {dim}",
        "sq8": f"8 + 1*dim  (a code byte per dimension, an 8-byte id) = {8 + dim} B at dim {dim}; "
               "plus once per shard nlist*dim*4 centroids and 2*dim*4 ranges",
        "pq": f"8 + m  (m={PQ_M} code bytes, an 8-byte id; b = 0) = {8 + PQ_M} B; plus once per "
              "shard nlist*dim*4 centroids and 256*dim*4 codebooks; re-ranking reads "
              "rerank*k full vectors per query from the database",
    }


def compare_sq8(vectors: np.ndarray, queries: np.ndarray, truth: np.ndarray) -> dict:
    """faiss IndexHNSWSQ (no removal) against the IVF-SQ8 index used, one shard."""
    faiss = load_faiss(1)
    out = {}
    started = time.perf_counter()
    hnsw = faiss.IndexHNSWSQ(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, IndexParams().M,
                             faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = IndexParams().ef_construction
    hnsw.train(vectors[:100_000])
    hnsw.add(vectors)
    hnsw.hnsw.efSearch = ef_search_for(len(vectors))
    build = time.perf_counter() - started

    class Hnsw:  # the search interface measure() calls
        def search(self, query, k):
            scores, labels = hnsw.search(query, k)
            return labels + 1, scores

    out["hnsw_sq8"] = {"build_s": round(build, 1), **measure([Hnsw()], queries, truth)}
    ids = np.arange(1, len(vectors) + 1, dtype=np.int64)
    ivf, took = build_shard("sq8", ids, vectors, None)
    out["ivf_sq8"] = {"build_s": round(took, 1), **measure([ivf], queries, truth)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--shards", default="1,2,4,8")
    parser.add_argument("--kinds", default="float32,sq8,pq")
    parser.add_argument("--compare-sq8", action="store_true",
                        help="also HNSW-SQ8 against IVF-SQ8 on one shard")
    parser.add_argument("--out", default=str(HERE / "results" / "shards.json"))
    parser.add_argument("--train-at", type=int, default=TRAIN_AT,
                        help="vectors a compressed shard holds before it trains its codes")
    args = parser.parse_args()
    params = CompressedParams(train_at=args.train_at)
    began = time.perf_counter()
    everything = clustered_vectors(args.vectors + args.queries, seed=0)
    vectors, queries = everything[:args.vectors], everything[args.vectors:]
    truth = exact_top(vectors, queries)
    print(f"{args.vectors:,} vectors and exact truth in {time.perf_counter() - began:.0f} s",
          flush=True)
    rows, peer = [], None
    for s in (int(x) for x in args.shards.split(",")):
        for kind in args.kinds.split(","):
            row = run_case(s, kind, vectors, queries, truth, params)
            peer = peer or (row if (s, kind) == (1, "float32") else None)
            rows.append(with_ratios(row, peer) if peer else row)
            print(json.dumps(rows[-1]), flush=True)
    out = {"what": __doc__.split("\n\n")[1].replace("\n", " "),
           "cpu": cpu_model(), "cpus": len(os.sched_getaffinity(0)),
           "vectors": args.vectors, "queries": args.queries, "k": K,
           "sq8_margin": SQ_MARGIN, "pq_m": PQ_M, "rerank": RERANK, "probe_share": PROBE_SHARE,
           "train_at": args.train_at,
           "command": "OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python "
                      "benchmarks/shards.py " + " ".join(sys.argv[1:]),
           "memory_per_passage": formulas(), "rows": rows}
    if args.compare_sq8:
        out["sq8_structures"] = compare_sq8(vectors, queries, truth)
        print(json.dumps(out["sq8_structures"]), flush=True)
    out["total_s"] = round(time.perf_counter() - began, 1)
    for line in formulas().items():
        print(*line, sep=": ")
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")


def cpu_model() -> str:
    """The machine's CPU model name (/proc/cpuinfo)."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    main()
