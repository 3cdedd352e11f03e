"""The learning jobs end to end on a real database with the tiny random BERT as the corpus'
model: the verdict, the model card, the runs saved, nothing switched; refusals before any
job; cancel; the unsupervised adaptation."""

from __future__ import annotations

import shutil

import pytest

from searchapp.embedding.models import read_card
from searchapp.errors import JobError, ModelError, TrainingDataError
from searchapp.evaluation.bootstrap import VERDICTS
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job, run_until_done
from searchapp.judgements.service import evaluation_runs
from searchapp.store import repo
from searchapp.training.adapt_job import request_adaptation
from searchapp.training.job_steps import work_folder
from searchapp.training.learn_job import request_learning
from tests.learning_data import make_learning_corpus

FAST = {"max_steps": 4, "batch_size": 8, "checkpoint_every": 2}


@pytest.fixture
def tiny(app, tiny_bert):
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    return "tiny"


def corpus_model(app, name: str = "topics") -> str:
    with app.db.session() as s:
        return repo.corpus_state(s, name).model_name


@pytest.mark.parametrize("augment", ["off", "on"])
def test_learning_ends_with_a_verdict_and_leaves_the_corpus_as_it_was(app, tiny, augment):
    make_learning_corpus(app, model=tiny)
    started = request_learning(app, "topics", name="learned", augment=augment, **FAST)
    assert started.augment == (augment == "on")
    assert started.held_out["queries"] >= 5 and started.train["pairs"] > 40
    job = run_until_done(app, started.job_id)
    assert job.status == "succeeded", job.error
    result = job.result
    assert result["verdict"] in VERDICTS and result["model"] == "learned"
    assert "on the held-out judgements" in result["sentence"]
    # minutes per step, and nothing but steps (a clock reading leaked in as "last")
    assert set(result["step_seconds"]) <= {"items_and_mine", "train", "verdict", "final"}
    assert all(0 <= s < 3600 for s in result["step_seconds"].values())
    comparison = result["comparison"]
    assert comparison["current"] == "tiny" and comparison["candidate"] == "learned"
    assert set(comparison["queries"]) == {"semantic", "lexical", "hybrid"}
    assert set(comparison["pairs"]) == {"ap", "f1"}
    threshold = result["threshold"]
    assert threshold["method"] in ("precision", "count") and 0 < threshold["proposed"] <= 1
    card = read_card(app.settings.models_dir / "learned")
    assert card["objective"] == "mixed" and card["verdict"]["verdict"] == result["verdict"]
    assert card["data"]["split"]["held"]["judgements"] == started.held_out["judgements"]
    negatives = card["negatives"]
    assert negatives["pairs"] > 0 and negatives["judged"] > 0
    assert negatives["mined"] + negatives["random"] > 0
    if augment == "on":
        assert card["augmentation"]["tried"] and "kept" in card["augmentation"]
        assert card["augmentation"]["silver"]["candidates"] > 0
    assert corpus_model(app) == "tiny"  # never switched by the job
    assert [r.model_name for r in evaluation_runs(app, "topics")] == ["tiny", "learned"]
    assert not work_folder(app, "learned").exists()


def test_too_few_judgements_are_refused_before_any_job(app, tiny):
    make_learning_corpus(app, model=tiny, kinds=())
    with pytest.raises(TrainingDataError, match="positive judgements to train on"):
        request_learning(app, "topics", name="nothing")
    assert queue.recent(app.db) and all(j.kind == "embed" for j in queue.recent(app.db))


def test_a_taken_name_and_a_second_job_are_refused(app, tiny):
    make_learning_corpus(app, model=tiny)
    with pytest.raises(ModelError, match="already exists"):
        request_learning(app, "topics", name="tiny")
    request_learning(app, "topics", name="first", **FAST)
    with pytest.raises(JobError, match="already has a learning job"):
        request_learning(app, "topics", name="second", **FAST)
    with pytest.raises(TrainingDataError, match="augment must be one of"):
        request_learning(app, "topics", name="third", augment="maybe")


def test_cancelling_stops_learning_and_saves_no_model(app, tiny):
    make_learning_corpus(app, model=tiny)
    job_id = request_learning(app, "topics", name="stopped", **FAST).job_id
    claimed = queue.claim(app.db, "test")
    queue.cancel(app.db, job_id)
    assert run_job(app, claimed) == "cancelled"
    assert not (app.settings.models_dir / "stopped").exists()
    assert corpus_model(app) == "tiny"


def test_adapting_without_judgements_says_it_was_not_measured(app, tiny):
    make_learning_corpus(app, model=tiny, kinds=())
    job = run_until_done(app, request_adaptation(app, "topics", name="adapted", max_steps=3))
    assert job.status == "succeeded", job.error
    assert job.result["verdict"] == "not measured"
    assert "has no judgements to measure it on" in job.result["sentence"]
    card = read_card(app.settings.models_dir / "adapted")
    assert card["objective"] == "simcse" and card["training"]["steps"] == 3
    assert corpus_model(app) == "tiny"


def test_adapting_with_judgements_is_judged_on_all_of_them(app, tiny):
    make_learning_corpus(app, model=tiny)
    job = run_until_done(app, request_adaptation(app, "topics", name="adapted", max_steps=2))
    assert job.status == "succeeded", job.error
    assert job.result["verdict"] in VERDICTS
    assert job.result["comparison"]["queries"]["hybrid"]["ndcg@10"]["a"]["n"] == 40


class Stopped(Exception):
    pass


@pytest.mark.parametrize(("stop_at", "resumed_from"), [
    ("Step 3 of 4: Fine-tuning on the judgements · step 3/4", 2),  # after a checkpoint
    ("Step 4 of 4", None),  # the model saved, its verdict not yet written
])
def test_a_learning_job_stopped_mid_step_carries_on_from_there(app, tiny, stop_at,
                                                               resumed_from):
    from searchapp.jobs.kinds import parse_payload
    from searchapp.jobs.tasks import TaskContext
    from searchapp.training.learn_job import learn_task

    class StopAt(TaskContext):
        def progress(self, done, total, message=None, **kwargs):
            if message and message.startswith(stop_at):
                raise Stopped()
            return super().progress(done, total, message, **kwargs)

    make_learning_corpus(app, model=tiny)
    job_id = request_learning(app, "topics", name="learned", augment="off", **FAST).job_id
    lease = queue.claim(app.db, "test").lease
    payload = parse_payload("learn", queue.get(app.db, job_id).payload)
    with pytest.raises(Stopped):
        learn_task(StopAt(app, lease), payload)
    assert (work_folder(app, "learned") / "items.json").is_file()
    result = learn_task(TaskContext(app, lease), payload)
    assert result["verdict"] in VERDICTS and result["resumed_from"] == resumed_from
    assert read_card(app.settings.models_dir / "learned")["verdict"]["verdict"] == \
        result["verdict"]
