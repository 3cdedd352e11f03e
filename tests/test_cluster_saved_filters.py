"""A cluster saved as a search filter: its documents tagged, found by the filter, kept
across recomputation, moved when saved again, and never written over a corpus' own column."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.clusters import ClusterParams, cached_clusters, compute_and_store
from searchapp.clusters.edits import apply_edits, load_edits, merge_clusters
from searchapp.clusters.saved_filters import (
    SavedFilter,
    checked_column,
    checked_value,
    remove_saved_filter,
    save_cluster_filter,
    saved_filters,
)
from searchapp.errors import InvalidParameterError
from searchapp.search.filters import parse_condition
from searchapp.search.refine import facet_values
from searchapp.search.service import search
from searchapp.store import repo
from searchapp.store.repo import NewDocument
from tests.test_clusters import MODEL, make_corpus, planted

PARAMS = ClusterParams("kmeans", k=4, projection="pca")


def members(result, cluster_id: int) -> set[str]:
    return {result.ids[i] for i in np.flatnonzero(result.cluster == cluster_id)}


def found(app, condition: str, query: str = "today") -> set[str]:
    """Every document holding ``query``'s word that the filter lets through."""
    return {h.id for h in search(app, "planted", query, k=500, mode="lexical",
                                 where=[condition])}


@pytest.fixture
def clustered(app):
    vectors, _, texts = planted(n_outliers=0)
    texts = [f"{t} today" for t in texts]  # every document holds the word searched for
    make_corpus(app, "planted", texts, vectors)
    with app.db.session() as s:  # the corpus' own metadata: a column a file brought
        corpus = repo.get_corpus(s, "planted")
        repo.replace_meta(s, corpus, [NewDocument("d0", texts[0], {"product": "fruit"})])
    return compute_and_store(app, "planted", PARAMS)


def test_a_saved_cluster_is_a_search_filter_kept_across_recomputation(app, clustered):
    saved = save_cluster_filter(app, clustered, 1, "topic", "Engines and wheels")
    assert saved.documents == len(members(clustered, 1))
    assert found(app, saved.condition) == members(clustered, 1)
    assert ("Engines and wheels", saved.documents) in facet_values(app, "planted", "topic")
    # tagging changes no vector: the stored clusters are still the current ones
    assert cached_clusters(app, "planted", PARAMS) is not None
    # a new document makes the clusters stale; recomputed, the tag is still on its documents
    with app.db.session() as s:
        corpus = repo.get_corpus(s, "planted")
        repo.add_documents(s, corpus, [NewDocument("new", "apple banana today")])
        doc = repo.document_by_external_id(s, corpus.id, "new")
        repo.save_embeddings(s, corpus.id, app.model_ref(MODEL).id, [doc.id],
                             np.eye(1, 384, dtype=np.float32))
    assert cached_clusters(app, "planted", PARAMS) is None
    compute_and_store(app, "planted", PARAMS)
    assert found(app, saved.condition) == members(clustered, 1)
    assert [f.condition for f in saved_filters(app, "planted")] == [saved.condition]


def test_saving_a_name_again_moves_the_filter_and_leaves_other_keys(app, clustered):
    save_cluster_filter(app, clustered, 0, "topic", "Mine")
    moved = save_cluster_filter(app, clustered, 2, "topic", "Mine")
    assert found(app, moved.condition) == members(clustered, 2)
    assert moved.documents == len(members(clustered, 2))
    assert found(app, 'product="fruit"') == {"d0"}  # the file's own key is untouched
    assert len(saved_filters(app, "planted")) == 1


def test_a_merged_cluster_is_saved_whole_under_its_shown_name(app, clustered):
    merge_clusters(app, clustered, [0, 3], "Food and music")
    shown = apply_edits(clustered, load_edits(app, clustered))
    into = next(c["id"] for c in shown.clusters if c["label"] == "Food and music")
    saved = save_cluster_filter(app, shown, into)  # column and name by default
    assert saved.condition == 'cluster="Food and music"'
    assert found(app, saved.condition) == members(clustered, 0) | members(clustered, 3)


def test_a_column_of_the_corpus_own_metadata_is_refused_and_nothing_is_written(app, clustered):
    with pytest.raises(InvalidParameterError, match=r"own metadata.*'cluster'"):
        save_cluster_filter(app, clustered, 1, "product", "Engines")
    assert found(app, 'product="fruit"') == {"d0"}
    assert saved_filters(app, "planted") == []


def test_removing_a_saved_filter_takes_its_tag_off(app, clustered):
    saved = save_cluster_filter(app, clustered, 1)
    assert remove_saved_filter(app, "planted", saved.column, saved.value) == saved.documents
    with pytest.raises(InvalidParameterError, match="no metadata column 'cluster'"):
        found(app, saved.condition)  # a bookmarked link to it says why it finds nothing
    assert saved_filters(app, "planted") == []
    with pytest.raises(InvalidParameterError, match="no saved filter"):
        remove_saved_filter(app, "planted", saved.column, saved.value)
    # no document has the column now: it is no longer offered, and free for a filter again
    with app.db.session() as s:
        assert saved.column not in repo.corpus_state(s, "planted").meta_columns
    assert save_cluster_filter(app, clustered, 2).column == saved.column


def test_an_unknown_cluster_or_a_bad_name_says_what_to_do(app, clustered):
    with pytest.raises(InvalidParameterError, match="no cluster 99"):
        save_cluster_filter(app, clustered, 99)
    with pytest.raises(InvalidParameterError, match="needs a name"):
        save_cluster_filter(app, clustered, 1, "topic", "   ")
    with pytest.raises(InvalidParameterError, match="cannot name a filter's column"):
        save_cluster_filter(app, clustered, 1, "a=b", "x")
    assert saved_filters(app, "planted") == []


@settings(max_examples=200, deadline=None)
@given(column=st.text(min_size=1, max_size=45), value=st.text(min_size=1, max_size=90))
def test_an_accepted_name_reads_back_as_the_same_filter(column, value):
    """Whatever a person types is refused with a reason, or its condition is read by the
    search filters as exactly that column and that text."""
    try:
        c, v = checked_column(column), checked_value(value)
    except InvalidParameterError:
        return
    parsed = parse_condition(SavedFilter("x", c, v, 0).condition)
    assert (parsed.column, parsed.op, parsed.value, parsed.kind) == (c, "=", v, "text")


def test_the_cli_saves_lists_and_removes_a_filter_that_search_uses(app, clustered, capsys):
    from searchapp.cli import main

    args = ["clusters", "--corpus", "planted", "--method", "kmeans", "--k", "4",
            "--projection", "pca"]
    assert main([*args, "--save-filter", "2", "--filter-name", "Third"]) == 0
    out = capsys.readouterr().out
    size = len(members(clustered, 2))
    assert f'Saved: {size} documents now have cluster="Third"' in out
    assert f'Saved filter: cluster="Third" ({size} documents)' in out
    assert main(["search", "--corpus", "planted", "--mode", "lexical", "-k", "500",
                 "--where", 'cluster="Third"', "--json", "today"]) == 0
    import json

    hits = json.loads(capsys.readouterr().out)
    assert {h["id"] for h in hits["results"]} == members(clustered, 2)
    assert main(["clusters", "--corpus", "planted", "--remove-filter", "Third"]) == 0
    assert f"from {size} documents" in capsys.readouterr().out
    assert main(["clusters", "--corpus", "planted", "--remove-filter", "Third"]) == 1
    assert "no saved filter" in capsys.readouterr().err
    assert main([*args, "--save-filter", "2", "--filter-column", "product"]) == 1
    assert "own metadata" in capsys.readouterr().err


def test_the_list_counts_the_filter_as_it_is_now(app, clustered):
    """A deleted member leaves the count; the list is read again once the corpus changed."""
    saved = save_cluster_filter(app, clustered, 1)
    assert [f.documents for f in saved_filters(app, "planted")] == [saved.documents]
    gone = sorted(members(clustered, 1))[0]
    with app.db.session() as s:
        repo.delete_by_external_id(s, repo.get_corpus(s, "planted"), [gone])
    assert [f.documents for f in saved_filters(app, "planted")] == [saved.documents - 1]
