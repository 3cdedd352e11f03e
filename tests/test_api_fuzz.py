"""The API against schemathesis: generated requests to every operation of a real server.

``streamlit run serve.py`` (as ``make run`` starts it) on a free port of 127.0.0.1
with a corpus already embedded and an API key, stopped by pid at the end. Every
operation of the OpenAPI document gets requests that fit the schema and
requests that do not; none may end in a server error, and every response must
have a documented status, content type and a body that matches its schema. The
long run is ``benchmarks/api_fuzz.py`` (results/api_fuzz.json).
"""

from __future__ import annotations

import pytest

from tests.api_fuzzer import fuzz
from tests.browser import served_app

EXAMPLES = 5  # per operation and mode: a short run that still covers every endpoint
FAQ = "id,text,product\n" + "\n".join(
    f"q{i},How do I reset the password of account {i}?,p{i % 3}" for i in range(12))


def prepare(data_dir, bundled_encoder) -> str:
    """A data folder with an embedded corpus 'faq'; returns a read-write API key."""
    from searchapp.access import keys
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data_dir)}))
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    upload(app, read_table(FAQ.encode(), "faq.csv"), "faq")
    work(app, stop_when_idle=True)
    key = keys.create(app.db, "fuzz").key
    app.db.dispose()
    return key


def test_generated_requests_to_every_operation_get_no_server_error_and_match_the_schema(
        tmp_path, bundled_encoder):
    key = prepare(tmp_path / "data", bundled_encoder)
    with served_app(tmp_path / "data", tmp_path / "server.log") as (_proc, url):
        report = fuzz(url, key, examples=EXAMPLES)
    assert report.server_errors == [], report.server_errors[:3]
    assert report.violations == [], report.violations[:3]
    from searchapp.api.app import build_api

    paths = build_api(app=lambda: None).openapi()["paths"]
    every = {f"{method.upper()} {path}" for path, ops in paths.items() for method in ops}
    assert set(report.operations) == every, sorted(every - set(report.operations))
    assert min(report.operations.values()) >= EXAMPLES
    assert any(200 <= status < 300 for status in report.statuses)  # not only refusals


@pytest.mark.slow
def test_a_longer_generated_run_finds_nothing_either(tmp_path, bundled_encoder):
    key = prepare(tmp_path / "data", bundled_encoder)
    with served_app(tmp_path / "data", tmp_path / "server.log") as (_proc, url):
        report = fuzz(url, key, examples=40, seed=7)
    assert report.requests >= 1000
    assert report.server_errors == [] and report.violations == []
