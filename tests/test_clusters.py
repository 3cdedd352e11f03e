"""Clusters: planted groups recovered, named and stored; outliers kept apart."""

from __future__ import annotations

import json

import numpy as np
import pytest

from searchapp import clusters as cl
from searchapp.clusters import ClusterParams, cached_clusters, compute_and_store, request_clusters
from searchapp.errors import EmptyCorpusError, InvalidParameterError
from searchapp.jobs.worker import run_until_done
from searchapp.store import repo
from searchapp.store.repo import NewDocument
from searchapp.vectors.handle import open_corpus
from searchapp.vectors.index import EXACT_MAX, VectorIndex

MODEL = "all-MiniLM-L6-v2"
TOPICS = [("apple", "banana"), ("engine", "wheel"), ("guitar", "drums"), ("river", "mountain")]
FILLER = ["today", "really", "nice", "quite", "something", "people", "place", "always"]


def planted(sizes=(40, 30, 25, 20), n_outliers=6, dim=384, noise=0.5, seed=0):
    """Unit vectors around one random centre per cluster, plus isolated random outliers.

    Returns vectors (n, dim), truth (n,) with -1 for outliers, and texts that
    carry their cluster's topic words amid shared filler words.
    """
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(sizes), dim))
    vectors, truth, texts = [], [], []
    for c, size in enumerate(sizes):
        vectors.append(centres[c] + noise * rng.normal(size=(size, dim)))
        truth += [c] * size
        texts += [f"{' '.join(rng.choice(FILLER, 3))} {TOPICS[c][i % 2]} {FILLER[i % 8]}"
                  for i in range(size)]
    vectors.append(rng.normal(size=(n_outliers, dim)) * 1.0)
    truth += [-1] * n_outliers
    texts += [f"{FILLER[i % 8]} unrelated note {i}" for i in range(n_outliers)]
    v = np.vstack(vectors).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True), np.array(truth), texts


def make_corpus(app, name, texts, vectors):
    """A corpus whose documents carry the given vectors (no encoder involved)."""
    model = app.model_ref(MODEL)
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, MODEL)
        repo.add_documents(s, corpus, [NewDocument(f"d{i}", t) for i, t in enumerate(texts)])
        s.flush()
        by_ext = {ext: i for i, (ext, _) in repo.document_texts(s, corpus.id).items()}
        ids = [by_ext[f"d{i}"] for i in range(len(texts))]
        if len(vectors):
            repo.save_embeddings(s, corpus.id, model.id, ids, vectors)
    return ids


def agreement(truth, found) -> float:
    from sklearn.metrics import adjusted_rand_score

    return adjusted_rand_score(truth, found)


def assigned(result) -> np.ndarray:
    """Clusters in the planted order (ids are d0, d1, ...)."""
    order = np.argsort([int(i[1:]) for i in result.ids])
    return np.asarray(result.cluster)[order]


# ---- the k-NN graph -------------------------------------------------------------
@pytest.mark.parametrize("n", [50, 5_200])  # exact below EXACT_MAX, HNSW above
def test_knn_graph_matches_brute_force_and_excludes_self(n):
    rng = np.random.default_rng(1)
    v = rng.normal(size=(n, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    idx = VectorIndex(8)
    idx.add(np.arange(100, 100 + n), v)
    idx.delete(np.array([100]))
    labels, scores = idx.knn_graph(5)
    live = idx.labels()
    assert labels.shape == scores.shape == (n - 1, 5)
    assert not (labels == live[:, None]).any()
    assert not (labels == 100).any()
    sims = v[1:] @ v[1:].T
    np.fill_diagonal(sims, -np.inf)
    best = np.sort(sims, axis=1)[:, ::-1][:, :5]
    recall = np.mean([len(set(labels[i]) & set(100 + 1 + np.argsort(-sims[i])[:5])) / 5
                      for i in range(0, n - 1, max(1, n // 200))])
    assert recall > 0.95
    if n <= EXACT_MAX:  # exact search: the nearest neighbour's score is the true one
        assert np.allclose(scores[:, 0], best[:, 0], atol=1e-5)
    else:  # HNSW: never better than the truth, and the truth for nearly every row
        assert (scores[:, 0] <= best[:, 0] + 1e-5).all()
        assert np.mean(np.isclose(scores[:, 0], best[:, 0], atol=1e-5)) > 0.97
    assert (np.diff(scores, axis=1) <= 1e-6).all()


def test_knn_graph_of_tiny_indexes():
    idx = VectorIndex(2)
    assert idx.knn_graph(3)[0].shape == (0, 0)
    idx.add(np.array([1]), np.array([[1.0, 0.0]], dtype=np.float32))
    assert idx.knn_graph(3)[0].shape == (1, 0)


# ---- the math -------------------------------------------------------------------
def test_community_detection_claims_communities_bigger_than_k(app):
    vectors, truth, texts = planted(sizes=(120, 90), n_outliers=5, noise=0.3)
    make_corpus(app, "big", texts, vectors)
    result = compute_and_store(app, "big", ClusterParams("community", projection="pca"))
    found = assigned(result)
    assert [c["size"] for c in result.clusters] == [120, 90]  # > GRAPH_K neighbours each
    assert agreement(truth, found) == 1.0


@pytest.mark.parametrize("params", [
    ClusterParams("community", projection="pca"),
    ClusterParams("hdbscan", projection="pca"),
    ClusterParams("kmeans", k=4, projection="pca"),
])
def test_planted_clusters_recovered_labelled_and_outliers_kept(app, params):
    vectors, truth, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    result = compute_and_store(app, "planted", params)
    found = assigned(result)
    assert agreement(truth[truth >= 0], found[truth >= 0]) > 0.95
    assert (found[truth == -1] == -1).all(), "planted outliers must stay outliers"
    assert result.outliers == (found == -1).sum() and result.outliers >= 6
    assert len(result.clusters) == 4
    for c in result.clusters:
        members = truth[found == c["id"]]
        topic = TOPICS[np.bincount(members[members >= 0]).argmax()]
        assert set(topic) <= set(c["terms"][:2]), (c["label"], topic)
        assert c["example"] in {f"d{i}" for i in np.flatnonzero(found == c["id"])}
    sizes = [c["size"] for c in result.clusters]
    assert sizes == sorted(sizes, reverse=True)


@pytest.mark.slow  # UMAP's first call compiles with numba: ~1 min on a busy small CPU
def test_umap_map_and_hdbscan_on_umap(app):
    vectors, truth, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    result = compute_and_store(app, "planted", ClusterParams("hdbscan"))
    found = assigned(result)
    assert result.projection == "umap"
    assert agreement(truth[truth >= 0], found[truth >= 0]) > 0.95
    assert (found[truth == -1] == -1).all()


def test_ctfidf_prefers_words_of_one_cluster():
    texts = ["the cat sat", "a cat ran", "the dog sat", "a dog ran", "the dog barked"]
    terms = cl.ctfidf_terms(texts, np.array([0, 0, 1, 1, 1]), top_n=1)
    assert terms == {0: ["cat"], 1: ["dog"]}
    assert cl.ctfidf_terms(["the a", "of an"], np.array([0, 1])) == {0: [], 1: []}


def test_map_is_pca_for_few_documents():
    v = np.random.default_rng(0).normal(size=(5, 384)).astype(np.float32)
    coords, used = cl.reduce(v, 2, "umap", None, None)
    assert coords.shape == (5, 2) and used == "pca"


# ---- parameters and messages --------------------------------------------------------
def test_parameters_are_checked_with_the_valid_values():
    with pytest.raises(InvalidParameterError, match="community, hdbscan, kmeans"):
        ClusterParams("dbscan").validated()
    with pytest.raises(InvalidParameterError, match="umap, pca"):
        ClusterParams(projection="tsne").validated()
    with pytest.raises(InvalidParameterError, match="k must be between 2"):
        ClusterParams("kmeans", k=1).validated()
    with pytest.raises(InvalidParameterError, match="Choose k between 2 and 9"):
        ClusterParams("kmeans", k=10).resolved(10)
    # Parameters a method ignores do not split its stored results.
    assert ClusterParams("kmeans", 5, min_size=9).validated().key() == \
        ClusterParams("kmeans", 5).validated().key()


def test_empty_and_one_document_corpora_give_clear_messages(app):
    make_corpus(app, "empty", [], np.zeros((0, 384), np.float32))
    with pytest.raises(EmptyCorpusError, match="'empty' has no embedded documents"):
        request_clusters(app, "empty", ClusterParams())
    make_corpus(app, "one", ["just one"], np.ones((1, 384), np.float32) / np.sqrt(384))
    with pytest.raises(InvalidParameterError, match="at least 3 embedded documents; there is 1"):
        compute_and_store(app, "one", ClusterParams(projection="pca"))


def test_impossible_requests_fail_before_a_job_is_queued(app):
    from searchapp.jobs import queue

    make_corpus(app, "one", ["just one"], np.ones((1, 384), np.float32) / np.sqrt(384))
    with pytest.raises(InvalidParameterError, match="at least 3 embedded documents"):
        request_clusters(app, "one", ClusterParams(projection="pca"))
    vectors, _, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    with pytest.raises(InvalidParameterError, match="Choose k between 2 and 120"):
        request_clusters(app, "planted", ClusterParams("kmeans", k=200))
    assert queue.recent(app.db) == []


def test_a_job_for_a_corpus_that_shrank_fails_with_the_reason(app):
    vectors, _, texts = planted()
    make_corpus(app, "planted", texts[:4], vectors[:4])
    _, job_id = request_clusters(app, "planted", ClusterParams("kmeans", k=3, projection="pca"))
    with app.db.session() as s:  # two documents get new texts (no vectors yet) before the job
        corpus = repo.get_corpus(s, "planted")
        repo.add_documents(s, corpus, [NewDocument(f"d{i}", f"changed {i}") for i in (0, 1)])
    job = run_until_done(app, job_id)
    assert job.status == "failed" and "at least 3 embedded documents; there are 2" in job.error


# ---- stored results and the job ----------------------------------------------------------
def test_job_stores_result_reused_until_corpus_changes(app):
    vectors, _, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    params = ClusterParams("kmeans", k=4, projection="pca")
    result, job_id = request_clusters(app, "planted", params)
    assert result is None and job_id is not None
    assert request_clusters(app, "planted", params) == (None, job_id)  # no second job
    corpus_id = open_corpus(app, "planted").corpus_id
    assert app.indexes.cached_generation(corpus_id, app.model_ref(MODEL).id) is not None
    job = run_until_done(app, job_id)
    assert job.status == "succeeded" and job.result["clusters"] == 4
    # the job gave the index back before the map step (its memory is free for UMAP)
    assert app.indexes.cached_generation(corpus_id, app.model_ref(MODEL).id) is None
    stored, again = request_clusters(app, "planted", params)
    assert again is None and np.array_equal(stored.cluster,
                                             cached_clusters(app, "planted", params).cluster)
    # Other parameters are another result.
    assert request_clusters(app, "planted", ClusterParams("kmeans", k=3, projection="pca"))[0] \
        is None
    # A new document invalidates the stored result.
    with app.db.session() as s:
        corpus = repo.get_corpus(s, "planted")
        repo.add_documents(s, corpus, [NewDocument("new", "apple banana today")])
        doc = repo.document_by_external_id(s, corpus.id, "new")
        repo.save_embeddings(s, corpus.id, app.model_ref(MODEL).id, [doc.id], vectors[:1])
    assert cached_clusters(app, "planted", params) is None
    _, new_job = request_clusters(app, "planted", params)
    assert new_job != job_id
    assert run_until_done(app, new_job).status == "succeeded"
    assert len(cached_clusters(app, "planted", params).ids) == len(texts) + 1


# ---- CLI --------------------------------------------------------------------------
def test_cli_json_and_csv(app, capsys, tmp_path):
    from searchapp.cli import main

    vectors, _, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    args = ["clusters", "--corpus", "planted", "--method", "kmeans", "--k", "4",
            "--projection", "pca"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"clusters", "outliers", "assignments", "level", "levels"}
    assert set(out["clusters"][0]) == {"id", "label", "size", "example", "terms", "central"}
    assert out["level"] == 4 and 4 in out["levels"] and len(out["clusters"][0]["central"]) == 3
    assert out["outliers"] == sum(a["cluster"] == -1 for a in out["assignments"]) >= 6
    assert len(out["assignments"]) == len(texts)
    assert set(out["assignments"][0]) == {"id", "cluster", "x", "y"}
    csv = tmp_path / "c.csv"
    assert main([*args, "--out", str(csv)]) == 0  # stored: no job this time
    printed = capsys.readouterr()
    assert "clusters job" not in printed.err and "4 clusters;" in printed.out
    import pandas as pd

    frame = pd.read_csv(csv)
    assert list(frame.columns) == ["id", "cluster", "label", "x", "y"]
    assert len(frame) == len(texts)


def test_cli_errors(app, capsys):
    from searchapp.cli import main

    assert main(["clusters", "--corpus", "nope"]) == 1
    assert "No corpus named 'nope'" in capsys.readouterr().err
    make_corpus(app, "one", ["x"], np.ones((1, 384), np.float32) / np.sqrt(384))
    assert main(["clusters", "--corpus", "one", "--projection", "pca"]) == 1
    assert "at least 3 embedded documents" in capsys.readouterr().err


# ---- the real encoder ----------------------------------------------------------------
SENTENCES = {
    "food": ["I baked fresh bread and a cake this morning.",
             "This pasta recipe needs garlic, tomatoes and basil.",
             "The soup tastes better with more salt and pepper.",
             "She cooked rice and vegetables for dinner."],
    "sport": ["The team won the football match in the last minute.",
              "He scored three goals in the soccer game.",
              "The tennis player served an ace to win the set.",
              "Our basketball team lost the final by two points."],
    "computers": ["My laptop will not boot after the software update.",
                  "Restart the router if the wifi connection drops.",
                  "The program crashes when I open a large file.",
                  "Install the latest driver for the graphics card."],
}


def test_real_encoder_groups_sentences_by_topic(app):
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload

    rows = [(topic, s) for topic, group in SENTENCES.items() for s in group]
    csv = "id,text\n" + "".join(f"{t}{i},\"{s}\"\n" for i, (t, s) in enumerate(rows))
    summary = upload(app, read_table(csv.encode(), "s.csv"), "topics")
    assert run_until_done(app, summary.job_id).status == "succeeded"
    result = compute_and_store(app, "topics", ClusterParams("kmeans", k=3, projection="pca"))
    topic_of = {f"{t}{i}": t for i, (t, _) in enumerate(rows)}
    groups = {}
    for doc, c in zip(result.ids, result.cluster, strict=True):
        groups.setdefault(c, set()).add(topic_of[doc])
    assert sorted(map(sorted, groups.values())) == [["computers"], ["food"], ["sport"]]


@pytest.mark.parametrize("clusters", [3, 200, 10_000, 100_000])
def test_the_map_sample_stays_near_its_budget_whatever_the_number_of_clusters(clusters):
    rng = np.random.default_rng(clusters)
    assign = rng.integers(-1, clusters, size=400_000)
    rows = cl.sample_evenly(assign, 20_000)
    assert len(np.unique(rows)) == len(rows) and abs(len(rows) - 20_000) < 1_000
    if clusters <= 200:  # few clusters: every one keeps its floor of points
        counts = np.bincount(assign[rows] + 1, minlength=clusters + 1)
        assert counts.min() >= cl.SAMPLE_FLOOR


def test_labels_are_whole_words_with_forms_of_one_word_merged():
    assert cl.label_terms(["sausages", "sausage", "oo", "beans", "boxes", "box", "running",
                           "run", "sand"]) == ["sausages", "beans", "boxes", "running"]
