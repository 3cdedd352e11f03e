"""What ``searchapp search`` prints per hit (from its JSON, ``hit_json``, whoever searched):
the score a reader can judge (the cosine, as the Search page shows it, never the rank-fusion
sum), and each list's rank and score in words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from searchapp.cli.search import hit_detail, shown_score
from searchapp.search.service import SearchHit, hit_json


def test_a_hybrid_hit_is_listed_with_its_cosine_not_the_fused_score():
    hit = SearchHit("a", "", 0.0325, semantic_rank=2, semantic_score=0.8123,
                    lexical_rank=1, lexical_score=7.312)
    assert shown_score(hit_json(hit)) == "0.812"
    assert hit_detail(hit_json(hit)) == "meaning #2 0.812 · words #1 BM25 7.31"


def test_a_bm25_of_about_zero_says_why():
    """SQLite's BM25 is about 0 when the query's words are in most documents: "lexical #1
    0.000" read as "no match" to a user."""
    hit = SearchHit("a", "", 0.03, lexical_rank=1, lexical_score=-0.0000009)
    assert shown_score(hit_json(hit)) == "BM25 ≈0 (its words are in most documents)"
    assert "0.000" not in hit_detail(hit_json(hit))


@given(st.floats(-1, 1), st.floats(0.001, 50))
def test_every_listed_score_is_one_a_reader_can_check(cosine, bm25):
    both = SearchHit("a", "", 0.01, semantic_rank=1, semantic_score=cosine, lexical_rank=3,
                     lexical_score=bm25)
    assert shown_score(hit_json(both)) == f"{cosine:.3f}"
    words = SearchHit("a", "", bm25, lexical_rank=1, lexical_score=bm25)
    assert shown_score(hit_json(words)).startswith("BM25 ")
