"""What the database does per query and per embedding batch, counted, not timed.

SQLite's progress handler counts virtual-machine instructions: a machine-
independent measure of the work a statement did. Embedding a corpus must read
it in O(n) overall (keyset pages), and a search on an open corpus must do the
same work whatever the corpus size.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from sqlalchemy import event

from searchapp.search.service import search_vector
from searchapp.store import repo
from searchapp.vectors.handle import open_corpus

MODEL = "all-MiniLM-L6-v2"
DIM = 384


@contextmanager
def vm_steps(session, every: int = 10):
    """Counts the SQLite VM instructions run on this session's connection (in tens)."""
    raw = session.connection().connection.dbapi_connection
    counter = {"steps": 0}

    def tick() -> int:
        counter["steps"] += every
        return 0

    raw.set_progress_handler(tick, every)
    try:
        yield counter
    finally:
        raw.set_progress_handler(None, every)


@contextmanager
def statements(engine):
    seen: list[str] = []

    def record(conn, cursor, statement, params, context, executemany):
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def corpus(app, name: str, n: int, embed: bool) -> int:
    with app.db.session() as s:
        c = repo.get_or_create_corpus(s, name, MODEL)
        repo.add_documents(s, c, [repo.NewDocument(f"d{i}", f"text {i}") for i in range(n)])
        cid = c.id
    if embed:
        model = app.model_ref(MODEL)
        rng = np.random.default_rng(n)
        with app.db.session() as s:
            rows = repo.documents_missing_embedding(s, cid, model.id, 0, n)
            v = rng.normal(size=(n, DIM)).astype(np.float32)
            repo.save_embeddings(s, cid, model.id, [i for i, _ in rows],
                                 v / np.linalg.norm(v, axis=1, keepdims=True))
    return cid


def embed_reads_cost(app, name: str, n: int, page: int = 100) -> int:
    """VM steps spent reading missing documents while embedding page by page."""
    cid = corpus(app, name, n, embed=False)
    model = app.model_ref(MODEL)
    total, after = 0, 0
    while True:
        with app.db.session() as s, vm_steps(s) as cost:
            rows = repo.documents_missing_embedding(s, cid, model.id, after, page)
        total += cost["steps"]
        if not rows:
            return total
        after = rows[-1][0]
        with app.db.session() as s:
            repo.save_embeddings(s, cid, model.id, [i for i, _ in rows],
                                 np.zeros((len(rows), DIM), np.float32))


def test_embedding_reads_the_corpus_in_linear_work(app):
    small = embed_reads_cost(app, "small", 1_000)
    big = embed_reads_cost(app, "big", 4_000)
    assert big / small < 5.0, (small, big)  # 4x the documents: 4x the work, not 16x


def search_cost(app, name: str, n: int) -> tuple[int, list[str], list[str]]:
    corpus(app, name, n, embed=True)
    handle = open_corpus(app, name)  # first open: builds the index
    query = handle.index.vectors(handle.index.labels()[:1])[0]
    with statements(app.db.engine) as opened:
        handle = open_corpus(app, name)
    with statements(app.db.engine) as queried, app.db.session() as s, vm_steps(s) as cost:
        search_vector(app, handle, query, k=10)  # (its own session: counted below too)
        repo.documents_by_id(s, handle.index.search(query[None], 10)[0][0].tolist())
    return cost["steps"], opened, queried


def test_a_query_on_an_open_corpus_does_the_same_work_at_any_size(app):
    small_cost, small_open, small_query = search_cost(app, "small", 300)
    big_cost, big_open, big_query = search_cost(app, "big", 6_000)
    assert len(small_open) == len(big_open) == 1  # the corpus row: nothing else, no scan
    assert "corpora" in small_open[0] and "embeddings" not in small_open[0]
    assert len(big_query) == len(small_query) == 2  # the k rows (twice: see search_cost)
    assert big_cost < 1.5 * small_cost, (small_cost, big_cost)
