"""Cluster names a person would write: a phrase or a title, never "cluster N", no twins.

Property tests feed ``cluster_names`` ranked terms and titles of every shape;
the job tests name real clusters (planted groups, a person's rename) and a
slice of two real corpora: the Git manual's HTML pages and TREC questions.
"""

from __future__ import annotations

import glob
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.clusters import ClusterParams, compute, compute_and_store
from searchapp.clusters.edits import apply_edits, load_edits, rename_cluster
from searchapp.clusters.names import MAX_WORDS, cluster_names, title_of, words_of
from searchapp.clusters.naming import Scored
from searchapp.clusters.wordforms import same_words
from searchapp.vectors.index import VectorIndex
from tests.test_clusters import make_corpus, planted

CLUSTER_N = re.compile(r"\bcluster \d+", re.IGNORECASE)
WORD_LIST = re.compile(r"[\w-]+(?: [\w-]+)?(?:, [\w-]+(?: [\w-]+)?){2,}(?: \(.*\))?")  # a, b c, d
WORDS = ["dog", "dogs", "beach", "sand", "card", "credit", "pin", "server", "backup", "table"]


def assert_good_names(names: list[str]) -> None:
    """Never "cluster N", never a list of terms, no two reading alike, short."""
    for name in names:
        assert name.strip() and not CLUSTER_N.search(name), names
        assert not WORD_LIST.fullmatch(name), f"a list of terms: {name!r}"
        assert len(words_of(name.split(" (")[0])) <= MAX_WORDS, name
    for i, a in enumerate(names):
        for b in names[:i]:
            assert not same_words(words_of(a), words_of(b)), (a, b)


# ---- properties ------------------------------------------------------------------------------
term = st.one_of(st.sampled_from(WORDS),
                 st.tuples(st.sampled_from(WORDS), st.sampled_from(WORDS))
                 .filter(lambda p: p[0] != p[1]).map(" ".join))
scored = st.builds(lambda t, score, members, share, elsewhere: Scored(
    t, score, members, share, min(elsewhere, share)),
    term, st.floats(0, 5), st.integers(0, 50), st.floats(0, 1), st.floats(0, 1))
title = st.one_of(st.just(""), st.text(min_size=0, max_size=80),
                  st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(0, 30), st.lists(scored, max_size=12), max_size=12),
       st.dictionaries(st.integers(0, 30), title, max_size=12))
def test_names_are_never_cluster_n_never_alike_and_short(terms, titles):
    names = cluster_names(terms, titles)
    assert set(names) == set(terms) | set(titles)
    assert_good_names([names[c] for c in sorted(names)])
    for c, name in names.items():
        phrase = [t.term for t in terms.get(c, []) if t.term == name]
        titled = name.casefold() == str(titles.get(c, "")).strip().casefold()
        if phrase and not titled:  # a phrase of the texts (not its title): two or three words
            assert 2 <= len(name.split()) <= 3, name


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.one_of(st.none(), st.text(max_size=100)))
def test_a_title_is_a_line_of_words_cut_short(text, meta_title):
    found = title_of(meta_title, text)
    assert "\n" not in found and len(words_of(found)) <= MAX_WORDS
    assert bool(found) == any(re.search(r"\w", line) for line in [meta_title or "", text])


def test_a_topic_split_in_two_gets_its_next_phrase_not_an_id():
    split = {0: [Scored("credit card", 1.0, 30, 0.6, 0.1), Scored("card pin", 0.8, 20, 0.4, 0.0)],
             1: [Scored("credit cards", 1.0, 30, 0.6, 0.1), Scored("lost card", 0.7, 15, 0.3, 0.0)],
             2: [Scored("credit card", 1.0, 30, 0.6, 0.1)]}  # nothing else of its own
    assert cluster_names(split, {2: "Card fees explained"}) == {
        0: "credit card", 1: "lost card", 2: "Card fees explained"}
    assert cluster_names(split, {}) == {0: "credit card", 1: "lost card",
                                        2: "credit card (2)"}


def test_boilerplate_on_every_page_names_no_cluster():
    # on every page of this cluster and on over half the others: a wide gap, and not its own
    page = [Scored("manual page", 2.0, 40, 1.0, 0.55), Scored("pack file", 0.5, 16, 0.4, 0.0)]
    assert cluster_names({0: page}, {0: "git-repack(1)"}) == {0: "pack file"}


def test_a_title_that_says_more_than_the_phrase_names_the_cluster():
    functions = [Scored("string", 2.0, 30, 0.9, 0.2), Scored("operators", 1.0, 25, 0.8, 0.2),
                 Scored("string functions", 1.0, 20, 0.6, 0.1)]
    assert cluster_names({0: functions}, {0: title_of("9.4. String Functions and Operators",
                                                      "")}) == {0: "String Functions and Operators"}


# ---- the clusters job ------------------------------------------------------------------------
def test_the_job_names_each_cluster_by_its_phrase(app):
    vectors, _, texts = planted(sizes=(40, 30, 25, 20), n_outliers=0)
    phrases = ["credit card", "engine oil", "guitar string", "river bank"]
    starts = np.cumsum([0, 40, 30, 25])
    texts = [f"{texts[i]} about the {phrases[np.searchsorted(starts, i, 'right') - 1]} today"
             for i in range(len(texts))]
    make_corpus(app, "phrases", texts, vectors)
    result = compute_and_store(app, "phrases", ClusterParams("kmeans", k=4, projection="pca"))
    assert sorted(c["label"] for c in result.clusters) == sorted(phrases)
    for level in result.levels:
        assert_good_names([c["label"] for c in level["clusters"]])


def test_clusters_without_words_are_named_by_their_central_document(app):
    vectors, _, _ = planted(sizes=(30, 30), n_outliers=0)
    texts = [f"the {i} of" for i in range(30)] + ["" for _ in range(30)]
    make_corpus(app, "bare", texts, vectors)
    result = compute_and_store(app, "bare", ClusterParams("kmeans", k=2, projection="pca"))
    labels = sorted(c["label"] for c in result.clusters)
    assert_good_names(labels)
    assert labels[0].startswith("the ") and labels[1] == "untitled documents", labels


def test_a_persons_name_taken_by_another_cluster_tells_that_one_apart_by_a_term(app):
    vectors, _, texts = planted(sizes=(40, 30), n_outliers=0)
    make_corpus(app, "renamed", texts, vectors)
    result = compute_and_store(app, "renamed", ClusterParams("kmeans", k=2, projection="pca"))
    other = result.clusters[1]["label"]
    rename_cluster(app, result, 0, "Mine")  # then computed again: the other took the name
    edits = [replace(e, name=other) for e in load_edits(app, result)]
    shown = [c["label"] for c in apply_edits(result, edits).clusters]
    assert shown[0] == other and shown[1].startswith(f"{other} (")
    assert_good_names(shown)


# ---- real corpora, a small slice of each -----------------------------------------------------
GIT_PAGES = sorted(glob.glob("/usr/share/doc/git-doc/git-*.html"))
TREC = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-qc" / "trec-train.tsv.gz"


def _clustered(texts, titles, vectors, k):
    index = VectorIndex(vectors.shape[1], capacity=len(vectors))
    index.add(np.arange(len(vectors)), vectors)
    return compute(index, ClusterParams("kmeans", k=k, projection="pca"),
                   lambda ids: [texts[int(i)] for i in ids],
                   titles_of=lambda ids: [title_of(titles[int(i)], texts[int(i)]) for i in ids])


@pytest.mark.skipif(len(GIT_PAGES) < 60, reason="the Git manual (git-doc) is not installed")
def test_git_manual_pages_get_phrases_their_members_hold(bundled_encoder):
    from searchapp.intake.formats.html import read_html

    docs = [d for path in GIT_PAGES[::3][:60] for d in read_html(path, Path(path).name)]
    texts, titles = [d.text for d in docs], [d.meta.get("title", "") for d in docs]
    vectors = bundled_encoder.encode([t[:1500] for t in texts])
    out = _clustered(texts, titles, vectors, k=6)
    names = [c["label"] for c in out["clusters"]]
    assert_good_names(names)
    for c in out["clusters"]:
        members = [texts[int(i)].lower() for i in out["ids"][out["assign"] == c["id"]]]
        if c["label"] not in titles:  # a phrase: held by two members at least
            assert sum(c["label"] in m for m in members) >= 2, c["label"]
    assert not any(n in ("manual page", "git suite") for n in names), names  # boilerplate


@pytest.mark.skipif(not TREC.exists(), reason="the shared TREC questions are not here")
def test_trec_questions_get_names_not_word_lists(bundled_encoder):
    import pandas as pd

    texts = pd.read_csv(TREC, sep="\t", keep_default_na=False).text.tolist()[:400]
    out = _clustered(texts, [""] * len(texts), bundled_encoder.encode(texts), k=6)
    for level in [out["clusters"], *(lv["clusters"] for lv in out["levels"])]:
        assert_good_names([c["label"] for c in level])
