"""A corpus' shards served by Ray actors on a local cluster (``ray.init`` here, 2 CPUs): the
search through them equals this process' own index, a killed replica (kill -9) is passed
over while its twin lives, a shard with no live replica makes answers partial and named
until Ray has restarted it, and documents added while queries stream are found within the
stated freshness. Slow (Ray starts actors as processes): ``pytest -m slow``.

The database is the test's own SQLite file, which the actors open too (PostgreSQL under
``SEARCHAPP_TEST_DATABASE=postgres``).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time

import pandas as pd
import pytest

from searchapp.intake import table_upload
from searchapp.intake.ingest import read_table
from searchapp.jobs.worker import run_until_done
from searchapp.search.coverage import missing_of
from searchapp.search.service import search
from searchapp.search.shards import ray_shards
from searchapp.search.shards.engine import open_for_search

pytestmark = pytest.mark.slow
SAMPLE = "searchapp/sample/captions.csv.gz"
QUERY = "a dog runs on the beach"
PATIENCE = 120.0  # seconds a condition may take on a busy 2-core machine before it fails


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             namespace=ray_shards.NAMESPACE)
    yield ray
    ray.shutdown()


@pytest.fixture
def served(ray_cluster, app, tmp_path, monkeypatch):
    from tests.conftest import REPO

    # the shard servers' full text in this test's folder, for the CLI's App (made from the
    # environment) as for this one
    monkeypatch.setenv("SEARCHAPP_SHARD_WORDS_DIR", str(tmp_path / "shard-words"))

    table = pd.read_csv(REPO / SAMPLE, keep_default_na=False).drop_duplicates("text")
    path = tmp_path / "captions.csv"
    table.head(300)[["id", "text"]].to_csv(path, index=False)
    job = table_upload.upload(app, read_table(path), "caps").job_id
    assert run_until_done(app, job).status == "succeeded"
    local = [(h.id, h.score) for h in search(app, "caps", QUERY, k=10)]
    app.settings = dataclasses.replace(app.settings, search_engine="ray", ray_address="local",
                                       shard_words_dir=tmp_path / "shard-words")
    yield app, local
    ray_shards.stop(app, "caps")


def until(condition, what: str):
    """Run ``condition`` (a query) until it holds; fails after PATIENCE seconds."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
    pytest.fail(f"not within {PATIENCE:.0f} s: {what}")


def pid_of(app, number: int, replica: int) -> int:
    rows = ray_shards.status(app, "caps")
    return next(r["pid"] for r in rows if r.get("number") == number
                and r.get("replica") == replica and "pid" in r)


def test_ray_shards_answer_as_the_local_index_and_survive_a_killed_replica(served):
    app, local = served
    rows = ray_shards.serve(app, "caps", shards=3, replicas=2, words=False)  # words: the db's
    assert len(rows) == 6 and sum(r["documents"] for r in rows if r["replica"] == 0) == 300
    app.indexes.clear()
    handle_hits = search(app, "caps", QUERY, k=10)
    assert [(h.id, h.score) for h in handle_hits] == local and missing_of(handle_hits) == ()
    handle = open_for_search(app, "caps")
    assert handle.shards is not None and handle.index.count == 0
    assert app.indexes.cached_generation(handle.corpus_id, handle.model.id) is None
    ray_shards.LIST_SECONDS, listed = 0.0, ray_shards.LIST_SECONDS  # look again each time:
    try:  # the same layout keeps its client (and its threads); none is made per search
        assert ray_shards.client_for(app, handle.corpus_id, handle.model.id) is \
            ray_shards.client_for(app, handle.corpus_id, handle.model.id) is handle.shards
    finally:
        ray_shards.LIST_SECONDS = listed
    os.kill(pid_of(app, 1, 0), signal.SIGKILL)  # one replica of shard 2: its twin answers
    for _ in range(20):
        hits = search(app, "caps", QUERY, k=10)
        assert missing_of(hits) == () and [(h.id, h.score) for h in hits] == local
    until(lambda: all("down" not in r for r in ray_shards.status(app, "caps")),
          "Ray restarted the killed replica")


def test_ray_shards_keep_their_full_text_and_answer_more_like_this(served):
    """Served with their full text (the default), one shard ranks by words as the app's own
    index does; "more like this" is answered by the shards as by the local index."""
    from searchapp.search.refine import more_like
    from searchapp.vectors.handle import open_corpus

    app, local = served
    rows = ray_shards.serve(app, "caps", shards=1, replicas=1)
    assert rows[0]["words"] == rows[0]["documents"] == 300 and rows[0]["words_bytes"] > 0
    here = open_corpus(app, "caps")  # this process' own index and the database's full text
    for query in (QUERY, "two men playing football"):
        assert [(h.id, round(h.score, 6)) for h in search(app, "caps", query, k=10,
                                                          mode="lexical")] == \
               [(h.id, round(h.score, 6)) for h in search(app, here, query, k=10,
                                                          mode="lexical")]
    assert [(h.id, round(h.score, 5)) for h in more_like(app, "caps", local[0][0], k=8)] == \
           [(h.id, round(h.score, 5)) for h in more_like(app, here, local[0][0], k=8)]
    [folder] = list((app.settings.shard_words_dir).glob("shard-*-0of1-r0-*"))
    ray_shards.stop(app, "caps")
    assert not folder.exists()  # a stopped replica's full text goes with it


def test_the_cli_serves_lists_and_stops_a_corpus_shards(served, capsys):
    from searchapp.cli.main import main

    app, _ = served
    assert main(["shards", "serve", "--corpus", "caps", "--shards", "2", "--replicas",
                 "2"]) == 0
    assert "2 shards × 2 replicas serving 300 documents (float32; full text in the shards)" \
        in capsys.readouterr().out
    assert main(["shards", "status", "--corpus", "caps"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("shard") and len(lines) == 5
    assert sorted(" ".join(line.split()[i] for i in (0, 2, 3)) for line in lines[1:]) == \
        ["1 2 r0", "1 2 r1", "2 2 r0", "2 2 r1"]
    assert main(["shards", "stop", "--corpus", "caps"]) == 0
    assert "Stopped 4 shard servers of corpus 'caps'." in capsys.readouterr().out
    assert ray_shards.status(app, "caps") == []


def test_a_shard_without_replicas_is_named_until_ray_restarts_it(served):
    app, local = served
    ray_shards.serve(app, "caps", shards=2, replicas=1, words=False)
    os.kill(pid_of(app, 0, 0), signal.SIGKILL)
    partial = until(lambda: missing_of(hits := search(app, "caps", QUERY, k=10)) and hits,
                    "an answer marked partial while shard 1 has no live replica")
    assert missing_of(partial) == ("shard 1 of 2",)
    complete = until(lambda: not missing_of(hits := search(app, "caps", QUERY, k=10)) and hits,
                     "a complete answer once Ray restarted the replica")
    assert [(h.id, h.score) for h in complete] == local


def test_documents_added_while_queries_stream_are_found_within_the_freshness(served, tmp_path):
    app, _ = served
    ray_shards.serve(app, "caps", shards=2, replicas=1)
    path = tmp_path / "new.csv"
    pd.DataFrame([("kite-1", "a bright red kite flying high above the sea cliffs")],
                 columns=["id", "text"]).to_csv(path, index=False)
    job = table_upload.upload(app, read_table(path), "caps").job_id
    assert run_until_done(app, job).status == "succeeded"
    committed = time.monotonic()
    until(lambda: search(app, "caps", "a kite above the ocean", k=1)[0].id == "kite-1",
          "the new document found through the shards")
    assert time.monotonic() - committed < ray_shards.REFRESH_SECONDS + 30


def test_serve_that_stops_waiting_says_the_replicas_go_on_building(served, monkeypatch):
    app, local = served
    monkeypatch.setattr(ray_shards, "READY_SECONDS", 0.001)
    with pytest.raises(ray_shards.ShardsStillBuildingError, match="go on building"):
        ray_shards.serve(app, "caps", shards=1, replicas=1)
    complete = until(lambda: not missing_of(hits := search(app, "caps", QUERY, k=10)) and hits,
                     "the replica built after serve stopped waiting")
    assert [h.id for h in complete] == [h for h, _ in local]


def test_a_corpus_not_served_says_how_to_serve_it(served):
    from searchapp.errors import SearchAppError

    app, _ = served
    with pytest.raises(SearchAppError, match="searchapp shards serve --corpus caps"):
        search(app, "caps", QUERY, k=10)


def test_the_jobs_page_lists_each_replica_of_a_served_corpus(ray_cluster, ui_resources,
                                                              monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from searchapp.ui.resources import get_app
    from searchapp.web import shared
    from tests.conftest import REPO

    monkeypatch.setenv("SEARCHAPP_SEARCH_ENGINE", "ray")
    monkeypatch.setenv("SEARCHAPP_RAY_ADDRESS", "local")
    monkeypatch.setenv("SEARCHAPP_SHARD_WORDS_DIR", str(tmp_path / "shard-words"))
    shared.reset()  # a new App reads the settings
    app = get_app()
    path = tmp_path / "few.csv"
    pd.DataFrame([(f"q{i}", f"question number {i} about the beach") for i in range(40)],
                 columns=["id", "text"]).to_csv(path, index=False)
    assert run_until_done(app, table_upload.upload(app, read_table(path), "few").job_id
                          ).status == "succeeded"
    ray_shards.serve(app, "few", shards=2, replicas=2)
    try:
        at = AppTest.from_file(REPO / "searchapp/ui/pages/jobs.py", default_timeout=60).run()
        assert not at.exception
        [table] = [t.value for t in at.dataframe if "replica" in t.value.columns]
        assert sorted(table["shard"]) == ["1 of 2", "1 of 2", "2 of 2", "2 of 2"]
        assert set(table["state"]) == {"serving"} and table["documents"].sum() == 80
    finally:
        ray_shards.stop(app, "few")
