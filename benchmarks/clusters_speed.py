"""How long the whole ``clusters`` job takes (clusters, map, labels), and against a peer.

Inputs:
- ``sentences``: the ~60,000 unique sentences of ../shared/data (STSb, NLI,
  MRPC), embedded with the bundled model (cached in benchmarks/.cache/).
- ``synthetic``: 200,000 unit vectors in 100 planted clusters of Zipf-like
  sizes plus 3% isolated outliers, with texts made of each cluster's topic
  words and shared filler words.

Each input is stored as a real corpus (SQLite + HNSW index, built once and
kept in benchmarks/.cache/speed-data); then the job runs through the queue as
the worker runs it, timed from claim to stored result, for each method.

Peer (same vectors, same run): sentence-transformers' ``community_detection``
(all pairs, in batches) with the same threshold and minimum size, against our
community step over the HNSW k-NN graph; their agreement (ARI) shows that the
shortcut finds the same communities.

Run: PYTHONPATH=. nice python benchmarks/clusters_speed.py [sentences] [synthetic] [--peer]
``--methods=auto,community,kmeans`` runs only those (earlier results of the others
are kept; ``auto``, the default, draws a PCA map here); ``--n=100000`` makes the
synthetic input that size; ``--cached-only`` takes only the sentences already embedded in the
cache, when embedding all of them cannot finish in time. Results are written
after each job.
Writes benchmarks/results/clusters_speed.json.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / ".cache" / "speed-data"
os.environ["SEARCHAPP_DATA_DIR"] = str(DATA)
os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")

from sentence_cache import all_sentences, all_vectors  # noqa: E402
from sklearn.metrics import adjusted_rand_score  # noqa: E402
from sqlalchemy import delete  # noqa: E402
from synthetic import store_corpus  # noqa: E402

from searchapp.clusters import (  # noqa: E402
    KIND,
    METHODS,
    ClusterParams,
    cached_clusters,
    community_detection,
    request_clusters,
)
from searchapp.context import App  # noqa: E402
from searchapp.jobs.worker import run_until_done  # noqa: E402
from searchapp.store import repo  # noqa: E402
from searchapp.store.schema import Analysis  # noqa: E402
from searchapp.vectors.handle import open_corpus  # noqa: E402

MODEL = "all-MiniLM-L6-v2"
RESULTS = HERE / "results" / "clusters_speed.json"
FILLER = ("report", "update", "question", "issue", "note", "detail", "summary", "request")


def letters(i: int) -> str:
    """0 → 'aa', 1 → 'ab', ...: ids as words (the label tokenizer drops digits)."""
    return "".join("abcdefghijklmnopqrstuvwxyz"[d] for d in divmod(i, 26))


def synthetic(n: int = 200_000, clusters: int = 100, dim: int = 384, sigma: float = 0.8,
              outlier_share: float = 0.03, seed: int = 0):
    """Planted clusters: texts, unit vectors (n, dim) float32, truth (-1: outlier)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, clusters + 1) ** 0.8  # Zipf-like cluster sizes
    n_out = int(n * outlier_share)
    truth = rng.choice(clusters, size=n - n_out, p=weights / weights.sum())
    truth = np.concatenate([truth, np.full(n_out, -1)])
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 20_000):  # centre + noise of norm ≈ sigma; outliers: random
        t = truth[start:start + 20_000]
        noise = rng.normal(size=(len(t), dim)).astype(np.float32) * (sigma / np.sqrt(dim))
        vectors[start:start + 20_000] = np.where(
            (t >= 0)[:, None], centres[t.clip(0)] + noise,
            rng.normal(size=(len(t), dim)).astype(np.float32))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"topic{letters(c)} {FILLER[i % 8]} theme{letters(c)} {FILLER[(i * 7) % 8]}"
             if c >= 0 else f"stray {FILLER[i % 8]}" for i, c in enumerate(truth)]
    return texts, vectors, truth


def store_and_index(app: App, name: str, texts: list[str], vectors: np.ndarray) -> float:
    """Store documents and vectors as a corpus (once) and build its index; setup seconds."""
    started = time.perf_counter()
    store_corpus(app, name, texts, vectors, log=lambda m: print(m, flush=True))
    open_corpus(app, name)  # builds (or loads) the HNSW index
    return time.perf_counter() - started


def run_job(app: App, name: str, params: ClusterParams) -> dict:
    """Drop any stored result, run the job as the worker would, and time it."""
    params = params.validated()
    with app.db.session() as s:
        s.execute(delete(Analysis).where(Analysis.corpus_id == repo.get_corpus(s, name).id,
                                         Analysis.kind == KIND,
                                         Analysis.params_key == params.key()))
    started = time.perf_counter()
    _, job_id = request_clusters(app, name, params)
    job = run_until_done(app, job_id)
    seconds = time.perf_counter() - started
    if job.status != "succeeded":
        raise SystemExit(f"job failed: {job.error}")
    result = cached_clusters(app, name, params)
    return {"params": result.params, "job_seconds": round(seconds, 1),
            "steps": result.seconds, "clusters": len(result.clusters),
            "outliers": result.outliers, "projection": result.projection,
            "assign": result}


def warm_numba() -> float:
    """UMAP compiles with numba on first use in a process (a worker pays it once)."""
    import umap

    started = time.perf_counter()
    umap.UMAP(n_components=2).fit_transform(np.random.default_rng(0).normal(size=(300, 8)))
    return time.perf_counter() - started


def peer_community(app: App, name: str, vectors: np.ndarray, ours_params: dict,
                   ours_rows: np.ndarray) -> dict:
    """sentence-transformers' all-pairs community detection vs our k-NN graph version."""
    import torch
    from sentence_transformers.util import community_detection as st_communities

    threshold, min_size = ours_params["threshold"], ours_params["min_size"]
    started = time.perf_counter()
    communities = st_communities(torch.from_numpy(vectors), threshold=threshold,
                                 min_community_size=min_size, batch_size=1024)
    peer_seconds = time.perf_counter() - started
    peer_rows = np.full(len(vectors), -1)
    for c, members in enumerate(communities):
        peer_rows[members] = c
    # Our clustering step alone (graph + communities), on the same index as the job.
    handle = open_corpus(app, name)
    started = time.perf_counter()
    labels, scores = handle.index.knn_graph(max(30, min_size))
    ids = handle.index.labels()
    from searchapp.clusters.compute import _expander

    rows = community_detection(np.searchsorted(ids, labels), scores, threshold, min_size,
                               _expander(handle.index, ids, vectors, labels.shape[1],
                                         threshold))
    ours_seconds = time.perf_counter() - started
    return {"peer": "sentence_transformers.util.community_detection (all pairs, CPU)",
            "peer_seconds": round(peer_seconds, 1), "ours_seconds": round(ours_seconds, 1),
            "speedup": round(peer_seconds / ours_seconds, 1),
            "peer_communities": len(communities),
            "ours_communities": int(rows.max() + 1),
            "ari_ours_vs_peer": round(float(adjusted_rand_score(peer_rows, rows)), 4),
            "ari_job_vs_peer": round(float(adjusted_rand_score(peer_rows, ours_rows)), 4)}


def bench(app: App, name: str, texts, vectors, truth, methods, peer: bool, save,
          previous: dict) -> dict:
    """Time each method's job on one corpus (jobs of other methods from earlier runs kept)."""
    setup = store_and_index(app, name, texts, vectors)
    print(f"{name}: {len(texts):,} documents stored and indexed in {setup:.0f} s", flush=True)
    out = {"documents": len(texts), "setup_seconds": round(setup, 1),
           "jobs": [j for j in previous.get(name, {}).get("jobs", [])
                    if j["params"]["method"] not in {p.method for p in methods}]}
    save(name, out)
    for params in methods:
        run = run_job(app, name, params)
        result = run.pop("assign")
        # Jobs return rows in index (doc id) order; stored documents follow the input order.
        order = np.argsort([int(i.rsplit("-", 1)[1]) for i in result.ids])
        rows = result.cluster[order]
        if truth is not None:
            run["ari_vs_planted"] = round(float(adjusted_rand_score(truth, rows)), 4)
            run["planted_outliers_kept_out"] = round(float((rows[truth < 0] < 0).mean()), 4)
        print(name, json.dumps(run), flush=True)
        if peer and params.method == "community":
            run["peer"] = peer_community(app, name, vectors, run["params"], rows)
            print(name, "peer", json.dumps(run["peer"]), flush=True)
        out["jobs"].append(run)
        save(name, out)  # partial results survive an interrupted run
    return out


def main(argv: list[str]) -> None:
    which = [a for a in argv if not a.startswith("--")] or ["sentences", "synthetic"]
    peer = "--peer" in argv
    app = App()
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}

    def save(name: str, out: dict) -> None:
        results[name] = out
        results["cpu"] = (f"{os.cpu_count()} cores shared with other jobs; nice, "
                          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
        results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")

    results["numba_compile_seconds"] = round(warm_numba(), 1)
    fast = ClusterParams("kmeans", k=20, projection="pca")
    chosen = next((a.split("=", 1)[1].split(",") for a in argv if a.startswith("--methods=")),
                  list(METHODS))
    methods = [p for p in (ClusterParams("auto", projection="pca"), ClusterParams("community"),
                           fast, ClusterParams("hdbscan")) if p.method in chosen]
    if "sentences" in which:
        frame, vectors = all_vectors(log=lambda m: print(m, flush=True),
                                     cached_only="--cached-only" in argv)
        name = "sentences" if len(frame) == len(all_sentences()) else f"sentences-{len(frame)}"
        bench(app, name, frame.text.tolist(), vectors, None, methods, peer, save, results)
    if "synthetic" in which:
        size = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("--n=")), 200_000)
        texts, vectors, truth = synthetic(size)
        name = "synthetic" if size == 200_000 else f"synthetic-{size}"
        bench(app, name, texts, vectors, truth, methods, peer, save, results)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
