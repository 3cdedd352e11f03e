"""Column statistics and combined text of an upload; facets, word matches, more like this."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.errors import IngestError, InvalidParameterError
from searchapp.intake.builder import ColumnPlan, plan_columns
from searchapp.intake.columns import column_stats
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.search.refine import facet_values, more_like, word_matches
from searchapp.store import repo
from tests.test_clusters import make_corpus

cells = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(cells, cells, cells), min_size=1, max_size=20))
def test_combined_text_is_the_non_empty_parts_in_order(rows):
    plan = ColumnPlan("title + body", joined=("title", "body"))
    for title, body, tag in rows:
        parts = [p.strip() for p in (title, body) if p.strip()]
        assert plan.text_of({"title": title, "body": body, "tag": tag}) == "\n\n".join(parts)


@settings(max_examples=60, deadline=None)
@given(st.lists(cells, min_size=1, max_size=30))
def test_statistics_count_distinct_values_lengths_and_empty_cells(values):
    [stats] = column_stats(pd.DataFrame({"c": values}))
    filled = [v.strip() for v in values if v.strip()]
    assert stats.rows == len(values)
    assert stats.distinct == len(set(filled))
    assert stats.empty_share == pytest.approx(1 - len(filled) / len(values))
    assert stats.mean_length == pytest.approx(np.mean([len(v) for v in filled]) if filled
                                              else 0.0)


def test_a_label_or_an_id_column_is_warned_about_and_text_is_not():
    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(50)],
                          "question": [f"How do I reset password number {i}?" for i in range(50)],
                          "is_duplicate": ["0", "1"] * 25})
    warnings = {s.column: s.warning for s in column_stats(frame)}
    assert warnings["question"] is None
    assert "looks like a label (2 distinct values" in warnings["is_duplicate"]
    assert "looks like an id" in warnings["qid"]


def test_an_unknown_column_is_an_error_naming_the_columns():
    table = read_table(b"title,body\na,b\n", "t.csv")
    with pytest.raises(IngestError, match=r"No text column .titel.\. Columns in the file: title, "
                                          "body"):
        plan_columns(table, ["titel", "body"])
    with pytest.raises(IngestError, match="Choose at least one text column"):
        plan_columns(table, [])


def test_an_upload_joins_title_and_body_and_keeps_the_rest_as_metadata(app):
    csv = "id,title,body,tag\na,Refund late,Where is my money?,billing\nb,Login,,account\n"
    upload(app, read_table(csv.encode(), "t.csv"), "tickets", ["title", "body"], "id")
    with app.db.session() as s:
        corpus = repo.corpus_state(s, "tickets")
        docs = repo.documents_by_id(s, range(1, 10))
    texts = {d.external_id: (d.text, dict(d.meta)) for d in docs.values()}
    assert texts == {"a": ("Refund late\n\nWhere is my money?", {"tag": "billing", "lang": "en"}),
                     "b": ("Login", {"tag": "account", "lang": "und"})}
    assert list(corpus.meta_columns) == ["lang", "tag"]
    one = plan_columns(read_table(b"t,u\nx,y\n", "o.csv"), ["t"], "")
    assert (one.text, one.joined, one.text_of({"t": " x ", "u": "y"})) == ("t", (), "x")


HOSTILE_NAMES = ["città", 'a"b', "c\\d", '"', "日本語", "new\nline", "$.x", "a.b", "[0]"]


def test_facets_answer_for_any_column_name_a_file_can_carry(app):
    import json

    rows = [{"id": f"d{i}", "text": f"text {i}", **{n: f"v{i % 2}" for n in HOSTILE_NAMES}}
            for i in range(5)]
    raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    upload(app, read_table(raw, "h.jsonl"), "hostile")
    for name in HOSTILE_NAMES:
        assert facet_values(app, "hostile", name) == [("v0", 3), ("v1", 2)], name


def test_facets_count_values_and_follow_the_corpus_generation(app):
    csv = "id,text,kind\n" + "".join(f"d{i},text {i},{'a' if i < 3 else 'b'}\n"
                                     for i in range(5))
    upload(app, read_table(csv.encode(), "k.csv"), "k")
    assert facet_values(app, "k", "kind") == [("a", 3), ("b", 2)]
    upload(app, read_table(b"id,text,kind\nd9,more,b\nd8,again,b\n", "k2.csv"), "k")
    assert facet_values(app, "k", "kind") == [("b", 4), ("a", 3)], "a new generation recounts"
    with pytest.raises(InvalidParameterError, match="has no metadata column 'colour'"):
        facet_values(app, "k", "colour")


def test_word_matches_count_documents_with_any_query_word(app):
    rng = np.random.default_rng(0)
    texts = ["the red train", "a red bus", "a green train", "blue sky"]
    vectors = rng.normal(size=(4, 384)).astype(np.float32)
    make_corpus(app, "w", texts, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    assert word_matches(app, "w", "red train") == 3
    assert word_matches(app, "w", "sky") == 1
    assert word_matches(app, "w", "red train", cap=2) == 2


def test_more_like_this_ranks_by_the_documents_own_vector_and_leaves_it_out(app):
    base = np.eye(384, dtype=np.float32)[:3]
    near = base[0] * 0.9 + base[1] * 0.1
    vectors = np.stack([base[0], near / np.linalg.norm(near), base[1], base[2]])
    make_corpus(app, "m", ["zero", "near zero", "one", "two"], vectors)  # ids d0..d3
    hits = more_like(app, "m", "d0", k=2)
    assert [h.text for h in hits] == ["near zero", "one"]
    assert hits[0].score == pytest.approx(0.9939, abs=1e-3)
    assert [h.text for h in more_like(app, "m", "d0", k=3, min_score=0.5)] == ["near zero"]
    with pytest.raises(InvalidParameterError, match="has no document with id 'nope'"):
        more_like(app, "m", "nope")


def test_the_cli_joins_repeated_text_columns_and_warns_about_a_label_column(app, tmp_path,
                                                                            capsys):
    from searchapp.cli.main import main

    path = tmp_path / "q.csv"
    path.write_text("qid,title,body,is_duplicate\nq1,Refund,Where is it?,0\nq2,Login,,1\n"
                    "q3,Fees,Why so high?,0\n", encoding="utf-8")
    assert main(["ingest", str(path), "--corpus", "q", "--id-column", "qid",
                 "--text-column", "title", "--text-column", "body"]) == 0
    with app.db.session() as s:
        docs = {d.external_id: d for d in repo.documents_by_id(s, range(1, 10)).values()}
    assert docs["q1"].text == "Refund\n\nWhere is it?" and docs["q2"].text == "Login"
    assert dict(docs["q1"].meta) == {"is_duplicate": "0", "lang": "en"}
    capsys.readouterr()
    assert main(["ingest", str(path), "--corpus", "labels", "--text-column", "is_duplicate"]) == 0
    assert "warning: 'is_duplicate' looks like a label (2 distinct values" in \
        capsys.readouterr().err
