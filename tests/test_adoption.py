"""Adopting a model only on the user's word: accept (with the threshold the model needs),
refusals, the switch followed to its end, and the way back (CLI included)."""

from __future__ import annotations

import shutil

import pytest

from searchapp.cli import main
from searchapp.embedding.models import write_card
from searchapp.errors import ModelError
from searchapp.jobs.worker import run_until_done
from searchapp.pairs.threshold import stored_calibration, threshold_for
from searchapp.store import repo
from searchapp.training import adoption
from tests.learning_data import make_learning_corpus


@pytest.fixture
def corpus(app, tiny_bert):
    for name in ("tiny", "tiny-v2"):
        shutil.copytree(tiny_bert, app.settings.models_dir / name)
    make_learning_corpus(app, model="tiny", kinds=())
    return "topics"


def verdict(model: str, word: str, corpus: str = "topics", calibration: dict | None = None
            ) -> dict:
    return {"verdict": word, "corpus": corpus, "sentence": f"{model} is {word}.",
            "comparison": {"current": "tiny", "candidate": model},
            "threshold": {"current": 0.8, "proposed": 0.9123, "method": "count",
                          "calibration": calibration,
                          "expected_pairs": {"current": 10, "candidate_at_current": 40,
                                             "candidate_at_proposed": 10}}}


def card(app, model: str, **kwargs) -> None:
    write_card(app.settings.models_dir / model, {"name": model,
                                                 "verdict": verdict(model, **kwargs)})


def model_of(app, corpus: str) -> str:
    with app.db.session() as s:
        return repo.corpus_state(s, corpus).model_name


def test_accepting_switches_with_the_proposed_threshold_and_the_way_back_stays_open(app, corpus):
    card(app, "tiny-v2", word="better")
    assert adoption.previous_model(app, corpus) is None
    job_id = adoption.accept(app, corpus, "tiny-v2")
    assert model_of(app, corpus) == "tiny"  # the old model serves until the switch has ended
    assert threshold_for(app, "tiny-v2") == (0.9123, "calibrated")
    assert "the same number of pairs" in stored_calibration(app, "tiny-v2")["source"]
    assert run_until_done(app, job_id).status == "succeeded"
    assert model_of(app, corpus) == "tiny-v2"
    assert adoption.previous_model(app, corpus) == "tiny"

    back = run_until_done(app, adoption.rollback(app, corpus))
    assert back.status == "succeeded" and back.result["embedded"] == 0  # vectors were kept
    assert model_of(app, corpus) == "tiny" and adoption.previous_model(app, corpus) == "tiny-v2"


def test_a_calibration_on_held_out_pairs_is_saved_as_it_was_measured(app, corpus):
    calibration = {"model": "tiny-v2", "threshold": 0.77, "ap": 88.0, "f1": 80.0,
                   "precision": 81.0, "recall": 79.0, "pairs": 40, "positives": 20,
                   "curve": {"precision": [1.0], "recall": [0.05], "threshold": [0.95]},
                   "source": "held-out judgements; the same precision as tiny's threshold",
                   "seconds": 0.0}
    card(app, "tiny-v2", word="not distinguishable", calibration=calibration)
    adoption.accept(app, corpus, "tiny-v2")
    assert stored_calibration(app, "tiny-v2") == calibration


def test_a_model_judged_worse_is_adopted_only_when_forced(app, corpus):
    card(app, "tiny-v2", word="worse")
    with pytest.raises(ModelError, match=r"judged worse than tiny .* --force"):
        adoption.accept(app, corpus, "tiny-v2")
    assert threshold_for(app, "tiny-v2")[1] == "default"  # nothing saved, nothing queued
    assert run_until_done(app, adoption.accept(app, corpus, "tiny-v2", force=True)).status == \
        "succeeded"


def test_a_model_not_measured_is_adopted_only_when_forced(app, corpus):
    card(app, "tiny-v2", word="not measured")
    with pytest.raises(ModelError, match=r"was not measured .* --force"):
        adoption.accept(app, corpus, "tiny-v2")
    adoption.accept(app, corpus, "tiny-v2", force=True)


def test_a_model_judged_on_another_corpus_is_not_accepted_for_this_one(app, corpus):
    card(app, "tiny-v2", word="better", corpus="elsewhere")
    with pytest.raises(ModelError, match="judged on corpus 'elsewhere', not 'topics'"):
        adoption.accept(app, corpus, "tiny-v2")


def test_nothing_to_roll_back_to_is_a_clear_error(app, corpus):
    with pytest.raises(ModelError, match="no previous model to go back to"):
        adoption.rollback(app, corpus)


def test_cli_use_and_rollback(app, corpus, monkeypatch, capsys):
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    card(app, "tiny-v2", word="better")
    assert main(["models", "use", "--corpus", corpus, "--model", "tiny-v2", "--wait"]) == 0
    out = capsys.readouterr().out
    assert "tiny-v2 is better." in out
    assert "Corpus 'topics' now uses tiny-v2 (duplicate threshold 0.9123, calibrated)" in out
    assert "searchapp models rollback --corpus topics" in out
    assert main(["models"]) == 0
    assert "better on topics" in capsys.readouterr().out
    assert main(["models", "rollback", "--corpus", corpus, "--wait"]) == 0
    assert "Corpus 'topics' now uses tiny " in capsys.readouterr().out
    assert main(["models", "use", "--corpus", corpus]) == 1
    assert "needs --corpus C --model M" in capsys.readouterr().err
