"""The default that finds k itself, the tree of levels, names with phrases, edits that survive."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.clusters import ClusterParams, cached_clusters, compute_and_store
from searchapp.clusters.edits import (
    apply_edits,
    load_edits,
    matching_cluster,
    merge_clusters,
    rename_cluster,
)
from searchapp.clusters.hierarchy import build_tree, choose_k, level_counts
from searchapp.clusters.naming import label_terms, terms_of
from searchapp.errors import InvalidParameterError
from searchapp.store import repo
from searchapp.store.repo import NewDocument
from tests.test_clusters import MODEL, agreement, make_corpus, planted


def add_documents(app, name, texts, vectors, prefix="new"):
    """More embedded documents in an existing corpus (a new generation)."""
    with app.db.session() as s:
        corpus = repo.get_corpus(s, name)
        repo.add_documents(s, corpus, [NewDocument(f"{prefix}{i}", t)
                                       for i, t in enumerate(texts)])
        s.flush()
        ids = [repo.document_by_external_id(s, corpus.id, f"{prefix}{i}").id
               for i in range(len(texts))]
        repo.save_embeddings(s, corpus.id, app.model_ref(MODEL).id, ids, vectors)


def test_the_default_finds_the_planted_number_of_clusters_and_places_every_document(app):
    vectors, truth, texts = planted(sizes=(60, 50, 40, 30), n_outliers=4)
    make_corpus(app, "planted", texts, vectors)
    result = compute_and_store(app, "planted", ClusterParams(projection="pca"))
    assert result.params["method"] == "auto" and result.params["k"] == 4
    assert len(result.clusters) == 4 and result.outliers == 0
    assert agreement(truth[truth >= 0], result.cluster[truth >= 0]) > 0.95
    assert max(c["size"] for c in result.clusters) <= 62  # no catch-all: 60 and 2 outliers


def test_choose_k_prefers_real_groups_over_more_of_them():
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(3, 16)) * 4
    v = np.vstack([c + rng.normal(size=(50, 16)) for c in centres])
    k, scores = choose_k(v / np.linalg.norm(v, axis=1, keepdims=True))
    assert k == 3 and scores[3] == max(scores.values()) and len(scores) > 3


@settings(max_examples=25, deadline=None)
@given(n=st.integers(30, 160), k=st.integers(1, 6), seed=st.integers(0, 1000))
def test_every_level_of_the_tree_nests_in_the_one_above(n, k, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 8))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assign = rng.integers(0, k, size=n)
    assign[rng.random(n) < 0.1] = -1  # outliers stay outliers at every level
    assign[np.flatnonzero(assign >= 0)[:k]] = np.arange(min(k, (assign >= 0).sum()))
    present = np.unique(assign[assign >= 0])
    assign = np.where(assign >= 0, np.searchsorted(present, assign), -1)
    tree = build_tree(v, assign, leaves=min(20, n))
    counts = level_counts(tree.base, tree.leaf_count)
    assert tree.base in counts
    levels = {m: tree.assign(m) for m in counts}
    assert np.array_equal(levels[tree.base] >= 0, assign >= 0)
    # The chosen level is the clustering itself, renumbered.
    pairs = {(a, b) for a, b in zip(assign[assign >= 0], levels[tree.base][assign >= 0],
                                    strict=True)}
    assert len(pairs) == tree.base
    for fine, coarse in zip(counts[1:], counts[:-1], strict=True):
        assert len(np.unique(levels[fine][levels[fine] >= 0])) == fine
        inside = {(a, b) for a, b in zip(levels[fine], levels[coarse], strict=True) if a >= 0}
        assert len({a for a, _ in inside}) == len(inside), "a cluster split across parents"


def test_levels_are_stored_and_switching_them_recomputes_nothing(app, monkeypatch):
    vectors, _, texts = planted(sizes=(60, 50, 40, 30), n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    result = compute_and_store(app, "planted", ClusterParams(projection="pca"))
    stored = cached_clusters(app, "planted", ClusterParams(projection="pca"))
    assert stored.level_counts == result.level_counts and len(stored.level_counts) >= 3
    monkeypatch.setattr("searchapp.clusters.service.compute", None)  # nothing may recompute
    for m in stored.level_counts:
        level = stored.at_level(m)
        assert len(level.clusters) == m == len(np.unique(level.cluster))
        assert len({c["label"] for c in level.clusters}) == m  # names unique per level
        assert all(len(c["central"]) == min(3, c["size"]) for c in level.clusters)
        assert np.array_equal(level.x, stored.x)


def test_central_documents_belong_to_their_cluster(app):
    vectors, _, texts = planted(n_outliers=0)
    ids = make_corpus(app, "planted", texts, vectors)
    result = compute_and_store(app, "planted", ClusterParams("kmeans", k=4, projection="pca"))
    by_doc = dict(zip(result.doc_ids.tolist(), result.cluster.tolist(), strict=True))
    external = {f"d{i}": doc for i, doc in enumerate(ids)}
    for c in result.clusters:
        assert len(c["central"]) == 3
        assert {by_doc[external[e]] for e, _ in c["central"]} == {c["id"]}


def test_names_carry_phrases_and_no_numbers_or_stop_words():
    assert terms_of("The 2 credit cards of mine") == ["credit", "cards", "credit cards"]
    assert label_terms(["card", "credit card", "lost", "credit"]) == ["credit card", "lost"]


def test_a_rename_survives_recomputation_while_the_cluster_does(app):
    vectors, _, texts = planted(sizes=(60, 50, 40, 30), n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    params = ClusterParams("kmeans", k=4, projection="pca")
    before = compute_and_store(app, "planted", params)
    fruit = int(before.cluster[0])  # the cluster of the first planted group
    rename_cluster(app, before, fruit, "Fruit notes")
    # New documents near group 0 and 1: a new generation, a new clustering.
    rng = np.random.default_rng(5)
    extra = vectors[:20] + 0.05 * rng.normal(size=(20, vectors.shape[1]))
    add_documents(app, "planted", texts[:20], extra / np.linalg.norm(extra, axis=1,
                                                                    keepdims=True))
    after = compute_and_store(app, "planted", params)
    assert after.generation != before.generation
    shown = apply_edits(after, load_edits(app, after))
    named = [c for c in shown.clusters if c["label"] == "Fruit notes"]
    assert len(named) == 1
    assert named[0]["id"] == int(after.cluster[0])
    # Another level of the same clustering: the names follow the members too.
    others = [c["label"] for c in shown.clusters if c["id"] != named[0]["id"]]
    assert "Fruit notes" not in others


def test_a_rename_is_not_forced_on_a_cluster_that_did_not_survive(app):
    vectors, _, texts = planted(sizes=(60, 50, 40, 30), n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    params = ClusterParams("kmeans", k=4, projection="pca")
    before = compute_and_store(app, "planted", params)
    fruit = int(before.cluster[0])
    rename_cluster(app, before, fruit, "Fruit notes")
    with app.db.session() as s:  # two thirds of that group deleted: what is left is not it
        repo.delete_by_external_id(s, repo.get_corpus(s, "planted"),
                                   [f"d{i}" for i in range(40)])
    after = compute_and_store(app, "planted", ClusterParams(projection="pca"))
    members = np.sort(before.doc_ids[before.cluster == fruit])
    best, jaccard = matching_cluster(after, members)
    assert best >= 0 and 0.2 < jaccard < 0.5  # its last third is a cluster, not the same one
    labels = [c["label"] for c in apply_edits(after, load_edits(app, after)).clusters]
    assert "Fruit notes" not in labels


def test_bad_names_are_refused_and_lose_nothing(app):
    vectors, _, texts = planted(n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    result = compute_and_store(app, "planted", ClusterParams("kmeans", k=4, projection="pca"))
    rename_cluster(app, result, 0, "First")
    for bad, message in (("   ", "cannot be empty"), ("x" * 81, "at most 80"),
                         ("first", "already called")):
        with pytest.raises(InvalidParameterError, match=message):
            rename_cluster(app, result, 1, bad)
    with pytest.raises(InvalidParameterError, match="no cluster 9"):
        rename_cluster(app, result, 9, "Nine")
    assert [e.name for e in load_edits(app, result)] == ["First"]


def test_a_merge_joins_the_clusters_and_is_kept(app):
    vectors, _, texts = planted(sizes=(60, 50, 40, 30), n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    result = compute_and_store(app, "planted", ClusterParams("kmeans", k=4, projection="pca"))
    sizes = {c["id"]: c["size"] for c in result.clusters}
    merge_clusters(app, result, [1, 3], "Music and rivers")
    shown = apply_edits(result, load_edits(app, result))
    assert len(shown.clusters) == 3
    joined = next(c for c in shown.clusters if c["label"] == "Music and rivers")
    assert joined["size"] == sizes[1] + sizes[3] == int((shown.cluster == joined["id"]).sum())
    with pytest.raises(InvalidParameterError, match="at least two"):
        merge_clusters(app, result, [2])


def test_the_cli_shows_a_level_and_names_the_levels_there_are(app, capsys):
    from searchapp.cli import main

    vectors, _, texts = planted(n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    args = ["clusters", "--corpus", "planted", "--projection", "pca"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "4 clusters; 0 outliers" in printed and "Levels (--level N): 2, 4, 8," in printed
    assert main([*args, "--level", "2"]) == 0
    assert "2 clusters; 0 outliers" in capsys.readouterr().out
    assert main([*args, "--level", "3"]) == 1
    assert "no level with 3 clusters; the levels are: 2, 4, 8" in capsys.readouterr().err


def judge(app, name, a, b, label):
    from searchapp.store import judgement_rows

    with app.db.session() as s:
        corpus = repo.get_corpus(s, name)
        judgement_rows.upsert(s, corpus.id, "pair", None, min(a, b), max(a, b), label, "test")


def test_judged_pairs_act_as_must_and_cannot_links(app):
    vectors, truth, texts = planted(sizes=(60, 50, 40, 30), n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    params = ClusterParams(projection="pca")
    free = compute_and_store(app, "planted", params)
    fruit, engine = 0, 60  # d0 and d60 are in different planted groups; d1 too with d0
    assert free.cluster[fruit] != free.cluster[engine] and free.cluster[0] == free.cluster[1]
    judge(app, "planted", "d0", "d60", 1)  # "duplicate": together
    judge(app, "planted", "d1", "d2", 0)  # "not duplicate": apart
    judge(app, "planted", "d9", "d99", 1)  # a document deleted below: the pair is dropped
    with app.db.session() as s:
        repo.delete_by_external_id(s, repo.get_corpus(s, "planted"), ["d99"])
    tied = compute_and_store(app, "planted", params)
    from searchapp.store import judgement_rows

    with app.db.session() as s:
        doc = judgement_rows.ids_by_external_id(s, repo.get_corpus(s, "planted").id,
                                                [f"d{i}" for i in range(len(texts))])
    row = {int(d): i for i, d in enumerate(tied.doc_ids)}

    def cluster(ext: str) -> int:
        return int(tied.cluster[row[doc[ext]]])

    assert cluster("d0") == cluster("d60") and cluster("d1") != cluster("d2")
    assert len(tied.clusters) == len(free.clusters)  # the number of clusters stays the data's
    rest = [i for i in range(3, len(texts)) if i not in (60, 99)]  # the others stay put
    assert agreement(truth[rest], [cluster(f"d{i}") for i in rest]) > 0.95


def test_a_merge_is_a_constraint_when_the_clusters_are_computed_again(app):
    vectors, _, texts = planted(sizes=(60, 50, 40, 30), n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    params = ClusterParams("kmeans", k=4, projection="pca")
    before = compute_and_store(app, "planted", params)
    music, rivers = int(before.cluster[110]), int(before.cluster[150])  # groups 3 and 4
    merged = np.flatnonzero((before.cluster == music) | (before.cluster == rivers))
    merge_clusters(app, before, [music, rivers], "Music and rivers")
    with app.db.session() as s:  # the corpus changes: the clusters are computed again
        repo.delete_by_external_id(s, repo.get_corpus(s, "planted"), ["d0"])
    after = compute_and_store(app, "planted", params)
    assert after.constraints["merges"] == 1
    where = {int(after.cluster[after.ids.index(f"d{i}")]) for i in merged}
    assert len(where) == 1, "the merged documents stay one cluster"
    assert len(after.clusters) == 3  # the cluster the merge emptied is gone, as the person saw
    shown = apply_edits(after, load_edits(app, after))
    assert next(c for c in shown.clusters if c["id"] == where.pop())["label"] == \
        "Music and rivers"


def test_a_big_cluster_is_split_from_a_sample_and_every_document_gets_its_leaf(monkeypatch):
    """Above SPLIT_SAMPLE rows, the leaves are fitted on a sample; all rows are placed."""
    from sklearn.metrics import adjusted_rand_score

    from searchapp.clusters import hierarchy

    vectors, truth, _ = planted(sizes=(60, 50, 40, 30), n_outliers=0)
    one = np.zeros(len(vectors), np.int64)  # one broad cluster holding the four groups
    monkeypatch.setattr(hierarchy, "SPLIT_SAMPLE", 60)
    tree = hierarchy.build_tree(vectors, one, leaves=4)
    assert (tree.leaf >= 0).all() and len(np.unique(tree.leaf)) == 4
    assert adjusted_rand_score(truth, tree.leaf) > 0.95


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60]),
                       st.tuples(st.floats(-0.2, 0.6), st.floats(0.02, 1.0)), min_size=1))
def test_the_chosen_k_ties_the_best_and_is_a_catch_all_only_when_every_tied_k_is(found):
    from searchapp.clusters.hierarchy import CATCH_ALL, TIE, tied_choice

    scores = {k: s for k, (s, _) in found.items()}
    largest = {k: share for k, (_, share) in found.items()}
    k = tied_choice(scores, largest)
    top = max(scores.values())
    tied = [j for j in scores if scores[j] >= top - TIE * abs(top)]
    assert k in tied
    if largest[k] <= CATCH_ALL:  # the fewest tied clusters without a catch-all
        assert all(largest[j] > CATCH_ALL for j in tied if j < k)
    else:  # every tied k had one: the best score
        assert all(largest[j] > CATCH_ALL for j in tied) and scores[k] == top
