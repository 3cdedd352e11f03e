"""Search latency at 100,000 documents: hybrid against semantic (the peer) in the same run,
and filtered semantic search: widening the candidates, exact over the filtered ids, hnswlib's
filtered graph search.

The corpus is 100,000 real texts (every unique shared sentence, then joined
pairs, as ``scale.py ingest``) stored through the store, so the SQLite FTS5
index is the real one, built by its triggers. The vectors are synthetic
clustered unit vectors (``synthetic.py``): encoding 100,000 texts on two busy
cores takes longer than this benchmark is worth, and the cost of a search does
not depend on which vector sits at which label. ``OMP_WAIT_POLICY=PASSIVE``
(set here unless given): on a shared, busy machine torch's spinning threads made
one query's encoding 1.7 s instead of 15 ms. Queries are real STSb
sentences, encoded on each search (the whole query path: encoder, hnswlib,
FTS5, fusion, rows, snippets). Semantic and hybrid alternate who goes first per
query. Metadata: ``year`` (25 values), ``product`` (10 values), ``bucket`` (1,000
values) for filters matching 96%, 10% and 0.1% of the documents.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/hybrid_latency.py [--docs 100000]
Writes benchmarks/results/hybrid_latency_{docs}.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads: no spinning threads

from scale import machine, real_texts  # noqa: E402
from synthetic import clustered_vectors  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
MODEL = "all-MiniLM-L6-v2"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def pct(ms: list[float]) -> dict:
    ordered = sorted(ms)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
            "mean_ms": round(statistics.fmean(ordered), 2), "n": len(ordered)}


def store(app, name: str, texts: list[str], vectors: np.ndarray) -> float:
    """Documents with metadata (one upload), then their vectors in batches, as the job does."""
    from searchapp.store import repo

    model = app.model_ref(MODEL)
    started = time.perf_counter()
    with app.db.session() as s:
        found = repo.find_corpus(s, name)
        if found is not None and found.document_count == len(texts):
            log(f"{name}: stored already (--work)")
            return 0.0
    docs = [repo.NewDocument(f"d{i}", t, {"year": str(2000 + i % 25),
                                            "product": f"p{i % 10}", "bucket": str(i % 1000)})
            for i, t in enumerate(texts)]
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, MODEL)
        repo.add_documents(s, corpus, docs)
        corpus_id = corpus.id
    log(f"{len(texts):,} documents (and their FTS5 rows) stored in "
        f"{time.perf_counter() - started:.1f} s")
    after, row = 0, 0
    while True:
        with app.db.session() as s:
            rows = repo.documents_missing_embedding(s, corpus_id, model.id, after, 20_000)
        if not rows:
            break
        after = rows[-1][0]
        with app.db.session() as s:
            repo.save_embeddings(s, corpus_id, model.id, [i for i, _ in rows],
                                 vectors[row:row + len(rows)])
        row += len(rows)
    return time.perf_counter() - started


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return 1000 * (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--filter-queries", type=int, default=15)
    parser.add_argument("--work", help="data folder to reuse (the corpus stored by a stopped run)")
    args = parser.parse_args()
    os.environ["SEARCHAPP_DATA_DIR"] = args.work or tempfile.mkdtemp(prefix="hybrid-latency-")
    import pandas as pd
    import sentence_cache

    from searchapp.context import App
    from searchapp.search import service as search_module
    from searchapp.search.service import search
    from searchapp.vectors.handle import open_corpus

    app = App()
    texts, origin = real_texts(args.docs)
    stored_s = store(app, "big", texts, clustered_vectors(args.docs))
    started = time.perf_counter()
    handle = open_corpus(app, "big")
    log(f"index built in {time.perf_counter() - started:.1f} s ({handle.index.count:,} vectors)")
    sts = pd.read_csv(sentence_cache.data_dir() / "stsb" / "stsbenchmark.tsv.gz", sep="\t",
                      keep_default_na=False)
    queries = [q for q in dict.fromkeys(sts[sts.split == "test"].sentence1)][:args.queries]
    for q in queries[:5]:  # warm-up: the model, the caches
        search(app, handle, q, mode="hybrid")
    times: dict[str, list[float]] = {"semantic": [], "hybrid": [], "lexical": []}
    load_before = os.getloadavg()
    for i, q in enumerate(queries):
        order = ("semantic", "hybrid") if i % 2 == 0 else ("hybrid", "semantic")
        for mode in order:
            times[mode].append(timed(lambda m=mode, q=q: search(app, handle, q, k=10, mode=m)))
        times["lexical"].append(timed(lambda q=q: search(app, handle, q, k=10, mode="lexical")))
    result = {"documents": args.docs, "texts": origin, "vectors": "synthetic clustered (384-d)",
              "store_seconds": round(stored_s, 1), "machine": machine(),
              "load_during": [load_before, os.getloadavg()],
              "search": {m: pct(v) for m, v in times.items()}}
    ratio = result["search"]["hybrid"]["p50_ms"] / result["search"]["semantic"]["p50_ms"]
    result["hybrid_over_semantic_p50"] = round(ratio, 3)
    log(f"semantic {result['search']['semantic']}")
    log(f"hybrid   {result['search']['hybrid']}")
    log(f"lexical  {result['search']['lexical']}")
    log(f"hybrid / semantic p50: {ratio:.2f} (target <= 1.5)")
    out = RESULTS / f"hybrid_latency_{args.docs}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")  # again below, with the filters

    # filtered semantic search: the three paths on the same queries
    encoder = app.encoder(MODEL)
    vectors = encoder.encode(queries[:args.filter_queries])
    filters = {"year>=2001 (96%)": ["year>=2001"], "product=p3 (10%)": ["product=p3"],
               "bucket=7 (0.1%)": ["bucket=7"]}
    paths = {
        "default (widen x4 up to 4096, then exact)": (search_module.semantic_candidates, {}),
        "exact over the filtered ids (SQL pass + dot products)":
            (search_module._filtered_exact, {"EXACT_FILTER_MAX": 10**9}),
        "hnswlib filtered graph search (SQL pass + knn_query filter)":
            (search_module._filtered_exact, {"EXACT_FILTER_MAX": 0}),
    }
    filtered: dict = {}
    from searchapp.search.filters import parse_condition, where_sql

    for label, where in filters.items():
        flt = where_sql([parse_condition(w) for w in where], "sqlite")
        filtered[label] = {}
        for path, (fn, patch) in paths.items():
            saved = {k: getattr(search_module, k) for k in patch}
            for k, v in patch.items():
                setattr(search_module, k, v)
            try:
                ms, counts = [], []
                for v in vectors:
                    with app.db.reader() as conn:
                        started = time.perf_counter()
                        found = fn(handle, v, 10, conn, flt)
                        ms.append(1000 * (time.perf_counter() - started))
                    counts.append(len(found))
                filtered[label][path] = {**pct(ms), "min_results": min(counts)}
            finally:
                for k, v in saved.items():
                    setattr(search_module, k, v)
            log(f"filter {label}, {path}: {filtered[label][path]}")
    result["filtered_semantic_candidates_k10"] = filtered
    out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
