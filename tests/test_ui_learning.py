"""The Evaluate page and the Models page's learning loop, through ``AppTest`` on a real
database; jobs run inline. The tiny random BERT is the corpus' model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.jobs import queue
from searchapp.jobs.worker import run_until_done
from searchapp.store import repo
from searchapp.training.learn_job import request_learning
from searchapp.ui.resources import get_app
from tests.learning_data import make_learning_corpus

PAGES = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages"


@pytest.fixture
def corpus(ui_resources, tiny_bert):
    app = get_app()
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    make_learning_corpus(app, model="tiny")
    return app


def page(name: str) -> AppTest:
    return AppTest.from_file(PAGES / f"{name}.py", default_timeout=120)


def texts(at: AppTest) -> str:
    """Every message, caption and progress text on the page, as one string."""
    parts = [e.value for kind in ("success", "info", "warning", "error", "caption", "markdown")
             for e in getattr(at, kind)]
    parts += [p.proto.text for p in at.get("progress")]
    return "\n".join(str(p) for p in parts)


def model_of(app, corpus: str = "topics") -> str:
    with app.db.session() as s:
        return repo.corpus_state(s, corpus).model_name


def test_the_evaluate_page_measures_a_model_and_keeps_its_history(corpus):
    app = corpus
    at = page("evaluate").run()
    assert not at.exception
    assert "80 relevant and 20 not relevant documents judged for 40 queries" in texts(at)
    assert "No evaluation of this corpus yet" in texts(at)
    [evaluate] = [b for b in at.button if b.label == "Evaluate"]
    evaluate.click().run()
    job = queue.recent(app.db)[0]
    assert (job.kind, job.payload["model"]) == ("evaluate", "tiny")
    assert "Evaluation job" in texts(at)
    assert run_until_done(app, job.id).status == "succeeded"
    at.run()
    assert not at.exception
    modes = at.dataframe[0].value
    assert modes["mode"].tolist() == ["hybrid", "semantic", "lexical"]
    assert modes["queries"].tolist() == [40, 40, 40]
    assert all(" [" in cell for cell in modes["nDCG@10"])  # value [low, high]
    assert at.dataframe[1].value["pairs"].tolist() == [80]
    assert at.get("plotly_chart"), "the history chart"
    assert at.dataframe[-1].value["model"].tolist() == ["tiny"]


def test_a_learning_verdict_is_adopted_followed_to_its_end_and_rolled_back(corpus):
    app = corpus
    job_id = request_learning(app, "topics", name="learned", augment="off", max_steps=3,
                              batch_size=8).job_id
    assert run_until_done(app, job_id).status == "succeeded"
    verdict = queue.get(app.db, job_id).result["verdict"]
    at = page("models").run()
    assert not at.exception
    assert "on the held-out judgements" in texts(at)
    assert any("hybrid nDCG@10" in m for m in at.dataframe[-1].value["metric"].tolist())
    label = "Use learned for topics" if verdict != "worse" else "Use learned anyway"
    [use] = [b for b in at.button if b.label == label]
    use.click().run()
    assert not at.exception and model_of(app) == "tiny"  # not before the job has run
    assert "Re-embedding 'topics' with 'learned'" in texts(at)

    switch = queue.recent(app.db)[0]
    assert (switch.kind, switch.payload["model"], switch.payload["switch"]) == (
        "embed", "learned", True)
    assert run_until_done(app, switch.id).status == "succeeded"
    at.run()
    assert model_of(app) == "learned"
    shown = texts(at)
    assert "'topics' now uses learned" in shown and "until the new index" not in shown

    [back] = [b for b in at.button if b.label == "Back to tiny"]
    back.click().run()
    rollback = queue.recent(app.db)[0]
    assert run_until_done(app, rollback.id).status == "succeeded"
    at.run()
    assert model_of(app) == "tiny" and "'topics' now uses tiny" in texts(at)


def test_evaluate_keeps_a_learning_jobs_held_out_set_apart_from_the_judgements(corpus):
    import json

    from searchapp.judgements.service import save_evaluation_run

    def pairs(ap: float, n: int) -> dict:
        est = {"value": ap, "low": ap - 5, "high": ap + 5}
        return {"queries": None, "pairs": {"ap": est, "f1": est, "threshold": est, "n": n,
                                           "positives": n // 2}}

    app = corpus
    save_evaluation_run(app, "topics", "tiny", pairs(80.0, 80), 180, note="judgements")
    save_evaluation_run(app, "topics", "tiny", pairs(87.0, 2), 2,
                        note="held-out judgements, learning job 5")
    at = page("evaluate").run()
    assert not at.exception
    heads = [m.value for m in at.markdown if m.value.startswith("**tiny**")]
    assert len(heads) == 2, heads  # one latest result per set, not the last run alone
    assert any("on judgements" in h for h in heads)
    assert any("on held-out set of learning job 5" in h for h in heads)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert {t["name"] for t in spec["data"]} == {
        "tiny on judgements · pair AP", "tiny on held-out set of learning job 5 · pair AP"}
