"""Benchmark inputs without an encoder: clustered unit vectors, stored through our store.

``clustered_vectors`` makes vectors shaped like sentence embeddings of a real
corpus (topics, clusters inside topics, near-duplicates inside clusters);
``store_corpus`` writes documents and given vectors through the store exactly
as the embed job does (batched uploads, ``save_embeddings`` per batch), so the
database, the counters and the generations are the real ones; only the
encoding is skipped.

Example:
    >>> vectors = clustered_vectors(1000)
    >>> vectors.shape, bool(np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5))
    ((1000, 384), True)
"""

from __future__ import annotations

import time

import numpy as np

from searchapp.context import App
from searchapp.store import repo

BATCH = 20_000
MODEL = "all-MiniLM-L6-v2"


def clustered_vectors(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    """n unit vectors: topics → clusters (cos ≈ 0.56 within a topic) → 1-8 near-duplicates.

    Members of a cluster have pairwise cosine ≈ 1/(1+σ²) with σ ∈ [0.2, 0.8] per
    cluster, i.e. ≈ 0.6 to 0.96, so pairs fall on both sides of 0.8 and 0.9.
    """
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.geometric(0.5, size=n), 8)
    sizes = sizes[np.cumsum(sizes) <= n]
    sizes = np.r_[sizes, n - sizes.sum()] if sizes.sum() < n else sizes
    clusters = len(sizes)
    topics = rng.standard_normal((max(clusters // 50, 1), dim), dtype=np.float32)
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    out = np.empty((n, dim), dtype=np.float32)
    owner = np.repeat(np.arange(clusters), sizes)  # (n,) cluster of each row
    sigma = rng.uniform(0.2, 0.8, size=clusters).astype(np.float32)
    for start in range(0, clusters, 100_000):
        c = np.arange(start, min(start + 100_000, clusters))
        t = topics[rng.integers(0, len(topics), size=len(c))]
        noise = rng.standard_normal((len(c), dim), dtype=np.float32) / np.sqrt(dim)
        centres = t + 0.9 * noise  # cos(centre, topic) ≈ 0.75
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        rows = np.flatnonzero((owner >= c[0]) & (owner <= c[-1]))
        noise = rng.standard_normal((len(rows), dim), dtype=np.float32) / np.sqrt(dim)
        out[rows] = centres[owner[rows] - start] + sigma[owner[rows], None] * noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out[rng.permutation(n)]


def store_corpus(app: App, name: str, texts: list[str], vectors: np.ndarray,
                 log=print) -> dict:
    """Store texts as corpus ``name`` and their vectors; returns ids (n,) and timings.

    Documents go in as one upload (the store batches the inserts); vectors in
    batches of ``BATCH`` through ``save_embeddings``, each its own transaction
    and generation, as the embed job writes them. Skips what is stored already.
    """
    model = app.model_ref(MODEL)
    started = time.perf_counter()
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, MODEL)
        if corpus.document_count < len(texts):
            repo.add_documents(s, corpus, [repo.NewDocument(f"{name}-{i}", t)
                                           for i, t in enumerate(texts)])
        corpus_id = corpus.id
    documents_s = time.perf_counter() - started
    log(f"{name}: {len(texts):,} documents stored in {documents_s:.1f} s")
    with app.db.session() as s:
        by_external = repo.external_ids(s, corpus_id)
    order = {ext: i for i, ext in by_external.items()}
    ids = np.array([order[f"{name}-{i}"] for i in range(len(texts))], dtype=np.int64)
    started = time.perf_counter()
    after = 0
    while True:
        with app.db.session() as s:
            rows = repo.documents_missing_embedding(s, corpus_id, model.id, after, BATCH)
        if not rows:
            break
        after = rows[-1][0]
        batch = np.array([i for i, _ in rows], dtype=np.int64)
        with app.db.session() as s:
            repo.save_embeddings(s, corpus_id, model.id, batch.tolist(),
                                 vectors[_positions(ids, batch)])
    vectors_s = time.perf_counter() - started
    log(f"{name}: vectors stored in {vectors_s:.1f} s")
    return {"corpus_id": corpus_id, "model": model, "ids": ids,
            "documents_seconds": round(documents_s, 2), "vectors_seconds": round(vectors_s, 2)}


def _positions(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Rows of ``ids`` holding each of ``wanted``."""
    order = np.argsort(ids)
    return order[np.searchsorted(ids[order], wanted)]
