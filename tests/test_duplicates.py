"""Duplicate mining, groups, the chain guard, stored results and the new-question check."""

from __future__ import annotations

import numpy as np
import pytest

from searchapp import duplicates as dup
from searchapp.errors import EmptyCorpusError, InvalidParameterError
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs import queue
from searchapp.jobs.worker import run_until_done, work
from searchapp.store import repo
from searchapp.vectors.index import VectorIndex

MODEL = "all-MiniLM-L6-v2"
# Known duplicates under the bundled model (cosine in brackets):
#   p1 = p2 (same normalised text), p1~p3 (0.94), p1~p4 (0.86), p1~p5 (0.85): passwords
#   f1~f2 (0.94): capital of France;  r1~r2 (0.89): router
# and no pair among the rest above 0.75 (pasta ~ spaghetti is 0.72).
FAQ = """id,text
p1,How do I reset my password?
p2,"  how do I   reset my password"
p3,What is the procedure to reset my password?
p4,How can I change my password?
p5,How do I reset my password on my phone?
f1,What is the capital of France?
f2,Which city is the capital of France?
c1,How do I cook pasta?
c2,What is the best way to boil spaghetti?
m1,My cat will not eat its food.
s1,The stock market fell sharply today.
r1,How do I reset my router?
r2,How do I restart my router?
"""


def make_corpus(app, encoder, name: str, csv: str) -> None:
    app.install_encoder(MODEL, encoder)  # the session's loaded encoder (saves seconds per test)
    summary = upload(app, read_table(csv.encode(), "faq.csv"), name)
    if summary.job_id is not None:
        assert run_until_done(app, summary.job_id).status == "succeeded"


@pytest.fixture
def faq(app, bundled_encoder):
    make_corpus(app, bundled_encoder, "faq", FAQ)
    return app


def pair_set(report):
    return {frozenset((p.a, p.b)) for p in report.pairs}


def test_pairs_and_groups_on_known_duplicates(faq):
    report = dup.find_duplicates(faq, "faq", threshold=0.8, k=5)
    assert report.method == "exact" and report.documents == 13 and not report.reused
    expected = {frozenset(x) for x in [
        ("p1", "p2"), ("p1", "p3"), ("p1", "p4"), ("p1", "p5"), ("p2", "p3"), ("p2", "p4"),
        ("p2", "p5"), ("p3", "p4"), ("p3", "p5"), ("f1", "f2"), ("r1", "r2")]}
    assert pair_set(report) == expected
    first = report.pairs[0]
    assert {first.a, first.b} == {"p1", "p2"} and first.exact and first.score > 0.98
    assert [p.exact for p in report.pairs] == [True] + [False] * (len(report.pairs) - 1)
    scores = [p.score for p in report.pairs[1:]]
    assert scores == sorted(scores, reverse=True) and min(scores) >= 0.8
    assert all(p.a != p.b for p in report.pairs)
    groups = {frozenset(g.members): g for g in report.groups}
    assert set(groups) == {frozenset({"p1", "p2", "p3", "p4", "p5"}), frozenset({"f1", "f2"}),
                           frozenset({"r1", "r2"})}
    password = report.groups[0]
    assert password.size == 5 and password.representative in {"p1", "p2"}
    assert password.members[0] == password.representative and password.scores[0] > 0.99
    assert report.as_dict()["groups"][0] == {"representative": password.representative,
                                             "members": password.members, "size": 5}


def test_higher_threshold_filters_the_stored_result(faq):
    low = dup.find_duplicates(faq, "faq", threshold=0.8, k=5)
    high = dup.find_duplicates(faq, "faq", threshold=0.9, k=5)
    assert high.reused  # floor 0.80 ≤ 0.9: answered from the stored pairs
    assert pair_set(high) < pair_set(low)
    assert all(p.exact or p.score >= 0.9 for p in high.pairs)
    assert frozenset({"r1", "r2"}) not in pair_set(high)  # 0.89


def test_exact_duplicates_ignore_the_threshold(faq):
    report = dup.find_duplicates(faq, "faq", threshold=1.0, k=5)
    assert [(p.a, p.b, p.exact) for p in report.pairs] == [("p1", "p2", True)]
    assert [sorted(g.members) for g in report.groups] == [["p1", "p2"]]


def test_stored_result_is_reused_and_invalidated_when_the_corpus_changes(faq, bundled_encoder):
    first = dup.find_duplicates(faq, "faq", threshold=0.8, k=5)
    again = dup.find_duplicates(faq, "faq", threshold=0.8, k=5)
    assert not first.reused and again.reused and pair_set(again) == pair_set(first)
    with faq.db.session() as s:
        corpus = repo.get_corpus(s, "faq")
        model = repo.find_model(s, MODEL)
        assert len(repo.current_analyses(s, corpus.id, model.id, dup.KIND,
                                         corpus.generation)) == 1
    make_corpus(faq, bundled_encoder, "faq", "id,text\nf3,What's the capital city of France?\n")
    assert dup.find_duplicates(faq, "faq", threshold=0.8, k=5, compute=False) is None
    changed = dup.find_duplicates(faq, "faq", threshold=0.8, k=5)
    assert not changed.reused
    assert frozenset({"f1", "f3"}) in pair_set(changed)


def test_job_mines_with_progress_and_stores(faq):
    job_id = dup.request_mining(faq, "faq", threshold=0.82, k=5)
    assert dup.request_mining(faq, "faq", threshold=0.85, k=5) == job_id  # same job reused
    assert work(faq, stop_when_idle=True) == 1
    job = queue.get(faq.db, job_id)
    assert job.status == "succeeded", job.error
    assert job.progress_done == job.progress_total == 13
    assert job.result["pairs"] == 9 and job.result["floor"] == 0.8
    report = dup.find_duplicates(faq, "faq", threshold=0.82, k=5, compute=False)
    assert report is not None and report.reused and len(report.pairs) == 9  # p3~p4, p3~p5: 0.81


def test_check_finds_duplicates_and_nothing_below_the_threshold(faq):
    matches = dup.check(faq, "faq", "how can I reset my password?", threshold=0.8)
    ids = [m.id for m in matches]
    assert set(ids) >= {"p1", "p2", "p3"} and not set(ids) & {"f1", "r1", "c1"}
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
    assert all(m.score >= 0.8 for m in matches)
    assert dup.check(faq, "faq", "Do penguins live at the north pole?", threshold=0.5) == []
    exact = dup.check(faq, "faq", "HOW DO I RESET MY ROUTER!", threshold=0.999)
    assert [m.id for m in exact] == ["r1"] and exact[0].exact


def test_add_question_queues_its_embedding(faq):
    summary = dup.add_question(faq, "faq", "Where is the Eiffel tower?", external_id="e1")
    assert summary.added == 1 and summary.job_id is not None
    run_until_done(faq, summary.job_id)
    assert [m.id for m in dup.check(faq, "faq", "Where is the Eiffel tower?")] == ["e1"]


def test_clear_errors(app, bundled_encoder):
    with pytest.raises(EmptyCorpusError, match="no embedded documents"):
        upload(app, read_table(b"text\nhello\n", "a.csv"), "pending")  # queued, not embedded
        dup.find_duplicates(app, "pending")
    make_corpus(app, bundled_encoder, "one", "id,text\na,Only one question here\n")
    with pytest.raises(dup.TooFewDocumentsError, match="only 1 embedded document"):
        dup.find_duplicates(app, "one")
    make_corpus(app, bundled_encoder, "two", "id,text\na,First question\nb,Second one\n")
    for bad in (1.5, -0.1):
        with pytest.raises(InvalidParameterError, match=r"threshold must be between 0\.0 and"):
            dup.find_duplicates(app, "two", threshold=bad)
        with pytest.raises(InvalidParameterError, match="threshold must be between"):
            dup.check(app, "two", "question", threshold=bad)
    with pytest.raises(InvalidParameterError, match="k must be between 1 and 100"):
        dup.find_duplicates(app, "two", k=0)
    with pytest.raises(InvalidParameterError, match="query is empty"):
        dup.check(app, "two", "   ")


# ---- pure parts, no encoder ------------------------------------------------------------
def arc(n: int, step_cos: float) -> np.ndarray:
    """n unit vectors on a circle, neighbours at cosine ``step_cos`` (a chain), (n, 2)."""
    angles = np.arange(n) * np.arccos(step_cos)
    return np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


def test_chain_guard_splits_a_long_chain():
    vectors = arc(7, 0.9)  # consecutive 0.9, ends at cos(6θ) ≈ -0.4
    index = VectorIndex(dim=2)
    labels = np.arange(1, 8)
    index.add(labels, vectors)
    a, b, s = dup.knn_pairs(index, floor=0.85, k=3)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(i, i + 1) for i in range(1, 7)]
    groups = dup.group_pairs(a, b, s, index.vectors, threshold=0.85)
    # union-find alone would give one group of 7 whose ends are opposite (cos -0.4);
    # the guard keeps members within 0.85 of the representative: 2 with 1 and 3,
    # then 4 with 5, then 6 with 7.
    assert [(rep, sorted(m.tolist())) for rep, m, _ in groups] == \
        [(2, [1, 2, 3]), (4, [4, 5]), (6, [6, 7])]
    for rep, members, sims in groups:
        assert members[0] == rep and (sims >= 0.85 - 1e-6).all()
        assert (index.vectors(members) @ index.vectors(np.array([rep]))[0] >= 0.85 - 1e-6).all()


def test_a_document_whose_partners_are_taken_joins_a_close_group():
    # 1 is the hub (pairs with 2, 3, 4); 5 pairs only with 2 but is close to 1 too.
    vectors = {1: [1.0, 0.0], 2: [0.96, 0.28], 3: [0.96, -0.28], 4: [0.97, 0.24],
               5: [0.9, 0.43]}
    def of(labels):
        return np.array([vectors[int(x)] for x in labels], dtype=np.float32)
    a, b = np.array([1, 1, 1, 2]), np.array([2, 3, 4, 5])
    s = np.array([(of([x]) @ of([y]).T).item() for x, y in zip(a, b, strict=True)])
    [(rep, members, sims)] = dup.group_pairs(a, b, s, of, threshold=0.85)
    assert rep == 1 and sorted(members.tolist()) == [1, 2, 3, 4, 5]
    assert sims[members.tolist().index(5)] == pytest.approx(0.9)
    assert dup.group_pairs(a, b, s, of, threshold=0.95)[0][0] == 1  # 5 is then left out
    assert 5 not in dup.group_pairs(a, b, s, of, threshold=0.95)[0][1]


def test_groups_keep_a_tight_cluster_whole():
    rng = np.random.default_rng(0)
    centre = rng.normal(size=16)
    vectors = centre + 0.05 * rng.normal(size=(6, 16))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex(dim=16)
    index.add(np.arange(6), vectors.astype(np.float32))
    a, b, s = dup.knn_pairs(index, floor=0.9, k=5)
    assert len(a) == 15 and (a < b).all() and (s >= 0.9).all()
    [(rep, members, _)] = dup.group_pairs(a, b, s, index.vectors, threshold=0.9)
    assert sorted(members.tolist()) == list(range(6)) and members[0] == rep


def test_groups_are_read_one_at_a_time_like_a_list():
    from searchapp.duplicates.grouping import Groups

    members = np.array([7, 3, 9, 5, 1, 2, 4])
    reps = np.array([7, 7, 7, 5, 5, 2, 2])
    cosines = np.array([1.0, 0.9, 0.8, 1.0, 0.95, 1.0, 0.85])
    groups = Groups(members, reps, cosines)
    listed = [(7, [7, 3, 9]), (5, [5, 1]), (2, [2, 4])]
    assert len(groups) == 3
    assert [(rep, m.tolist()) for rep, m, _ in groups] == listed
    assert [(rep, m.tolist()) for rep, m, _ in groups[1:]] == listed[1:]
    assert groups[-1][0] == 2 and groups[0][2].tolist() == [1.0, 0.9, 0.8]
    with pytest.raises(IndexError):
        groups[3]
    assert len(Groups(np.zeros(0, int), np.zeros(0, int), np.zeros(0))) == 0


def test_normalise():
    assert dup.normalise("  ¿Cómo   estás? ") == dup.normalise("cómo estás")
    assert dup.normalise("Hello, world!") == "hello, world"
    assert dup.normalise("...") == ""
    assert dup.floor_for(0.83) == 0.8 and dup.floor_for(0.8) == 0.8 and dup.floor_for(1.0) == 1.0


def test_exact_pairs_star_for_many_copies():
    same, other, empty = dup.text_key("Same"), dup.text_key("other"), dup.text_key("?!")
    n = dup.EXACT_CLIQUE_MAX + 5
    labels = np.r_[np.arange(n)[::-1], 1000, 1001]
    a, b = dup.exact_pairs(labels, np.r_[np.full(n, same), other, empty])
    assert len(a) == n - 1 and set(a.tolist()) == {0} and set(b.tolist()) == set(range(1, n))
    small = dup.exact_pairs(np.array([1, 2, 3, 4]), np.array([same, same, same, empty]))
    assert sorted(zip(*(x.tolist() for x in small), strict=True)) == [(1, 2), (1, 3), (2, 3)]
    assert empty == 0 and dup.text_key("  SAME ") == same


def test_iter_neighbours_exact_and_hnsw_agree_with_brute_force(monkeypatch):
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = np.arange(10, 310)
    truth = vectors @ vectors.T
    np.fill_diagonal(truth, -np.inf)
    want = labels[np.argsort(-truth, axis=1)[:, :5]]
    for exact_max in (10_000, 10):  # exact path, then the hnswlib path
        monkeypatch.setattr("searchapp.vectors.index.EXACT_MAX", exact_max)
        index = VectorIndex(dim=8)
        index.add(labels, vectors)
        index.delete(np.array([10]))  # deleted items are neither queried nor found
        got = {int(a): n for batch in index.iter_neighbours(5, batch_size=64)
               for a, n in zip(batch[0], batch[1], strict=True)}
        assert sorted(got) == labels[1:].tolist()
        assert all(a not in n and 10 not in n and len(n) == 5 for a, n in got.items())
        live = truth[1:, 1:]
        want = labels[1:][np.argsort(-live, axis=1)[:, :5]]
        agree = np.mean([len(set(got[a].tolist()) & set(w.tolist())) / 5
                         for a, w in zip(labels[1:].tolist(), want, strict=True)])
        assert agree == 1.0 if exact_max > 300 else agree > 0.95


def test_documents_with_more_partners_than_k_are_expanded(monkeypatch):
    rng = np.random.default_rng(2)
    centre = rng.normal(size=16)
    tight = centre + 0.05 * rng.normal(size=(40, 16))  # 40 near-copies: 39 partners each
    spread = rng.normal(size=(200, 16))
    vectors = np.concatenate([tight, spread])
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    truth = {(i, j) for i in range(240) for j in range(i + 1, 240)
             if vectors[i] @ vectors[j] >= 0.9}
    for exact_max in (10_000, 10):  # exact path, then the hnswlib path
        monkeypatch.setattr("searchapp.vectors.index.EXACT_MAX", exact_max)
        index = VectorIndex(dim=16)
        index.add(np.arange(240), vectors)
        a, b, _ = dup.knn_pairs(index, floor=0.9, k=5)
        found = set(zip(a.tolist(), b.tolist(), strict=True))
        assert len(truth) >= 780 and found == truth  # k=5 alone would find at most 5 per doc
        a, b, _ = dup.knn_pairs(index, floor=0.9, k=5, max_k=5)
        assert len(a) < len(truth)
