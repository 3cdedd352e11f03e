"""Lists of terms: each word once whatever its form; a topic split in two named apart.

The term lists are what c-TF-IDF gave on the bundled sample captions (the
first test's), or shaped like them.
"""

from __future__ import annotations

import numpy as np
import pytest

from searchapp.clusters import ClusterParams, compute_and_store
from searchapp.clusters.naming import ctfidf_terms, label_terms
from searchapp.clusters.wordforms import same_word
from tests.test_clusters import make_corpus, planted


# ---- one label: forms of one word merged -------------------------------------------------
@pytest.mark.parametrize(("terms", "label"), [
    # k-means and community clusters of the sample captions, before: "woman, women, sitting,
    # lady", "posing, camera, pose, woman", "dance, dancing, ballerinas, barn"
    (["woman", "women", "sitting", "lady", "smiling", "young", "hair"],
     ["woman", "sitting", "lady", "smiling"]),
    (["posing", "camera", "pose", "woman", "smiling", "picture"],
     ["posing", "camera", "woman", "smiling"]),
    (["dance", "dancing", "ballerinas", "barn", "clapping"],
     ["dance", "ballerinas", "barn", "clapping"]),
    (["children", "playing", "child", "park", "kids"], ["children", "playing", "park", "kids"]),
    (["mice", "mouse", "cheese", "trap", "kitchen"], ["mice", "cheese", "trap", "kitchen"]),
    (["men", "man", "suits", "walking", "street"], ["men", "suits", "walking", "street"]),
    (["firemen", "fireman", "truck", "hose", "fire"], ["firemen", "truck", "hose", "fire"]),
    (["teeth", "dentist", "tooth", "brushing", "decay"], ["teeth", "dentist", "brushing", "decay"]),
    (["stories", "story", "studied", "study", "books"], ["stories", "studied", "books"]),
])
def test_a_label_says_each_word_once_irregular_plurals_too(terms, label):
    assert label_terms(terms) == label


@pytest.mark.parametrize(("a", "b"), [
    ("people", "person"),  # not the plural in a label's sense: both words stay
    ("news", "new"), ("man", "woman"), ("men", "women"), ("seed", "see"), ("feed", "fee"),
    ("hopping", "hope"), ("grassy", "grass"),
])
def test_different_words_stay_apart(a, b):
    assert not same_word(a, b)
    assert label_terms([a, b, "street"]) == [a, b, "street"]


# ---- across clusters: no two labels alike (tests/test_cluster_names.py: the names) ---------
def test_labels_of_a_job_on_one_topic_split_in_two_differ(app):
    vectors, _, texts = planted()  # groups of 40, 30, 25 and 20 documents, then outliers
    # The first two groups talk of the same fruit: only their vectors and a rarer word differ
    # (listed with commas: no two words make a phrase).
    texts = [f"apple, banana, cherry, grape{', market' if i % 4 == 0 else ''}"
             for i in range(40)] \
        + [f"apple, banana, cherry, grape{', orchard' if i % 4 == 0 else ''}"
           for i in range(30)] \
        + texts[70:]
    make_corpus(app, "twins", texts, vectors)
    result = compute_and_store(app, "twins", ClusterParams("kmeans", k=4, projection="pca"))
    plain = [", ".join(label_terms(c["terms"])) for c in result.clusters]
    assert plain[:2] == ["apple, banana, cherry, grape"] * 2  # what the map showed before
    labels = [c["label"] for c in result.clusters]
    assert labels[0] != labels[1] and len(set(labels)) == len(labels), labels


def test_preview_groups_are_labelled_apart_too():
    from searchapp.clusters.preview import sample_frame

    rng = np.random.default_rng(0)
    v = rng.normal(size=(60, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    frame = sample_frame(np.arange(60), v, ["dog running on the beach"] * 60,
                         [f"d{i}" for i in range(60)], groups=3)
    labels = frame.groupby("cluster")["label"].first()
    assert labels[labels.index >= 0].is_unique, labels.tolist()


def test_ctfidf_terms_feed_labels_of_whole_words():
    terms = ctfidf_terms(["the children play", "a child plays", "men don't swim", "a man swims"],
                         np.array([0, 0, 1, 1]))
    assert {c: label_terms(t) for c, t in terms.items()} == {0: ["child", "play"],
                                                            1: ["man", "swim"]}
