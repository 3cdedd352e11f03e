"""Ranking metrics, bootstrap intervals and benchmark files: checked against plain definitions."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.errors import IngestError, InvalidParameterError
from searchapp.evaluation import bootstrap
from searchapp.evaluation.benchmark_files import read_qrels, read_queries
from searchapp.evaluation.judged import JudgedPair, JudgedQuery, from_files, from_judgements
from searchapp.evaluation.ranking import query_metrics

DOCS = [f"d{i}" for i in range(30)]


def reference(ranked: list[str], grades: dict[str, int]) -> dict[str, float]:
    """The metrics written out as trec_eval defines them, one loop each."""
    relevant = [d for d, g in grades.items() if g >= 1]
    dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted((g for g in grades.values() if g >= 1), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    rr = 0.0
    for i, d in enumerate(ranked[:10]):
        if grades.get(d, 0) >= 1:
            rr = 1 / (i + 1)
            break
    return {"ndcg@10": dcg / idcg, "mrr@10": rr,
            "recall@10": sum(d in ranked[:10] for d in relevant) / len(relevant),
            "recall@100": sum(d in ranked[:100] for d in relevant) / len(relevant)}


@st.composite
def judged_rankings(draw):
    grades = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1,
                                  max_size=12))
    if not any(g >= 1 for g in grades.values()):
        grades[next(iter(grades))] = draw(st.integers(1, 3))
    ranked = draw(st.permutations(DOCS))[:draw(st.integers(0, 30))]
    return ranked, grades


@settings(max_examples=200, deadline=None)
@given(judged_rankings())
def test_ranking_metrics_match_their_definitions(case):
    ranked, grades = case
    got = query_metrics(ranked, grades)
    want = reference(ranked, grades)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-12), name
        assert 0.0 <= got[name] <= 1.0 + 1e-12


def test_the_ideal_order_scores_one_and_grades_weigh_linearly():
    grades = {"a": 3, "b": 1, "c": 0}
    assert query_metrics(["a", "b", "c"], grades)["ndcg@10"] == pytest.approx(1.0)
    swapped = query_metrics(["b", "a"], grades)["ndcg@10"]
    assert swapped == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))


def test_a_query_without_a_relevant_document_is_refused():
    with pytest.raises(InvalidParameterError, match="judged relevant"):
        query_metrics(["a"], {"a": 0})


# ---- bootstrap ---------------------------------------------------------------------------
def test_an_interval_holds_the_value_and_the_same_seed_gives_the_same_interval():
    values = np.random.default_rng(3).random(50)
    first = bootstrap.mean_interval(values, seed=11)
    assert first.low < first.value < first.high and first.n == 50
    assert bootstrap.mean_interval(values, seed=11) == first
    assert bootstrap.mean_interval(values, seed=12) != first


def test_fewer_items_give_a_wider_interval():
    values = np.random.default_rng(4).random(400)
    wide, narrow = bootstrap.mean_interval(values[:20]), bootstrap.mean_interval(values)
    assert wide.high - wide.low > 2 * (narrow.high - narrow.low)


def test_the_paired_comparison_sees_a_small_gain_that_side_by_side_intervals_hide():
    """Hard and easy queries vary far more than the models differ: pairing cancels that."""
    per_query = np.random.default_rng(5).random(40)  # current model, query by query
    better = np.clip(per_query + 0.02, 0, None)  # a new model 2 points better on every query
    diff = bootstrap.paired_mean_difference(per_query, better)
    assert diff.verdict == "better" and diff.low > 0
    assert diff.a.high > diff.b.low  # the two intervals overlap: unpaired, no verdict
    assert bootstrap.paired_mean_difference(better, per_query).verdict == "worse"
    noise = per_query + np.random.default_rng(6).normal(0, 0.05, 40)
    assert bootstrap.paired_mean_difference(per_query, noise).verdict == "not distinguishable"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=2, max_size=60).filter(lambda x: 0 < sum(x) < len(x)),
       st.integers(0, 10_000))
def test_stratified_draws_keep_each_labels_count(labels, seed):
    labels = np.array(labels)
    draws = bootstrap.resamples(len(labels), rounds=20, seed=seed, strata=labels)
    assert draws.shape == (20, len(labels))
    assert (labels[draws].sum(axis=1) == labels.sum()).all()


def test_a_statistic_interval_for_pairs_never_draws_a_round_without_duplicates():
    from searchapp.evaluation.metrics import average_precision

    labels = np.array([1] + [0] * 30)  # one duplicate among 31 pairs
    sims = np.linspace(0, 1, 31)
    est = bootstrap.interval(lambda idx: average_precision(sims[idx], labels[idx]) / 100, 31,
                             rounds=200, strata=labels)
    assert 0 < est.low <= est.value <= est.high <= 1


# ---- judged items ------------------------------------------------------------------------
class J:
    def __init__(self, kind, query, a, b, label):
        self.kind, self.query, self.a, self.b, self.label = kind, query, a, b, label


def test_judgements_group_by_query_and_queries_without_a_relevant_document_are_counted():
    items = from_judgements([J("query", "q1", "a", None, 2), J("query", "q1", "b", None, 0),
                             J("query", "q2", "c", None, 0), J("pair", None, "a", "b", 1)])
    assert items.queries == [JudgedQuery("q1", {"a": 2, "b": 0}, "q1")]
    assert items.skipped_queries == 1 and items.pairs == [JudgedPair("a", "b", 1)]
    assert items.judgements == 3 and items.documents() == {"a", "b"}


# ---- BEIR and TREC files -------------------------------------------------------------------
def test_beir_queries_and_qrels_are_read_also_gzipped():
    queries = read_queries(gzip.compress(b'{"_id": "1", "text": "what is a cat", "m": {}}\n'
                                         b'{"_id": "2", "text": "dog food"}\n'),
                           "queries.jsonl.gz")
    assert queries == {"1": "what is a cat", "2": "dog food"}
    qrels = read_qrels(b"query-id\tcorpus-id\tscore\n1\tdoc-9\t1\n1\tdoc-3\t2\n2\tdoc-3\t0\n",
                       "test.tsv")
    assert qrels == {"1": {"doc-9": 1, "doc-3": 2}, "2": {"doc-3": 0}}
    items = from_files(queries, qrels)
    assert [q.query for q in items.queries] == ["what is a cat"] and items.skipped_queries == 1


def test_trec_qrels_with_four_columns_and_negative_grades():
    assert read_qrels(b"301 0 FT911-3 1\n301 0 FT911-4 -1\n302 Q0 LA-2 2\n", "qrels.301") == {
        "301": {"FT911-3": 1, "FT911-4": 0}, "302": {"LA-2": 2}}


@pytest.mark.parametrize(("raw", "name", "message"), [
    (b"q1\td1\n", "q.tsv", "line 1 has 2 fields"),
    (b"query-id\tcorpus-id\tscore\nq1\td1\tyes\n", "q.tsv", "line 2 has the grade 'yes'"),
    (b"q1 0 d1 1\nq2 d2 1\n", "q.txt", "line 2 has 3 fields"),
    (b"query-id\tcorpus-id\tscore\n", "q.tsv", "has no judgements"),
    (b"q1 0 \xc3( 1\n", "q.txt", "line 1, column 6 is not valid UTF-8"),
])
def test_bad_qrels_name_the_line_and_what_to_fix(raw, name, message):
    """(A UTF-16 file with its BOM is not bad: it is read, as uploads are.)"""
    assert read_qrels("q1 0 d 1\n".encode("utf-16"), "q.txt") == {"q1": {"d": 1}}
    with pytest.raises(IngestError, match=message):
        read_qrels(raw, name)


@pytest.mark.parametrize(("raw", "message"), [
    (b'{"_id": "1", "body": "x"}\n', "needs an id column"),
    (b'{"_id": "1", "text": "a"}\n{"_id": "1", "text": "b"}\n', "line 2 repeats the query id"),
    (b'{"_id": "1", "text": ""}\n', "line 1 has an empty text"),
    (b'{"_id": "1", "text": "a"}\nnot json\n', "line 2 is not valid JSON"),
])
def test_bad_queries_name_the_line(raw, message):
    with pytest.raises(IngestError, match=message):
        read_queries(raw, "queries.jsonl")


def test_two_negatives_are_too_few_for_a_verdict_however_clear_the_difference_looks():
    """With one or two items of an answer every draw holds those same items: the interval
    is far too narrow to trust, so the comparison says it cannot decide."""
    from searchapp.evaluation.corpus import MIN_PAIRS_PER_ANSWER, Evaluation, PairScores, compare

    def models(negatives: int) -> tuple[Evaluation, Evaluation]:
        labels = np.array([1] * 19 + [0] * negatives)
        keys = [(f"a{i}", "b") for i in range(len(labels))]
        old = np.r_[np.linspace(0.9, 0.99, 19), np.linspace(0.3, 0.6, negatives)]
        new = np.r_[old[:19], np.full(negatives, 0.95)]  # every negative among the duplicates
        return (Evaluation("c", "old", pairs=PairScores(old, labels, keys)),
                Evaluation("c", "new", pairs=PairScores(new, labels, keys)))

    few = compare(*models(2))
    assert few.pairs["ap"].verdict == "worse"  # what the bootstrap alone reads
    assert few.verdict == "not distinguishable"
    assert "19 duplicate and 2 other judged pairs" in few.sentence()
    enough = compare(*models(MIN_PAIRS_PER_ANSWER))
    assert enough.verdict == "worse" and not enough.too_few
