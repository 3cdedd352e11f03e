"""Clusters and the pair judgements made after them: a stored clustering says when the
judgements changed, recomputes with them on request, and every process sees the new one."""

from __future__ import annotations

import numpy as np
import pytest

from searchapp.clusters import (
    ClusterParams,
    compute_and_store,
    judgements_changed,
    request_clusters,
    stored_for_name,
)
from searchapp.context import App
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service as judgements
from tests.test_clusters import make_corpus, planted

KMEANS = ClusterParams("kmeans", k=4, projection="pca")


def cluster_of(result, ext: str) -> int:
    return int(result.cluster[result.ids.index(ext)])


@pytest.fixture
def corpus(app):
    vectors, _, texts = planted(n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    return "planted"


def test_new_judgements_mark_the_clusters_and_a_recompute_applies_them(app, corpus):
    first = compute_and_store(app, corpus, KMEANS)
    a, b = "d0", "d100"  # planted apart: the first and the last group
    assert cluster_of(first, a) != cluster_of(first, b)
    assert not judgements_changed(app, first) and first.constraints["pairs"] == 0
    judgements.add(app, corpus, a=a, b=b, label=1, source="duplicates")
    assert judgements_changed(app, first)
    # seen, not imposed: the page asks before recomputing
    assert request_clusters(app, corpus, KMEANS) == (first, None)
    _, job_id = request_clusters(app, corpus, KMEANS, apply_judgements=True)
    assert job_id is not None
    # the page's process holds the old result in memory; another process recomputes
    other = App()
    assert run_until_done(other, job_id).status == "succeeded"
    again = stored_for_name(app, corpus, KMEANS)
    assert again is not first and not judgements_changed(app, again)
    assert cluster_of(again, a) == cluster_of(again, b)
    assert again.constraints["pairs"] == 1 and again.constraints["unmet"] == 0
    # a relabel is a change too
    judgements.add(app, corpus, a=a, b=b, label=0, source="duplicates")
    assert judgements_changed(app, stored_for_name(app, corpus, KMEANS))


def test_methods_that_take_no_constraints_are_never_marked(app, corpus):
    params = ClusterParams("community", min_size=5, projection="pca")
    result = compute_and_store(app, corpus, params)
    judgements.add(app, corpus, a="d0", b="d100", label=1, source="duplicates")
    assert not judgements_changed(app, result)
    assert request_clusters(app, corpus, params, apply_judgements=True) == (result, None)


def test_a_result_stored_before_marks_counts_as_made_without_judgements(app, corpus):
    result = compute_and_store(app, corpus, KMEANS)
    result.constraints.clear()  # as read from a row written before this
    assert not judgements_changed(app, result)
    judgements.add(app, corpus, a="d0", b="d1", label=1, source="duplicates")
    assert judgements_changed(app, result)
    assert np.array_equal(stored_for_name(app, corpus, KMEANS).cluster, result.cluster)


def test_two_labels_swapped_are_a_change(app, corpus):
    """Same count, same top id, same number of duplicates: only the times tell."""
    judgements.add(app, corpus, a="d0", b="d1", label=1, source="duplicates")
    judgements.add(app, corpus, a="d2", b="d3", label=0, source="duplicates")
    result = compute_and_store(app, corpus, KMEANS)
    assert not judgements_changed(app, result)
    judgements.add(app, corpus, a="d0", b="d1", label=0, source="duplicates")
    judgements.add(app, corpus, a="d2", b="d3", label=1, source="duplicates")
    assert judgements_changed(app, result)


def test_the_cli_says_when_judgements_changed_and_applies_them_when_asked(app, corpus, capsys):
    from searchapp.cli import main

    args = ["clusters", "--corpus", corpus, "--method", "kmeans", "--k", "4",
            "--projection", "pca"]
    assert main(args) == 0
    assert "judgements changed" not in capsys.readouterr().out
    judgements.add(app, corpus, a="d0", b="d100", label=1, source="duplicates")
    assert main(args) == 0
    assert "run again with --apply-judgements to apply them" in capsys.readouterr().out
    assert main([*args, "--apply-judgements"]) == 0
    out = capsys.readouterr().out
    assert "1 judged pair acted as constraints (0 could not be met)" in out
    assert "judgements changed" not in out
