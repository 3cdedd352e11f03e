"""Vectors on disk and in memory: hnswlib indexes, their caches and the opened corpus.

- ``index``: ``VectorIndex``, a versioned hnswlib file written atomically, exact below a size.
- ``index_cache``: one index per (corpus, model) per process, brought up to date from the
  database (the source of truth) and rebuilt when missing, stale or corrupt.
- ``passage_index``: the same for the passages of long documents.
- ``memo``: small per-process results keyed on (corpus, generation).
- ``handle``: ``CorpusHandle``, a corpus opened once at a generation, passed to every query.

Uses the store and the embedding layer; knows nothing of services, jobs or front ends.
"""
