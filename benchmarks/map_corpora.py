"""Corpora for the map benchmark: 100,000 real texts embedded, and 1,000,000 derived from them.

``build100k --work DIR``: 100,000 real texts (``scale.real_texts``: every unique
STSb/NLI/MRPC sentence, then joined pairs), with their source as a metadata
column, uploaded through ``corpora.service.upload``, embedded by the real
embed job (run in this process) and clustered by the real clusters job
(community detection + UMAP, the page's default settings).

``build1m --work DIR --from DIR100K``: 1,000,000 documents made from those
100,000: each text ten times (``text [variant j]``) with its real vector plus
noise (σ ``NOISE`` per dimension before normalising: cosine ≈ 0.97 to the
original), stored through the store as the embed job stores them. The
clusters job at this size took ~24 minutes before on these 2 cores, so the
clusters result is stored directly, as the job stores one: each variant in its
original's cluster, at its original's map position plus a small jitter (the
page shows the note in the result's parameters). No HNSW index is built here
(22 minutes at this size on 2 cores): the Clusters page does not need it, and
in ``map_scale.py`` the app's warm-up thread starts building it in the same
process while the map is measured (as on a first start), which only slows ours.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/map_corpora.py build100k --work /tmp/map100k
      PYTHONPATH=. .venv/bin/python benchmarks/map_corpora.py build1m --work /tmp/map1m \
          --from /tmp/map100k
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

CORPUS = "atlas"
VARIANTS = 10
NOISE = 0.012  # per-dimension σ on a unit 384-d vector: cosine ≈ 1/sqrt(1 + 384σ²) ≈ 0.97
JITTER = 0.004  # of the map's extent


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def open_app(work: Path):
    os.environ["SEARCHAPP_DATA_DIR"] = str(work / "data")
    os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")
    from searchapp.context import App

    return App()


def build100k(work: Path, n: int) -> None:
    import pandas as pd
    import sentence_cache
    from scale import real_texts

    from searchapp.clusters import ClusterParams, compute_and_store
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work as run_jobs

    texts, composition = real_texts(n)
    sources = dict(zip(sentence_cache.all_sentences().text,
                       sentence_cache.all_sentences().source, strict=True))
    frame = pd.DataFrame({"id": [f"t{i}" for i in range(n)], "text": texts,
                          "source": [sources.get(t, "pair") for t in texts]})
    app = open_app(work)
    log(f"{composition}; uploading")
    started = time.perf_counter()
    upload(app, read_table(frame.to_csv(index=False).encode(), "atlas.csv"), CORPUS,
           "text", "id")
    log(f"stored in {time.perf_counter() - started:.0f} s; embedding (the embed job)")
    started = time.perf_counter()
    run_jobs(app, stop_when_idle=True)
    log(f"embedded in {time.perf_counter() - started:.0f} s; clustering (community + UMAP)")
    started = time.perf_counter()
    result = compute_and_store(app, CORPUS, ClusterParams())
    log(f"{len(result.clusters)} clusters, {result.outliers:,} outliers in "
        f"{time.perf_counter() - started:.0f} s")


def build1m(work: Path, source: Path) -> None:
    from synthetic import store_corpus

    from searchapp.clusters import KIND, ClusterParams, ClusterResult
    from searchapp.store import repo
    from searchapp.vectors.handle import open_corpus

    small = open_app(source)
    from searchapp.clusters import cached_clusters

    handle = open_corpus(small, CORPUS)
    result = cached_clusters(small, handle, ClusterParams())
    if result is None:
        raise SystemExit(f"no clusters result in {source}: run build100k first")
    with small.db.session() as s:
        docs = repo.documents_by_id(s, result.doc_ids.tolist())
        vectors = repo.vectors_for(s, handle.model.id, result.doc_ids, handle.model.dimension)
    texts = [docs[int(d)].text for d in result.doc_ids]
    n = len(texts)
    rng = np.random.default_rng(0)
    big = open_app(work)
    all_texts = [f"{t} [variant {j}]" if j else t for j in range(VARIANTS) for t in texts]
    all_vectors = np.concatenate([vectors] + [
        vectors + NOISE * rng.standard_normal(vectors.shape, dtype=np.float32)
        for _ in range(VARIANTS - 1)])
    all_vectors /= np.linalg.norm(all_vectors, axis=1, keepdims=True)
    log(f"{len(all_texts):,} documents from {n:,}; storing")
    stored = store_corpus(big, CORPUS, all_texts, all_vectors.astype(np.float32), log=log)
    del all_vectors
    extent = max(float(np.ptp(result.x)), float(np.ptp(result.y)))
    x = np.concatenate([result.x] + [result.x + JITTER * extent * rng.standard_normal(n)
                                     for _ in range(VARIANTS - 1)]).astype(np.float32)
    y = np.concatenate([result.y] + [result.y + JITTER * extent * rng.standard_normal(n)
                                     for _ in range(VARIANTS - 1)]).astype(np.float32)
    ids = stored["ids"]  # (1,000,000,) document ids in all_texts order
    cluster = np.tile(result.cluster, VARIANTS)
    order = np.argsort(ids)
    clusters = []
    for c in result.clusters:
        example = int(ids[int(np.flatnonzero(result.doc_ids == c["example_id"])[0])])
        clusters.append(c | {"size": c["size"] * VARIANTS, "example_id": example})
    params = ClusterParams().validated()
    with big.db.session() as s:
        state = repo.corpus_state(s, CORPUS)
    stored_result = ClusterResult(
        CORPUS, result.params | {"note": "stored directly from the 100,000-document result"},
        result.projection, clusters, ids[order], cluster[order], x[order], y[order],
        {"total": 0.0}, corpus_id=state.id, generation=state.generation)
    with big.db.session() as s:
        repo.save_analysis(s, state.id, stored["model"].id, KIND, params.key(), asdict(params),
                           state.generation, stored_result.info(), 0.0, stored_result.arrays())
    log(f"stored a clusters result of {len(clusters)} clusters at generation "
        f"{state.generation}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=["build100k", "build1m"])
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--from", dest="source", type=Path, help="build100k's --work")
    parser.add_argument("--docs", type=int, default=100_000)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.part == "build100k":
        build100k(args.work, args.docs)
    else:
        build1m(args.work, args.source)


if __name__ == "__main__":
    main()
