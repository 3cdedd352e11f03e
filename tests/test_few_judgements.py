"""Learning from few judgements: 5 judged queries fit hybrid search's fusion, each query
judged by a fit on the others with an exact sign-flip test; fewer are refused saying what
is needed; the plan says what more judgements buy (real SQLite, the bundled encoder)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.cli import main
from searchapp.errors import TrainingDataError
from searchapp.evaluation.bootstrap import sign_flip_p, sign_test_needs
from searchapp.evaluation.enough import MIN_FIT_QUERIES
from searchapp.evaluation.fusion_fit import fit_fusion
from searchapp.evaluation.judged import Items, JudgedQuery
from searchapp.jobs import queue
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service as judgements
from searchapp.search.fusion import DEFAULT
from searchapp.training import holdout
from searchapp.training.learn_job import request_learning
from searchapp.training.learning_plan import plan_for
from tests.test_fusion import code_items, make_codes_corpus


@pytest.fixture
def app(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    return app


def judge_queries(app, queries: dict[str, str]) -> None:
    lines = ["query,doc_id,label"] + [f"{q},{d},1" for q, d in queries.items()]
    judgements.import_csv(app, "codes", "\n".join(lines).encode(), "queries.csv")


WEAK = (3, 4, 5, 7, 11)  # code queries the default fusion does not rank first (nDCG@10 < 1)
STRONG = (0, 1)  # code queries it already ranks first: nothing for a fit to gain


def some(queries: dict[str, str], indices) -> dict[str, str]:
    pairs = list(queries.items())
    return dict(pairs[i] for i in indices)


# ---- the fit from 5 judged queries ----------------------------------------------------------
def test_five_judged_queries_fit_the_fusion_judged_leave_one_query_out(app):
    queries = make_codes_corpus(app)
    fit = fit_fusion(app, "codes", items=code_items(some(queries, WEAK)), save=False)
    assert fit.gain is not None, fit.reason  # measured, not refused
    assert fit.gain["held_out"] == "each query judged by a fit on the others"
    assert fit.gain["improved"] == 5 and fit.gain["p"] == pytest.approx(1 / 32)
    assert fit.kept and fit.verdict() == "better", fit.sentence()
    assert "5 of 5 judged queries better" in fit.sentence()
    # three that gain and two that cannot: the honest answer is "not enough evidence"
    mixed = fit_fusion(app, "codes", items=code_items(some(queries, WEAK[:3] + STRONG)),
                       save=False)
    assert mixed.gain is not None and not mixed.kept and mixed.fusion == DEFAULT
    assert mixed.gain["p"] >= 0.05 and mixed.gain["improved"] <= 3
    assert "not enough evidence" in mixed.reason and "at least 5 of 5 improve" in mixed.reason
    assert mixed.verdict() == "not distinguishable"
    # one fewer than the minimum: nothing measured, and it says what a fit needs
    few = fit_fusion(app, "codes", items=code_items(some(queries, WEAK[:MIN_FIT_QUERIES - 1])))
    assert not few.kept and few.gain is None and "a fusion fit needs 5" in few.reason
    assert few.verdict() == "not measured"


# ---- the request: refused below the minimum with what is needed, accepted from 5 -----------
def test_four_are_refused_saying_what_is_needed_five_run_to_a_verdict(app):
    queries = make_codes_corpus(app)
    judge_queries(app, some(queries, WEAK[:4]))
    before = len(queue.recent(app.db, 100))
    with pytest.raises(TrainingDataError) as refused:
        request_learning(app, "codes", name="codes-v2")
    message = str(refused.value)
    assert "4 judged queries with a relevant document (a fusion fit needs 5)" in message
    assert "1 more judged queries" in message and "fine-tuning needs 16" in message
    assert len(queue.recent(app.db, 100)) == before  # no job queued
    judge_queries(app, some(queries, WEAK[4:]))
    started = request_learning(app, "codes", name="codes-v2")
    assert started.route == "fusion" and started.train["queries"] == 5
    assert "fusion is fitted to the 5 judged queries" in started.describe()
    assert any("16 positive judgements to train on" in line for line in started.plan)
    job = run_until_done(app, started.job_id)
    assert job.status == "succeeded", job.error
    assert job.result["verdict"] == "better" and job.result["kept"]
    assert "sign-flip p = 0.031" in job.result["sentence"]


def test_the_cli_says_what_it_fitted_and_what_more_judgements_buy(app, monkeypatch, capsys):
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    queries = make_codes_corpus(app)
    judge_queries(app, some(queries, WEAK))
    assert main(["finetune", "--corpus", "codes", "--from-judgements", "--name", "codes-v2",
                 "--wait"]) == 0
    out = capsys.readouterr().out
    assert "fusion is fitted to the 5 judged queries" in out
    assert "5 judged queries: hybrid search's fusion can be fitted now" in out
    assert "Fine-tuning needs 16 positive judgements" in out
    assert "Fitted fusion kept" in out


# ---- the rule and the message of what more buys -------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=60))
def test_the_plan_is_computed_from_the_rule(relevant_per_query):
    items = Items(queries=[JudgedQuery(f"question {i}", {f"d{i}-{j}": 1 for j in range(r)}
                                       | {f"n{i}": 0}) for i, r in enumerate(relevant_per_query)])
    plan = plan_for(items)
    n = sum(1 for r in relevant_per_query if r)
    train, _ = holdout.split(items)
    trainable = sum(len(q.relevant) for q in train.queries) >= holdout.MIN_TRAIN_EXAMPLES
    assert (plan.route is not None) == (n >= MIN_FIT_QUERIES or plan.can_finetune)
    assert plan.can_finetune <= trainable
    fusion, finetune, narrowing = plan.lines()
    if n < MIN_FIT_QUERIES:
        assert f"{MIN_FIT_QUERIES - n} more" in fusion
        with pytest.raises(TrainingDataError) if plan.route is None else _nothing():
            if plan.route is None:
                raise TrainingDataError(plan.refusal())
    else:
        assert f"at least {sign_test_needs(n)} of {n} improve" in fusion
    assert ("can start" in finetune) == plan.can_finetune
    later = max(n, 1) + 5
    assert f"at least {sign_test_needs(later)} of {later} improve" in narrowing


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 14), st.integers(0, 14))
def test_the_sign_flip_test_and_the_needed_count_agree(n, improved):
    improved = min(improved, n)
    diffs = np.array([1.0] * improved + [-1.0] * (n - improved))
    p = sign_flip_p(diffs)
    assert p >= 2.0 ** -n  # never surer than the signs allow
    needs = sign_test_needs(n)
    assert (p < 0.05) == (needs is not None and improved >= needs)
