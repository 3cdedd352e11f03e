"""The duplicates review queue, the threshold from the corpus' judgements, and the running
estimate: what a person's decisions on pairs feed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from searchapp import duplicates as dup
from searchapp.duplicates import calibration as cal
from searchapp.duplicates import judged_threshold as jt
from searchapp.duplicates import review
from searchapp.duplicates.job_kinds import CalibratePayload
from searchapp.errors import JudgementError
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service
from searchapp.judgements.estimate import estimate, pair_cosines
from searchapp.pairs.threshold import threshold_for
from searchapp.vectors.handle import open_corpus
from tests.test_duplicates import FAQ, make_corpus

IDS = [line.split(",", 1)[0] for line in FAQ.strip().splitlines()[1:]]


@pytest.fixture
def faq(app, bundled_encoder):
    make_corpus(app, bundled_encoder, "faq", FAQ)
    return app


def all_pairs(app) -> dict[tuple[str, str], float]:
    pairs = [tuple(sorted(p)) for p in itertools.combinations(IDS, 2)]
    cos = pair_cosines(app, open_corpus(app, "faq"), pairs)
    return dict(zip(pairs, cos.tolist(), strict=True))


def test_the_queue_waits_for_mining_below_the_threshold_then_puts_borderline_pairs_first(faq):
    assert review.review_queue(faq, "faq", 0.85, k=5) is None  # never mined this low
    job = review.request_review_mining(faq, "faq", 0.85, 5)
    assert run_until_done(faq, job).status == "succeeded"
    queue = review.review_queue(faq, "faq", 0.85, k=5, n=50)
    scores = [i.score for i in queue.items]
    assert queue.floor == 0.8 and min(scores) >= 0.8 - 1e-6
    distances = [abs(s - 0.85) for s in scores]  # the queue orders them in float32: pairs
    # as far above as below the threshold (0.8081, 0.8919) may come in either order
    assert all(b >= a - 1e-6 for a, b in itertools.pairwise(distances))
    assert any(s < 0.85 for s in scores) and any(s >= 0.85 for s in scores)  # both sides
    assert not any(i.exact for i in queue.items) and queue.exact_hidden == 1
    assert queue.pending == len(queue.items) and queue.decided == 0
    everything = review.review_queue(faq, "faq", 0.85, k=5, n=50, include_exact=True)
    assert everything.items[-1].exact and everything.pending == queue.pending + 1


def test_a_decision_or_a_skip_takes_a_pair_out_of_the_queue(faq):
    run_until_done(faq, review.request_review_mining(faq, "faq", 0.85, 5))
    first, second, *_ = review.review_queue(faq, "faq", 0.85, k=5).items
    service.add(faq, "faq", a=first.b, b=first.a, label=1, source="review")
    queue = review.review_queue(faq, "faq", 0.85, k=5, exclude=[(second.b, second.a)])
    assert (first.a, first.b) not in [(i.a, i.b) for i in queue.items]
    assert (second.a, second.b) not in [(i.a, i.b) for i in queue.items]
    assert queue.decided == 1


def judge_everything_by_rule(app, cut: float) -> dict:
    """Every pair of the corpus judged: duplicate exactly when its cosine is ≥ cut."""
    pairs = all_pairs(app)
    rows = "".join(f"{a},{b},{int(cos >= cut)}\n" for (a, b), cos in pairs.items())
    service.import_csv(app, "faq", ("a_id,b_id,label\n" + rows).encode(), "rule.csv")
    return pairs


def test_the_threshold_for_a_precision_rests_on_the_judgements_and_the_mined_pairs(faq):
    with pytest.raises(JudgementError, match="at least 10"):
        jt.calibrate_on_judgements(faq, "faq")
    judge_everything_by_rule(faq, 0.85)
    dup.find_duplicates(faq, "faq", threshold=0.6, k=10)  # the mined pairs, floor 0.60
    result = jt.calibrate_on_judgements(faq, "faq")
    assert result.judged == 78 and result.floor == 0.6 and result.fit.w > 0
    chosen = result.for_precision(0.95)
    assert 0.8 <= chosen.threshold <= 0.9
    assert chosen.judged_precision >= 0.9
    report = dup.find_duplicates(faq, "faq", threshold=chosen.threshold, k=10)
    assert chosen.pairs == report.pair_count  # the expected count is the corpus' own
    low = result.row_at(0.6)
    assert low.pairs > chosen.pairs and low.precision < chosen.precision
    assert result.row_at(0.55).pairs is None  # below what was mined: not guessed
    top = result.row_at(1.0)  # the exact copies (cosine 0.994) are pairs at any threshold
    assert top.pairs == dup.find_duplicates(faq, "faq", threshold=1.0, k=10).pair_count == 1


def test_a_file_far_more_balanced_than_the_corpus_gets_a_warning(faq):
    judge_everything_by_rule(faq, 0.85)
    dup.find_duplicates(faq, "faq", threshold=0.6, k=10)
    result = jt.calibrate_on_judgements(faq, "faq")
    far = 1.0 if result.share < 0.5 else 0.0  # at least 50 points from the corpus' share
    words = jt.share_warning(far, result, file_threshold=0.69)
    assert words.startswith(f"The file is {far:.0%} duplicates; among this corpus' candidate "
                            f"pairs (cosine ≥ 0.60) about {result.share:.0%} are (estimated "
                            "from 78 judged pairs)")
    assert "at 0.690 this corpus would have" in words
    assert jt.share_warning(result.share, result) is None


def test_the_estimate_counts_judged_pairs_above_the_threshold_and_judged_top_results(faq):
    pairs = all_pairs(faq)
    above = [p for p, c in pairs.items() if c >= 0.8][:4]
    below = [p for p, c in pairs.items() if c < 0.8][:3]
    for n, (a, b) in enumerate(above):
        service.add(faq, "faq", a=a, b=b, label=int(n < 3), source="label")
    for a, b in below:
        service.add(faq, "faq", a=a, b=b, label=1, source="label")
    service.add(faq, "faq", query="reset my password", doc="p1", label=1, source="search")
    service.add(faq, "faq", query="reset my password", doc="r1", label=0, source="search")
    service.add(faq, "faq", query="reset my password", doc="m1", label=0, source="search")
    e = estimate(faq, "faq", threshold=0.8)
    assert (e.pairs_judged, e.pairs_above, e.pair_precision) == (7, 4, 0.75)
    hits = [h.id for h in dup.check(faq, "faq", "reset my password", 0.0)][:10]
    from searchapp.search.service import search
    top = [h.id for h in search(faq, "faq", "reset my password", k=10)]
    judged_in_top = [d for d in ("p1", "r1", "m1") if d in top]
    assert e.queries == 1 and e.query_results == len(judged_in_top) and hits
    assert e.query_precision == pytest.approx(("p1" in top) / len(judged_in_top))


def test_calibration_reports_progress_while_it_scores(faq, tmp_path):
    rows = ["sentence1,sentence2,label"] + [  # 600 pairs of 40 texts: encoding is quick
        f"question {i % 20} about passwords,question {i % 20} about routers,{i % 2}"
        for i in range(600)]
    path = tmp_path / "pairs.csv"
    path.write_text("\n".join(rows), encoding="utf-8")
    seen = []

    class Ctx:
        app = faq

        def progress(self, done, total, message=None, force=False, **_):
            seen.append((done, total))

    result = cal.calibrate_task(Ctx(), CalibratePayload("all-MiniLM-L6-v2", str(path)))
    steps = [done for done, total in seen if total == 600]
    assert steps[:4] == [0, 256, 512, 600] and result["pairs"] == 600
    expected = cal.calibrate(faq, "all-MiniLM-L6-v2", cal.read_labelled_pairs(path))
    assert np.isclose(result["ap"], expected.ap)


def test_the_command_line_calibrates_on_judgements_and_warns_about_a_balanced_file(
        faq, monkeypatch, capsys, tmp_path):
    from searchapp.cli import main

    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: faq)
    judge_everything_by_rule(faq, 0.85)
    dup.find_duplicates(faq, "faq", threshold=0.6, k=10)
    assert main(["duplicates", "calibrate", "--corpus", "faq", "--precision", "0.95",
                 "--save"]) == 0
    out = capsys.readouterr().out
    chosen = jt.calibrate_on_judgements(faq, "faq").for_precision(0.95)
    assert f"Threshold {chosen.threshold:.2f} reaches precision 0.95: {chosen.pairs:,} pairs" \
        in out
    assert threshold_for(faq, "all-MiniLM-L6-v2") == (chosen.threshold, "calibrated")
    balanced = tmp_path / "balanced.csv"
    balanced.write_text("sentence1,sentence2,label\n" + "".join(
        f"How do I reset my password?,{t},{label}\n" for t, label in [
            ("How can I change my password?", 1), ("What is the procedure to reset it?", 1),
            ("How do I cook pasta?", 0), ("My cat will not eat its food.", 0)] * 2),
        encoding="utf-8")
    assert main(["duplicates", "calibrate", "--pairs", str(balanced), "--corpus", "faq"]) == 0
    out = capsys.readouterr().out
    result = jt.calibrate_on_judgements(faq, "faq")
    assert ("Warning: The file is 50% duplicates" in out) == (abs(result.share - 0.5) > 0.15)


def test_a_file_threshold_below_the_mined_pairs_is_not_given_their_count(faq):
    judge_everything_by_rule(faq, 0.85)
    dup.find_duplicates(faq, "faq", threshold=0.5, k=10)  # the grid's lowest row has pairs
    result = jt.calibrate_on_judgements(faq, "faq")
    far = 1.0 if result.share < 0.5 else 0.0
    words = jt.share_warning(far, result, file_threshold=0.274)
    lowest = result.row_at(0.5).pairs
    assert f"at 0.274 this corpus would have more pairs than the {lowest:,} it has down to " \
           "cosine 0.50" in words


def test_the_estimate_searches_a_few_new_queries_per_call_and_says_more_are_waiting(faq):
    from searchapp.judgements import estimate as est

    for n, query in enumerate(["reset my password", "capital of France", "cook pasta",
                               "restart my router", "weather tomorrow"]):
        service.add(faq, "faq", query=query, doc=IDS[n], label=1, source="search")
    first = estimate(faq, "faq")
    assert first.waiting and first.queries == 5
    searched = len(faq.memo.get(open_corpus(faq, "faq").corpus_id,
                                open_corpus(faq, "faq").generation,
                                ("estimate", "top", open_corpus(faq, "faq").model.id)).tops)
    assert searched == est.NEW_SEARCHES
    second = estimate(faq, "faq")
    assert not second.waiting and second.query_results >= first.query_results


def test_a_steep_fit_on_separated_judgements_gives_no_overflow_warning():
    import warnings

    from hypothesis import given
    from hypothesis import strategies as st

    @given(st.lists(st.floats(-1, 1), min_size=2, max_size=200), st.floats(0.05, 0.95))
    def fit(cosines, cut):
        x = np.array(cosines)
        y = (x >= cut).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an overflow in exp is an error here
            model = jt.fit_logistic(x, y)
            p = model.p(np.array([-1.0, cut, 1.0]))
        assert np.all((p >= 0) & (p <= 1))

    fit()
