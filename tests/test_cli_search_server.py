"""``searchapp search`` answered by a running app server (``make run``'s ``serve.py``), with no
worker on the data folder: the server's own App answers over ``DATA_DIR/run/query.sock``."""

from __future__ import annotations

import json
import time

import pandas as pd

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import hit_json, search
from tests.browser import served_without_worker
from tests.test_cli_search_socket import ROWS, answers, cli_without_torch


def pets(app) -> None:
    csv = pd.DataFrame([{"id": i, "text": t} for i, t in ROWS]).to_csv(index=False).encode()
    job = run_until_done(app, upload(app, read_table(csv, "pets.csv"), "pets").job_id)
    assert job.status == "succeeded", job.error


def test_the_cli_is_answered_by_a_running_app_server(tmp_path):
    with served_without_worker(tmp_path, pets) as (_url, _browser, app):
        data_dir = app.settings.data_dir
        deadline = time.monotonic() + 120
        while not answers(data_dir):  # the server's thread listens from its start
            assert time.monotonic() < deadline, "the server never answered on its socket"
            time.sleep(0.1)
        proc = cli_without_torch(tmp_path, "search", "--corpus", "pets", "a kitten asleep",
                                 "-k", "2", "--json")
        assert proc.returncode == 0, proc.stderr
        assert "LOADED []" in proc.stderr
        here = [hit_json(h) for h in search(app, "pets", "a kitten asleep", k=2)]
        assert [h["id"] for h in json.loads(proc.stdout)["results"]] == [h["id"] for h in here]
