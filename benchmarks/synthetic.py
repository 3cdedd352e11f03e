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
from collections.abc import Iterator

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


def clustered_chunks(n: int, chunk: int = 100_000, dim: int = 384, seed: int = 0
                     ) -> Iterator[tuple[int, np.ndarray]]:
    """``clustered_vectors``' structure made ``chunk`` rows at a time, for ``n`` too large to
    hold (10 M x 384 float32 is 15 GB): (first row number, (m, dim) unit vectors) each.

    The topics are shared by all chunks; a cluster lies inside one chunk. Chunk j is
    the same every time it is made (its own seed), so a benchmark makes it again
    rather than keeping it.

    Example:
        >>> [(start, m.shape) for start, m in clustered_chunks(2500, chunk=1000)]
        [(0, (1000, 384)), (1000, (1000, 384)), (2000, (500, 384))]
    """
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((max(n // 100, 1), dim), dtype=np.float32)
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    for start in range(0, n, chunk):
        yield start, _clustered(np.random.default_rng([seed, start]), topics,
                                min(chunk, n - start), dim)


def _clustered(rng: np.random.Generator, topics: np.ndarray, m: int, dim: int) -> np.ndarray:
    """m unit vectors in clusters of 1-8 around centres near ``topics``, rows shuffled."""
    sizes = np.minimum(rng.geometric(0.5, size=m), 8)
    sizes = sizes[np.cumsum(sizes) <= m]
    sizes = np.r_[sizes, m - sizes.sum()] if sizes.sum() < m else sizes
    owner = np.repeat(np.arange(len(sizes)), sizes)  # (m,) cluster of each row
    sigma = rng.uniform(0.2, 0.8, size=len(sizes)).astype(np.float32)
    t = topics[rng.integers(0, len(topics), size=len(sizes))]
    centres = t + 0.9 * rng.standard_normal(t.shape, dtype=np.float32) / np.sqrt(dim)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    noise = rng.standard_normal((m, dim), dtype=np.float32) / np.sqrt(dim)
    out = centres[owner] + sigma[owner, None] * noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out[rng.permutation(m)]


def store_chunk(app: App, name: str, start: int, vectors: np.ndarray, after: int = 0
                ) -> np.ndarray:
    """Store rows ``start`` .. ``start + m`` of a corpus too large to hold (documents
    "passage i", then their vectors, as ``store_corpus`` does); their ids (m,) in row order.
    ``after``: the largest id stored before (the new ones are read back after it).
    """
    model = app.model_ref(MODEL)
    m = len(vectors)
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, MODEL)
        repo.add_documents(s, corpus, [repo.NewDocument(f"{name}-{i}", f"passage {i}")
                                       for i in range(start, start + m)])
        corpus_id = corpus.id
    ids = np.zeros(m, np.int64)
    while True:
        with app.db.session() as s:
            rows = repo.documents_missing_embedding(s, corpus_id, model.id, after, BATCH)
        if not rows:
            return ids
        after = rows[-1][0]
        batch = np.array([i for i, _ in rows], dtype=np.int64)
        rows_of = np.array([int(t.split()[1]) - start for _, t in rows])  # "passage i"
        ids[rows_of] = batch
        with app.db.session() as s:
            repo.save_embeddings(s, corpus_id, model.id, batch.tolist(), vectors[rows_of])


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
