"""The Models page through ``streamlit.testing.v1.AppTest``, on a real database.

Each test gets a fresh process-wide App (the resource cache is cleared); no
worker process is spawned (``ensure_worker`` records its calls instead) and
jobs run inline. The tiny random BERT stands in for a base model.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs import queue
from searchapp.jobs.worker import run_until_done
from searchapp.ui.resources import get_app
from tests.markup import shown
from tests.test_training import rows_for

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "models.py"


@pytest.fixture(autouse=True)
def fresh_resources(ui_resources):
    return ui_resources


@pytest.fixture
def tiny_registered(tiny_bert):
    """The tiny BERT as a registered model named 'tiny'."""
    app = get_app()
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    return app


def page() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=60)


def test_page_lists_models_and_previews_an_upload():
    at = page().run()
    assert not at.exception
    assert "all-MiniLM-L6-v2" in at.dataframe[0].value["name"].tolist()
    at.file_uploader[0].upload("sts.csv", rows_for("regression").encode(), "text/csv").run()
    assert "objective cosent; scores 0–5 rescaled to 0–1" in at.success[0].value
    assert any("Why cosent: CoSENT did best on scored pairs" in c.value for c in at.caption)
    assert list(at.dataframe[1].value.columns) == ["sentence1", "sentence2", "score"]
    assert at.selectbox(key="models.objective").set_value("cosine").run()
    assert "objective cosine" in at.success[0].value
    assert not any("Why" in c.value for c in at.caption)


def test_bad_upload_shows_the_error_and_cannot_start():
    bad = "premise,hypothesis,label\n" + "a,b,entailment\n" * 20 + "c,d,maybe\n"
    at = page().run()
    at.file_uploader[0].upload("nli.csv", bad.encode(), "text/csv").run()
    assert "unknown label(s) ['maybe'] in line 22" in shown(at.error[0].value)
    assert at.button[0].disabled  # the form's submit button
    assert queue.recent(get_app().db) == []


def test_start_training_then_see_chart_metrics_and_switch_a_corpus(tiny_registered,
                                                                   fresh_resources):
    app = tiny_registered
    at = page().run()
    at.file_uploader[0].upload("sts.csv", rows_for("regression", 40).encode(), "text/csv").run()
    at.text_input(key="models.name").set_value("tuned")
    at.selectbox(key="models.base").set_value("tiny")
    at.number_input(key="models.batch").set_value(8)
    at.number_input(key="models.evals").set_value(2)
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    job = queue.recent(app.db)[0]
    assert job.kind == "finetune" and job.payload["name"] == "tuned"
    assert job.payload["hyper"]["batch_size"] == 8 and fresh_resources
    assert Path(job.payload["train"]).is_file()  # a copy in the data folder
    assert run_until_done(app, job.id).status == "succeeded"

    at = page().run()
    assert "tuned" in at.dataframe[0].value["name"].tolist()
    chart = at.get("plotly_chart")
    assert chart, "the training chart is shown"
    assert "Job 1: tuned" in at.markdown[0].value + " ".join(m.value for m in at.markdown)

    upload(app, read_table(b"text\nA dog runs.\nA cat sleeps.\n", "faq.csv"), "faq")
    queue.cancel(app.db, queue.recent(app.db)[0].id)  # the upload's own embed job
    at = page().run()
    at.selectbox(key="models.corpus").set_value("faq")
    at.selectbox(key="models.target").set_value("tuned").run()
    [use] = [b for b in at.button if b.label.startswith("Use tuned")]
    use.click().run()
    embed = queue.recent(app.db)[0]
    assert (embed.kind, embed.payload) == ("embed", {"corpus": "faq", "model": "tuned",
                                                     "switch": True})
    [bar] = at.get("progress")  # the job's own bar, not a message written at the click
    assert bar.proto.text.startswith(f"Re-embedding 'faq' with 'tuned' (job {embed.id}): ")
    assert any("until the new index is complete" in c.value for c in at.caption)
    assert run_until_done(app, embed.id).status == "succeeded"
    at.run()  # the panel's next poll: the switch is done, and nothing says otherwise
    assert not at.get("progress")
    assert any(s.value.startswith(f"Re-embedding 'faq' with 'tuned' (job {embed.id}): done")
               for s in at.success)
    assert not any("until the new index" in c.value for c in at.caption)
