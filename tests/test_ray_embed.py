"""The Ray engine on a local cluster (``ray.init`` in this process, 2 CPUs, 2 actors).

Ray is an optional extra: these tests skip with a reason where it is not
installed. The database is the test's own (a SQLite file the actors open too,
or PostgreSQL under ``SEARCHAPP_TEST_DATABASE=postgres``).

What they hold the engine to: the vectors equal the local worker's (cosine ≥
0.9999), every document gets exactly one vector, each block is one committed
transaction (the corpus' generation moves once per block, never more), and a
killed actor loses only its uncommitted block: a run whose actor dies embeds
the rest when run again, and a run with Ray's restarts finishes on its own.
"""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy import text

from searchapp.corpora import service as corpora
from searchapp.corpora.ray_embed import RayOptions, run_embed
from searchapp.intake import table_upload
from searchapp.intake.ingest import read_table
from searchapp.jobs import queue
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search
from searchapp.store import repo
from tests.helpers import vectors_by_external_id

SAMPLE = "searchapp/sample/captions.csv.gz"
DOCS = 240
BATCH = 40  # 6 blocks
# Fault points per actor: block 1 encoded (1), committed (2), block 2 encoded (3), committed (4)
KILL_BEFORE_SECOND_COMMIT = {"SEARCHAPP_FAULT_KILL_AT": "3"}
KILL_AFTER_SECOND_COMMIT = {"SEARCHAPP_FAULT_KILL_AT": "4"}  # the retried block is done already


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def captions(tmp_path):
    from tests.conftest import REPO

    table = pd.read_csv(REPO / SAMPLE, keep_default_na=False).drop_duplicates("text")
    path = tmp_path / "captions.csv"
    table.head(DOCS)[["id", "text"]].to_csv(path, index=False)
    return read_table(path)




def one_vector_each(app, name: str) -> bool:
    with app.db.session() as s:
        c = repo.corpus_state(s, name)
        counts = s.execute(text("SELECT e.document_id, count(*) FROM embeddings e "
                                "WHERE e.corpus_id = :c GROUP BY e.document_id"),
                           {"c": c.id}).all()
    return len(counts) == c.documents and all(n == 1 for _, n in counts)


def generation(app, name: str) -> int:
    with app.db.session() as s:
        return repo.corpus_state(s, name).generation


def test_ray_gives_the_local_workers_vectors_one_per_document(ray_cluster, app, captions):
    local_job = table_upload.upload(app, captions, "local").job_id
    assert run_until_done(app, local_job).status == "succeeded"
    queued = table_upload.upload(app, captions, "ray").job_id  # a local embed job, replaced:
    before = generation(app, "ray")
    job_id = corpora.request_ray_embed(app, "ray", cpus_per_actor=1, batch=BATCH)
    assert queue.get(app.db, queued).status == "cancelled"
    job = run_until_done(app, job_id)
    assert job.status == "succeeded", job.error
    assert (job.result["embedded"], job.result["actors"], job.result["engine"]) == (
        DOCS, 2, "ray")
    assert one_vector_each(app, "ray")
    assert generation(app, "ray") - before == DOCS // BATCH  # one commit per block
    local, remote = vectors_by_external_id(app, "local"), vectors_by_external_id(app, "ray")
    assert local.keys() == remote.keys() and len(local) == DOCS
    cosines = [float(local[k] @ remote[k]) for k in local]
    assert min(cosines) >= 0.9999
    first = captions.frame.drop_duplicates("text").iloc[7]
    hit = search(app, "ray", first["text"], k=1)[0]  # the driver's index caught up
    assert hit.id == str(first["id"])
    assert corpora.request_ray_embed(app, "ray") is None  # nothing left to embed


@pytest.mark.slow
def test_a_killed_actor_loses_only_its_uncommitted_block(ray_cluster, app, captions):
    table_upload.upload(app, captions, "faq")  # its local job stays queued: no worker runs here
    before = generation(app, "faq")
    killed = RayOptions(address=None, cpus_per_actor=1, batch=BATCH, max_restarts=0,
                        actor_env=KILL_BEFORE_SECOND_COMMIT)
    with pytest.raises(Exception):  # noqa: B017 - Ray's error for a dead actor pool
        run_embed(app, "faq", killed)
    with app.db.session() as s:
        c = repo.corpus_state(s, "faq")
        kept = repo.count_embedded(s, c.id, repo.find_model(s, c.model_name).id)
    assert kept % BATCH == 0 and 0 < kept < DOCS  # whole blocks committed, the rest lost
    again = run_embed(app, "faq", RayOptions(address=None, cpus_per_actor=1, batch=BATCH))
    # Only what was missing (the other actor of the failed run may still have committed
    # the block it was encoding after the count above: fewer, never more).
    assert 0 < again["embedded"] <= DOCS - kept
    assert one_vector_each(app, "faq")
    assert generation(app, "faq") - before == DOCS // BATCH  # no block committed twice


@pytest.mark.slow
def test_ray_restarts_killed_actors_and_finishes_the_run(ray_cluster, app, captions):
    """Ray restarts an actor killed after its commit and retries the block: the retry
    finds nothing missing and commits nothing (the generation moves once per block)."""
    table_upload.upload(app, captions, "faq")  # its local job stays queued: no worker runs here
    before = generation(app, "faq")
    restarting = RayOptions(address=None, cpus_per_actor=1, batch=BATCH,
                            actor_env=KILL_AFTER_SECOND_COMMIT)
    result = run_embed(app, "faq", restarting)
    assert result["embedded"] == DOCS
    assert one_vector_each(app, "faq")
    assert generation(app, "faq") - before == DOCS // BATCH


def test_one_ray_job_per_corpus_and_a_running_local_job_is_not_raced(app, captions):
    """No Ray needed: which job ``embed --engine ray`` returns, replaces or refuses."""
    from searchapp.errors import JobError

    table_upload.upload(app, captions, "faq")
    ray_job = corpora.request_ray_embed(app, "faq", address="auto")
    assert corpora.request_ray_embed(app, "faq") == ray_job  # a dead driver's job is resumed
    queue.cancel(app.db, ray_job)
    local = corpora.request_embed(app, "faq")
    queue.claim(app.db, "other-host:1")  # a worker elsewhere runs the local job
    with pytest.raises(JobError, match=f"already has embed job {local} \\(running\\)"):
        corpora.request_ray_embed(app, "faq")


def test_the_ray_engine_refuses_what_its_workers_cannot_use():
    from searchapp.config import Settings
    from searchapp.corpora.ray_embed import actor_settings
    from searchapp.errors import ConfigError

    with pytest.raises(ConfigError, match="not an in-memory one"):
        actor_settings(Settings.from_env({"SEARCHAPP_DATABASE_URL": "sqlite://"}))
    url = "postgresql+psycopg://u@db:5432/s"
    assert actor_settings(Settings.from_env({"SEARCHAPP_DATABASE_URL": url}))[
        "SEARCHAPP_DATABASE_URL"] == url
    with pytest.raises(ConfigError, match="is not a Ray address; use auto"):
        Settings.from_env({"SEARCHAPP_RAY_ADDRESS": "head-without-port"})


def test_the_jobs_page_offers_ray_only_where_a_cluster_is_configured(
        ui_resources, monkeypatch, captions):
    """No Ray needed: the page queues the job; the background worker would drive it."""
    from streamlit.testing.v1 import AppTest

    from searchapp.ui.resources import get_app
    from tests.conftest import REPO

    def jobs_page() -> AppTest:
        return AppTest.from_file(REPO / "searchapp/ui/pages/jobs.py", default_timeout=60).run()

    at = jobs_page()
    assert not at.exception and not [b for b in at.button if b.label == "Embed on Ray"]
    monkeypatch.setenv("SEARCHAPP_RAY_ADDRESS", "ray://head:10001")
    from searchapp.web import shared

    shared.reset()  # a new App reads the setting
    app = get_app()
    queued = table_upload.upload(app, captions, "faq").job_id
    at = jobs_page()
    assert at.selectbox[0].options == ["faq"]
    [ray_button] = [b for b in at.button if b.label == "Embed on Ray"]
    ray_button.click().run()
    assert not at.exception
    [job] = [j for j in queue.recent(app.db) if j.payload.get("engine") == "ray"]
    assert job.payload == {"corpus": "faq", "engine": "ray", "address": "ray://head:10001"}
    assert queue.get(app.db, queued).status == "cancelled"
    assert any(f"Job {job.id} embeds" in s.value for s in at.success)
