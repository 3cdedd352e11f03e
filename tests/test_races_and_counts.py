"""Concurrent deletes, upserts and embed requests keep every count right.

Real threads and processes on one SQLite file (and PostgreSQL where the test server is
there): each deleted row is reported by exactly one client, a corpus' document count is
its rows, never negative, and an upsert during a running embed job queues at most one
more job for the corpus.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select

from searchapp.config import Settings
from searchapp.context import App
from searchapp.corpora import documents as docs
from searchapp.corpora.service import create_corpus, request_embed
from searchapp.jobs import queue
from searchapp.store import repo
from searchapp.store.schema import Document, Job
from tests.racers import delete_one, race

CLIENTS = 8


def counts(app: App, corpus: str) -> tuple[int, int]:
    """(the corpus row's document count, its document rows)."""
    with app.db.session() as s:
        c = repo.get_corpus(s, corpus)
        rows = s.scalar(select(func.count()).select_from(Document).where(
            Document.corpus_id == c.id))
        return c.document_count, int(rows or 0)


def clients(app: App) -> list[App]:
    """Apps of their own (own engines and connections), as eight API clients' requests."""
    return [App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir),
                                   "SEARCHAPP_DATABASE_URL": app.settings.database_url}))
            for _ in range(CLIENTS)]


def test_eight_threads_deleting_one_id_tell_one_client_deleted_1(app):
    create_corpus(app, "t")
    others = clients(app)
    for round_ in range(15):
        docs.upsert(app, "t", [docs.Doc("x", f"text {round_}"), docs.Doc(f"keep{round_}", "k")])
        barrier = threading.Barrier(CLIENTS)

        def delete(client: App, barrier: threading.Barrier = barrier) -> int:
            barrier.wait()
            return docs.delete(client, "t", ["x"]).deleted

        with ThreadPoolExecutor(CLIENTS) as pool:
            told = list(pool.map(delete, others))
        assert sorted(told) == [0] * (CLIENTS - 1) + [1], (round_, told)
        assert counts(app, "t") == (round_ + 1, round_ + 1)
    for client in others:
        client.db.dispose()


def test_eight_processes_deleting_one_id_tell_one_deleted_1(app):
    create_corpus(app, "t")
    for round_ in range(3):
        docs.upsert(app, "t", [docs.Doc("x", f"text {round_}")])
        told = race(delete_one, (app.settings.database_url, "t", "x"), processes=CLIENTS)
        assert sorted(told) == ["ok 0"] * (CLIENTS - 1) + ["ok 1"], told
        assert counts(app, "t") == (0, 0)


def test_concurrent_upserts_and_deletes_of_the_same_ids_keep_the_count_right(app):
    create_corpus(app, "t")
    ids = [f"d{i}" for i in range(5)]
    others = clients(app)
    barrier = threading.Barrier(CLIENTS)

    def churn(client_no: int) -> None:
        client = others[client_no]
        barrier.wait()
        for step in range(12):
            if (client_no + step) % 2:
                docs.delete(client, "t", ids)
            else:
                docs.upsert(client, "t", [docs.Doc(i, f"v{client_no}-{step}") for i in ids])

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(churn, range(CLIENTS)))
    stored, rows = counts(app, "t")
    assert stored == rows and 0 <= rows <= len(ids)
    for client in others:
        client.db.dispose()


def queued_embeds(app: App, corpus: str) -> int:
    with app.db.session() as s:
        return sum(1 for j in s.scalars(select(Job).where(Job.kind == "embed",
                                                          Job.status == "queued"))
                   if (j.payload or {}).get("corpus") == corpus)


def test_upserts_during_a_running_embed_job_queue_one_more_at_most(app):
    create_corpus(app, "t")
    first = docs.upsert(app, "t", [docs.Doc("a", "one")]).job_id
    assert queue.claim(app.db, "test-worker") is not None  # the embed job is running now
    assert queue.get(app.db, first).status == "running"
    others = clients(app)
    barrier = threading.Barrier(CLIENTS)

    def upsert(n: int) -> int | None:
        barrier.wait()
        return docs.upsert(others[n], "t", [docs.Doc(f"n{n}", f"new {n}")]).job_id

    with ThreadPoolExecutor(CLIENTS) as pool:
        jobs = set(pool.map(upsert, range(CLIENTS)))
    for n in range(3):  # one after another, too
        jobs.add(docs.upsert(app, "t", [docs.Doc(f"m{n}", "more")]).job_id)
    assert queued_embeds(app, "t") == 1
    assert len(jobs - {first}) == 1
    assert request_embed(app, "t", new_rows=True) in jobs
    for client in others:
        client.db.dispose()


@pytest.fixture
def pg_app(postgres_url, tmp_path):
    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(tmp_path / "pg"),
                                 "SEARCHAPP_DATABASE_URL": postgres_url}))
    yield app
    app.db.dispose()


def test_postgres_eight_threads_deleting_one_id_tell_one_client_deleted_1(pg_app):
    test_eight_threads_deleting_one_id_tell_one_client_deleted_1(pg_app)


def test_postgres_one_queued_embed_job_per_corpus(pg_app):
    test_upserts_during_a_running_embed_job_queue_one_more_at_most(pg_app)
