"""The Models page's learning form starts where the user is (the address' corpus, a usable
name), checks the name as it is typed, and refuses before queuing judgements that cannot
give a verdict (AppTest on a real database; the tiny random BERT is the corpus' model)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.errors import TrainingDataError
from searchapp.jobs import queue
from searchapp.judgements import service as judgements
from searchapp.training.learn_job import LEARN, request_learning
from searchapp.ui.resources import get_app
from searchapp.ui.url_state import write_last_corpus
from tests.learning_data import TOPICS, make_learning_corpus

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "models.py"


@pytest.fixture
def corpora(ui_resources, tiny_bert):
    """"topics" judged for a verdict; "only-dups": duplicate pairs alone (enough to train
    on, none held out judged not duplicate, no query: no verdict possible)."""
    app = get_app()
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    make_learning_corpus(app, model="tiny")
    make_learning_corpus(app, "only-dups", model="tiny", kinds=())
    pairs = "a_id,b_id,label\n" + "".join(f"t{i}-a,t{i}-b,1\n" for i in range(TOPICS))
    judgements.import_csv(app, "only-dups", pairs.encode(), "pairs.csv")
    write_last_corpus(app.settings.data_dir, "only-dups")  # used last (and first by name)
    return app


def models_page(corpus: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["corpus"] = corpus
    return at.run()


def learn_jobs(app) -> list:
    return [j for j in queue.recent(app.db, 100) if j.kind == LEARN]


def test_the_form_starts_on_the_address_corpus_with_a_name_that_can_be_used(corpora):
    at = models_page("topics")
    assert not at.exception
    assert at.selectbox(key="models.learn.corpus").value == "topics"
    assert at.selectbox(key="models.corpus").value == "topics"
    assert at.text_input(key="models.learn.name").value == "topics-v2"
    assert not at.button(key="models.learn.go").disabled
    at.selectbox(key="models.learn.corpus").set_value("only-dups").run()
    assert at.text_input(key="models.learn.name").value == "only-dups-v2"  # follows the corpus
    at.text_input(key="models.learn.name").input("tiny").run()  # a model's name: refused now
    assert at.button(key="models.learn.go").disabled
    assert any("already exists" in e.value for e in at.error)
    at.selectbox(key="models.learn.corpus").set_value("topics").run()
    assert at.text_input(key="models.learn.name").value == "tiny"  # typed: kept


def test_judgements_without_a_verdict_are_refused_before_any_job(corpora):
    app = corpora
    with pytest.raises(TrainingDataError, match="cannot give a verdict"):
        request_learning(app, "only-dups", name="dups-v2")
    at = models_page("only-dups")
    at.button(key="models.learn.go").click().run()
    assert not at.exception
    assert any("cannot give a verdict" in e.value for e in at.error), [e.value for e in at.error]
    assert learn_jobs(app) == []
    at = models_page("topics")  # judgements that can: queued
    at.button(key="models.learn.go").click().run()
    assert [j.payload["name"] for j in learn_jobs(app)] == ["topics-v2"]


def test_the_form_says_what_the_judgements_allow_and_what_more_would_buy(corpora):
    at = models_page("topics")
    said = " ".join(i.value for i in at.info)
    assert "40 judged queries: hybrid search's fusion can be fitted now" in said
    assert "Fine-tuning can start" in said and "narrows the held-out estimate" in said
    at.selectbox(key="models.learn.corpus").set_value("only-dups").run()
    said = " ".join(i.value for i in at.info)
    assert "0 judged queries: 5 more (each with a relevant document)" in said
    assert "Fine-tuning needs 5 held-out judged queries" in said
