"""The store, queue and search on a real PostgreSQL server (the default suite's share).

A throwaway cluster from Debian's ``postgresql`` package (``tests/postgres.py``)
is started once per session; every test gets its own database. The tests skip
with a reason where the server binaries or psycopg are absent. ``make
test-postgres`` runs the store, queue and search suites against the server too.

What only PostgreSQL can get wrong: claims under ``FOR UPDATE SKIP LOCKED``
(a row another worker holds is skipped, never waited for), many worker
processes on one queue, ids from sequences, the frozen version-1 → 2 upgrade
SQL, and the whole upload → embed → search path through the psycopg driver.
"""

from __future__ import annotations

import multiprocessing
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, text

from searchapp.context import App
from searchapp.intake import table_upload
from searchapp.intake.ingest import read_table
from searchapp.jobs import queue
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search
from searchapp.store import repo
from searchapp.store.db import Database
from searchapp.store.migrations import current_version
from searchapp.store.schema import SCHEMA_VERSION, Job
from tests.claimers import DEADLINE as CLAIM_DEADLINE
from tests.claimers import claim_until_empty
from tests.claimers import start as start_processes

DEADLINE = 60.0
V1_SQLITE = Path(__file__).parent / "data" / "schema_v1.sqlite.sql"


@pytest.fixture
def pg(postgres_url) -> Database:
    db = Database(postgres_url)
    yield db
    db.dispose()


def test_a_new_database_is_migrated_and_ids_come_from_sequences(pg):
    with pg.engine.connect() as conn:
        assert conn.dialect.name == "postgresql"
        assert current_version(conn) == SCHEMA_VERSION
        sequences = set(conn.execute(text(
            "SELECT sequencename FROM pg_sequences")).scalars())
    assert {"corpora_id_seq", "documents_id_seq", "jobs_id_seq"} <= sequences
    with pg.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        repo.add_documents(s, c, [repo.NewDocument("a", "x"), repo.NewDocument("b", "y")])
        newest = repo.document_by_external_id(s, c.id, "b").id
    with pg.session() as s:  # the newest row is replaced: a sequence never gives its id again
        repo.add_documents(s, repo.get_corpus(s, "faq"), [repo.NewDocument("b", "y2")])
    with pg.session() as s:
        c = repo.get_corpus(s, "faq")
        assert repo.document_by_external_id(s, c.id, "b").id > newest
        assert (c.generation, c.document_count) == (2, 2)
        assert repo.removed_since(s, c.id, 1).tolist() == [newest]


def test_a_claim_skips_a_job_another_worker_has_locked(pg):
    """The row lock a claiming transaction holds is skipped, not waited for.

    The compare-and-set claim would block on the locked row (and a worker on
    another machine holding it would stall the whole queue); SKIP LOCKED hands
    out the next job at once.
    """
    first = queue.enqueue(pg, "embed", {"n": 1})
    second = queue.enqueue(pg, "embed", {"n": 2})
    with pg.engine.connect() as holder:
        holder.execute(text("SET lock_timeout = '50s'"))
        holder.execute(select(Job.id).where(Job.id == first).with_for_update())
        got: list = []
        claimer = threading.Thread(target=lambda: got.append(queue.claim(pg, "h:1")))
        claimer.start()
        claimer.join(timeout=10)
        blocked = claimer.is_alive()
        holder.rollback()  # releases the row either way
        claimer.join(timeout=DEADLINE)
    assert not blocked, "the claim waited for a row another transaction holds"
    assert got[0].id == second and got[0].attempts == 1
    assert queue.claim(pg, "h:2").id == first  # released: claimable again


def test_eight_worker_processes_claim_every_job_exactly_once(pg, postgres_url):
    jobs = {queue.enqueue(pg, "embed", {"n": i}) for i in range(200)}
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=claim_until_empty, args=(postgres_url, f"h:{i}", start, out))
             for i in range(8)]
    start_processes(procs)
    reports = {name: got for name, got, _ in (out.get(timeout=CLAIM_DEADLINE) for _ in procs)}
    for p in procs:
        p.join(timeout=DEADLINE)
    claimed = [j for got in reports.values() for j in got]
    assert sorted(claimed) == sorted(jobs), "every job claimed exactly once"
    with pg.session() as s:
        rows = s.execute(select(Job.attempts, Job.status, Job.result)).all()
    assert {(a, st) for a, st, _ in rows} == {(1, "succeeded")}
    by = {name: len(got) for name, got in reports.items()}
    assert sum(1 for n in by.values() if n) >= 2, f"one worker did all the work: {by}"


def test_concurrent_vector_writers_keep_counts_and_generations_in_order(pg):
    """Two writers of one corpus: the generation bump locks the corpus row, so each batch
    gets its own generation and the counter equals the rows (no lost update)."""
    with pg.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        repo.add_documents(s, c, [repo.NewDocument(str(i), f"doc {i}") for i in range(200)])
        model = repo.get_or_create_model(s, "m", 2)
        ids = [i for i, _ in repo.documents_missing_embedding(s, c.id, model.id, 0, 1000)]
        cid, mid = c.id, model.id
    start = threading.Barrier(4, timeout=DEADLINE)
    generations: list[int] = []

    def writer(part: list[int]) -> None:
        start.wait()
        for batch in (part[:25], part[25:]):
            with pg.session() as s:
                generations.append(repo.save_embeddings(
                    s, cid, mid, batch, np.ones((len(batch), 2), np.float32)))

    threads = [threading.Thread(target=writer, args=(ids[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DEADLINE)
    with pg.session() as s:
        assert repo.count_embedded(s, cid, mid) == 200
        assert s.scalar(text("SELECT count(*) FROM embeddings")) == 200
        assert repo.corpus_state(s, "faq").generation == 1 + 8
    assert sorted(generations) == list(range(2, 10))


def _v1_postgres_sql() -> str:
    """The version-1 DDL as the old ORM wrote it for PostgreSQL: the SQLite file's DDL
    with PostgreSQL's types (SERIAL keys, TIMESTAMP, BYTEA)."""
    sql = V1_SQLITE.read_text(encoding="utf-8")
    sql = re.sub(r"^--.*$", "", sql, flags=re.M)
    for table in ("models", "corpora", "jobs", "documents", "analyses"):
        sql = re.sub(rf"(CREATE TABLE {table} \(\s*)id INTEGER NOT NULL", r"\1id SERIAL NOT NULL",
                     sql)
    return sql.replace("DATETIME", "TIMESTAMP WITHOUT TIME ZONE").replace("BLOB", "BYTEA")


def test_a_version_1_postgres_database_is_upgraded_by_the_frozen_sql(postgres_url):
    from sqlalchemy import create_engine

    engine = create_engine(postgres_url)
    now = "2026-11-01 10:00:00"
    vector = np.ones(2, np.float32).tobytes()
    with engine.begin() as conn:
        for statement in _v1_postgres_sql().split(";"):
            if statement.strip():
                conn.exec_driver_sql(statement)
        conn.execute(text("INSERT INTO schema_info VALUES (1, 1)"))
        conn.execute(text("INSERT INTO models (name, dimension, info, created_at) "
                          "VALUES ('m', 2, '{}', :t)"), {"t": now})
        for name in ("faq", "tickets"):
            conn.execute(text("INSERT INTO corpora (name, model_name, created_at, updated_at) "
                              "VALUES (:n, 'm', :t, :t)"), {"n": name, "t": now})
        for cid, ext in ((1, "a"), (1, "b"), (2, "t1"), (1, "c")):
            conn.execute(text("INSERT INTO documents (corpus_id, external_id, text, meta, "
                              "content_hash, created_at) VALUES (:c, :e, :x, '{}', 'h', :t)"),
                         {"c": cid, "e": ext, "x": f"text {ext}", "t": now})
        for did in (1, 2, 3):
            conn.execute(text("INSERT INTO embeddings VALUES (:d, 1, :v)"),
                         {"d": did, "v": vector})
        conn.execute(text("INSERT INTO analyses (corpus_id, model_id, kind, params_key, params, "
                          "fingerprint, result, created_at) VALUES "
                          "(1, 1, 'duplicates', 'k', '{}', 'fp', '{}', :t)"), {"t": now})
    engine.dispose()
    db = Database(postgres_url)
    with db.session() as s:
        assert [(x.name, x.documents) for x in repo.summaries(s)] == [("faq", 3), ("tickets", 1)]
        faq = repo.corpus_state(s, "faq")
        assert repo.count_embedded(s, faq.id, 1) == 2
        [(ids, _)] = list(repo.embeddings_since(s, faq.id, 1, 0, 2))
        assert sorted(ids.tolist()) == [1, 2]
        repo.add_documents(s, repo.get_corpus(s, "faq"), [repo.NewDocument("d", "new")])
        assert repo.document_by_external_id(s, faq.id, "d").id == 5  # the sequence goes on
        assert s.scalar(text("SELECT count(*) FROM analyses")) == 0
    with db.engine.connect() as conn:
        assert current_version(conn) == SCHEMA_VERSION
    db.dispose()


FAQ = b"""id,text
1,How do I reset my password?
2,Where can I download my invoice?
3,The printer jams on every second page.
4,My account was locked after three failed logins.
5,How long does a refund take to arrive?
"""


def test_upload_embed_and_search_on_postgres(postgres_url, monkeypatch):
    """The app itself on PostgreSQL: upload, the embed job through the queue, search."""
    monkeypatch.setenv("SEARCHAPP_DATABASE_URL", postgres_url)
    app = App()
    try:
        summary = table_upload.upload(app, read_table(FAQ, "faq.csv"), "faq")
        job = run_until_done(app, summary.job_id)
        assert job.status == "succeeded", job.error
        hits = search(app, "faq", "I forgot my password", k=2)
        assert hits[0].id == "1"
        with app.db.session() as s:
            assert repo.summaries(s) == [repo.CorpusSummary("faq", app.settings.model, 5, 5)]
    finally:
        app.db.dispose()
