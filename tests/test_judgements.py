"""Judgements: stored per corpus by external id, replaced, undone, counted, moved as CSV."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchapp.context import App
from searchapp.corpora.documents import check_id
from searchapp.errors import (
    CorpusNotFoundError,
    InvalidParameterError,
    JudgementError,
    SearchAppError,
)
from searchapp.judgements import service
from searchapp.judgements.csv_io import judgements_frame
from searchapp.store import repo

DOCS = {"q1": "How do I reset my password?", "q2": "I forgot my password, what now?",
        "q3": "Where is my invoice?", "q4": "The printer jams.", "q5": "=cmd|' /C calc'!A0",
        "@6": "An id a spreadsheet would read as a formula."}


def make_corpus(app: App, name: str = "faq", docs: dict[str, str] = DOCS) -> None:
    with app.db.session() as s:
        c = repo.get_or_create_corpus(s, name, "all-MiniLM-L6-v2")
        repo.add_documents(s, c, [repo.NewDocument(k, v) for k, v in docs.items()])


def items(app: App, corpus: str = "faq") -> set[tuple]:
    return {(j.kind, j.query, j.a, j.b, j.label) for j in service.list_judgements(app, corpus)}


def test_a_judgement_survives_a_restart_and_judging_it_again_replaces_its_label(app):
    make_corpus(app)
    first = service.add(app, "faq", query="reset  my password ", doc="q1", label=2,
                        source="search")
    assert (first.kind, first.query, first.a, first.b, first.label) == \
        ("query", "reset my password", "q1", None, 2)
    again = service.add(app, "faq", query="reset my password", doc="q1", label=0,
                        source="label")
    assert again.id == first.id and again.created_at == first.created_at
    restarted = App()
    [j] = service.list_judgements(restarted, "faq")
    assert (j.id, j.label, j.source) == (first.id, 0, "label")
    restarted.db.dispose()


def test_a_pair_is_stored_smaller_id_first_so_both_orders_are_one_item(app):
    make_corpus(app)
    one = service.add(app, "faq", a="q2", b="q1", label=1, source="duplicates")
    two = service.add(app, "faq", a="q1", b="q2", label=0, source="review")
    assert (one.a, one.b) == ("q1", "q2") and two.id == one.id
    assert items(app) == {("pair", None, "q1", "q2", 0)}


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"a": "q1", "b": "nope", "label": 1}, JudgementError, "No document 'nope'"),
    ({"query": "x", "doc": "nope", "label": 1}, JudgementError, "No document 'nope'"),
    ({"a": "q1", "b": "q1", "label": 1}, InvalidParameterError, "two different"),
    ({"a": "q1", "b": "q2", "label": 2}, InvalidParameterError, "1 \\(duplicate\\) or 0"),
    ({"query": "x", "doc": "q1", "label": 4}, InvalidParameterError, "grade from 0"),
    ({"query": "x", "doc": "q1", "label": -1}, InvalidParameterError, "grade from 0"),
    ({"query": "x", "doc": "q1", "label": 1.5}, InvalidParameterError, "whole number"),
    ({"query": "  ", "doc": "q1", "label": 1}, InvalidParameterError, "query's text"),
    ({"query": "x", "doc": "q1", "a": "q2", "b": "q3", "label": 1}, InvalidParameterError,
     "not both"),
    ({"label": 1}, InvalidParameterError, "Say what is judged"),
])
def test_a_bad_judgement_is_refused_with_what_to_fix_and_stores_nothing(app, kwargs, error,
                                                                        words):
    make_corpus(app)
    service.add(app, "faq", a="q3", b="q4", label=0, source="cli")
    with pytest.raises(error, match=words):
        service.add(app, "faq", source="cli", **kwargs)
    assert items(app) == {("pair", None, "q3", "q4", 0)}


def test_an_unknown_source_and_an_unknown_corpus_are_refused(app):
    make_corpus(app)
    with pytest.raises(InvalidParameterError, match="search, duplicates, label"):
        service.add(app, "faq", a="q1", b="q2", label=1, source="mouse")
    with pytest.raises(CorpusNotFoundError, match="Existing corpora: faq"):
        service.add(app, "nope", a="q1", b="q2", label=1, source="cli")
    with pytest.raises(InvalidParameterError, match="query, pair"):
        service.list_judgements(app, "faq", kind="pairs")


def test_a_writer_that_loses_the_race_to_insert_an_item_updates_it_instead(app, monkeypatch):
    make_corpus(app)
    service.add(app, "faq", a="q1", b="q2", label=1, source="label")  # the other writer's
    from searchapp.store import judgement_rows

    found = judgement_rows.find
    looks = iter([None])  # this writer looked before the other one's row was there
    monkeypatch.setattr(judgement_rows, "find", lambda s, c, k: next(looks, found(s, c, k)))
    mine = service.add(app, "faq", a="q2", b="q1", label=0, source="review")
    assert (mine.label, mine.source) == (0, "review")
    assert items(app) == {("pair", None, "q1", "q2", 0)}


def test_remove_undoes_one_judgement_and_a_second_undo_says_it_is_gone(app):
    make_corpus(app)
    keep = service.add(app, "faq", a="q1", b="q2", label=1, source="label")
    undo = service.add(app, "faq", a="q3", b="q4", label=0, source="label")
    assert service.remove(app, "faq", undo.id).label == 0
    assert [j.id for j in service.list_judgements(app, "faq")] == [keep.id]
    with pytest.raises(JudgementError, match="already undone"):
        service.remove(app, "faq", undo.id)


def test_a_judgement_of_another_corpus_cannot_be_undone_from_this_one(app):
    make_corpus(app)
    make_corpus(app, "other")
    theirs = service.add(app, "other", a="q1", b="q2", label=1, source="label")
    with pytest.raises(JudgementError, match="another corpus"):
        service.remove(app, "faq", theirs.id)
    assert len(service.list_judgements(app, "other")) == 1


def test_counts_say_how_many_of_each_kind_and_answer(app):
    make_corpus(app)
    for doc, label in (("q1", 3), ("q2", 1), ("q3", 0)):
        service.add(app, "faq", query="password", doc=doc, label=label, source="search")
    service.add(app, "faq", query="invoice", doc="q3", label=1, source="search")
    service.add(app, "faq", a="q1", b="q2", label=1, source="review")
    service.add(app, "faq", a="q1", b="q3", label=0, source="review")
    service.add(app, "faq", a="q1", b="q4", label=0, source="review")
    service.add(app, "faq", query="password", doc="q1", answer="Click Reset.", label=1,
                source="search")
    assert service.counts(app, "faq") == {
        "total": 7, "query": 4, "pair": 3, "relevant": 3, "not_relevant": 1,
        "duplicate": 1, "not_duplicate": 2, "queries": 2, "answer": 1, "right_answer": 1,
        "wrong_answer": 0}
    assert [j.kind for j in service.list_judgements(app, "faq", kind="pair")] == ["pair"] * 3


def test_judgements_outlive_a_changed_text_and_a_model_switch_but_not_their_corpus(app):
    make_corpus(app)
    make_corpus(app, "other")
    service.add(app, "faq", a="q1", b="q2", label=1, source="label")
    service.add(app, "other", a="q1", b="q2", label=0, source="label")
    with app.db.session() as s:  # a new text for q1: a new row, the same external id
        repo.add_documents(s, repo.get_corpus(s, "faq"),
                           [repo.NewDocument("q1", "How can I change my password?")])
        repo.get_corpus(s, "faq").model_name = "another-model"
    assert items(app) == {("pair", None, "q1", "q2", 1)}
    assert service.texts(app, "faq", ["q1", "gone"]) == {"q1": "How can I change my password?"}
    with app.db.session() as s:
        repo.delete_corpus(s, "faq")
    assert items(app, "other") == {("pair", None, "q1", "q2", 0)}
    with app.db.session() as s:
        from sqlalchemy import text
        assert s.execute(text("select count(*) from judgements")).scalar() == 1


# ---- CSV ------------------------------------------------------------------------------------
def test_a_csv_of_pairs_and_queries_is_imported_with_words_or_numbers_as_labels(app):
    make_corpus(app)
    pairs = b"a_id,b_id,label\nq2,q1,duplicate\nq3,q4,no\nq1,q3,0\nq1,q2,1\n"
    summary = service.import_csv(app, "faq", pairs, "pairs.csv")
    assert (summary.added, summary.pair, summary.repeated) == (3, 3, 1)
    queries = b"Query,Doc_ID,Label\nreset password,q1,2\nreset password,q3,not relevant\n"
    summary = service.import_csv(app, "faq", queries, "queries.csv")
    assert (summary.added, summary.query) == (2, 2)
    assert items(app) == {("pair", None, "q1", "q2", 1), ("pair", None, "q3", "q4", 0),
                          ("pair", None, "q1", "q3", 0), ("query", "reset password", "q1", None, 2),
                          ("query", "reset password", "q3", None, 0)}
    assert {j.source for j in service.list_judgements(app, "faq")} == {"import"}
    again = service.import_csv(app, "faq", b"a_id\tb_id\tlabel\nq1\tq2\t0\nq3\tq4\t0\n",
                               "pairs.tsv")
    assert (again.added, again.updated, again.unchanged) == (0, 1, 1)


@pytest.mark.parametrize(("content", "words"), [
    (b"a_id,b_id,label\nq1,q2,1\nq1,zz,1\n", "line 3: no document 'zz'"),
    (b"a_id,b_id,label\nq1,q2,1\nq1,q3,maybe\n", "line 3: label 'maybe' is not a label"),
    (b"a_id,b_id,label\nq1,q2,1\nq1,q3,2\n", "line 3: A pair's label is 1"),
    (b"query,doc_id,label\nx,q1,1\nx,q2,7\n", "line 3: A query judgement's label is a grade"),
    (b"query,doc_id,a_id,b_id,label\nx,q1,q2,q3,1\n", "line 2 fills both"),
    (b"query,doc_id,a_id,b_id,label\n,,,,1\n", "line 2 fills neither"),
    (b"a_id,b_id,label\nq1,q1,1\n", "line 2: A pair needs two different"),
    (b"first,second,label\nq1,q2,1\n", "need query,doc_id,label"),
    (b"a_id,b_id\nq1,q2\n", "need query,doc_id,label"),
    (b"", "is empty"),
])
def test_a_bad_csv_names_its_line_and_imports_nothing(app, content, words):
    make_corpus(app)
    service.add(app, "faq", a="q1", b="q2", label=0, source="cli")
    with pytest.raises(SearchAppError, match=words):
        service.import_csv(app, "faq", content, "bad.csv")
    assert items(app) == {("pair", None, "q1", "q2", 0)}


def test_an_export_reads_back_as_the_same_judgements_even_with_formula_like_text(app, tmp_path):
    make_corpus(app)
    make_corpus(app, "copy")
    service.add(app, "faq", query="=SUM(A1) -price, \"quoted\"", doc="q5", label=3,
                source="search")
    service.add(app, "faq", a="@6", b="q1", label=1, source="review")
    out = tmp_path / "judgements.csv"
    service.export_csv(app, "faq", out)
    text = out.read_text(encoding="utf-8")
    assert "'=SUM" in text and "'@6" in text  # safe to open in a spreadsheet
    service.import_csv(app, "copy", out)
    assert items(app, "copy") == items(app, "faq")


# Any text, with the characters CSV quoting and spreadsheet escaping turn on made common.
_special = st.sampled_from("'=+-@,\"\t\r\n ;x")
_cell = st.text(st.one_of(_special, _special, st.characters(codec="utf-8",
                                                            exclude_characters="\x00")),
                min_size=1, max_size=8)


def _valid(raw: str) -> bool:
    try:
        check_id(raw)
    except InvalidParameterError:
        return False
    return True


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(_cell.filter(_valid), min_size=2, max_size=6,
                    unique_by=lambda raw: raw.strip()),
       judged=st.lists(st.tuples(st.booleans(), _cell, st.integers(0, 5), st.integers(0, 5),
                                 st.integers(0, 3)), min_size=1, max_size=12))
@example(ids=["'=x", "''", "=1", "'tis"],
         judged=[(True, "q", 0, 1, 1), (False, "'-x", 2, 0, 2), (True, "q", 3, 2, 0)])
@example(ids=[" d3 ", "\u00a0'=y", "x ;y"], judged=[(True, "q", 0, 1, 1), (False, "\tq", 2, 0, 3)])
def test_any_judgements_survive_an_export_and_import_round_trip(app, ids, judged):
    """Any ids the id rule accepts (judged as typed: spaces around them and all) and any
    queries: the export of the judgements imports back as the same judgements."""
    suffix = str(abs(hash((tuple(ids), tuple(judged)))))
    source, copy = f"src{suffix}", f"dst{suffix}"
    docs = {check_id(i): f"text of {i!r}" for i in ids}
    make_corpus(app, source, docs)
    make_corpus(app, copy, docs)
    for is_pair, query, x, y, grade in judged:
        a, b = ids[x % len(ids)], ids[y % len(ids)]
        if is_pair and a != b:
            service.add(app, source, a=a, b=b, label=grade % 2, source="cli")
        elif not is_pair and " ".join(query.split()):
            service.add(app, source, query=query, doc=a, label=grade, source="cli")
    if not service.list_judgements(app, source):
        return
    assert {j.a for j in service.list_judgements(app, source)} <= set(docs)
    service.import_csv(app, copy, service.export_csv(app, source).encode("utf-8"), "j.csv")
    assert items(app, copy) == items(app, source)


@pytest.mark.parametrize("bad", ["a\nb", "a\tb", "q\r1", ".", "..", "\x1b[31m"])
def test_a_judgement_naming_an_id_the_rule_refuses_is_refused_naming_the_rule(app, bad):
    make_corpus(app)
    with pytest.raises(InvalidParameterError, match="no control character"):
        service.add(app, "faq", a=bad, b="q1", label=1, source="cli")
    with pytest.raises(InvalidParameterError, match="no control character"):
        service.add(app, "faq", query="reset", doc=bad, label=1, source="cli")
    csv = judgements_frame([]) + f'pair,,,"{bad}",q1,,1,cli,\n'
    with pytest.raises(JudgementError, match=r"line 2: .*no control character"):
        service.import_csv(app, "faq", csv.encode("utf-8"), "j.csv")


def test_ids_with_spaces_around_them_in_a_file_name_the_stored_documents(app):
    make_corpus(app)
    rows = b'a_id,b_id,label\n" q1 "," q2\t",1\n"\tq3","\nq4",0\n'
    summary = service.import_csv(app, "faq", rows, "j.csv")
    assert summary.added == 2
    assert items(app) == {("pair", None, "q1", "q2", 1), ("pair", None, "q3", "q4", 0)}


# ---- evaluation runs -----------------------------------------------------------------------
def test_evaluation_runs_are_kept_per_corpus_and_model_in_order(app):
    make_corpus(app)
    first = service.save_evaluation_run(app, "faq", "m1", {"ap": np.float32(0.5),
                                                           "curve": np.arange(2)}, 10)
    service.save_evaluation_run(app, "faq", "m2", {"ap": 0.75}, 12, note="fine-tuned")
    runs = service.evaluation_runs(app, "faq")
    assert [(r.model_name, r.metrics["ap"], r.judgements) for r in runs] == \
        [("m1", 0.5, 10), ("m2", 0.75, 12)]
    assert runs[0].metrics["curve"] == [0, 1] and runs[1].note == "fine-tuned"
    assert [r.id for r in service.evaluation_runs(app, "faq", model_name="m1")] == [first.id]
    with pytest.raises(InvalidParameterError, match="numbers, text"):
        service.save_evaluation_run(app, "faq", "m1", {"x": object()}, 1)


def _variant(name: str):
    """``name`` in any letter case, perhaps with spaces around it (which the reader removes:
    names equal once stripped are the reader's own error)."""
    cased = st.tuples(*(st.sampled_from((c.lower(), c.upper())) for c in name)).map("".join)
    return st.tuples(st.sampled_from(("", " ")), cased, st.sampled_from(("", " "))).map(
        "".join)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), name=st.sampled_from(["label", "a_id", "b_id"]))
def test_two_columns_equal_after_case_folding_are_refused_naming_both(app, data, name):
    first = data.draw(_variant(name))
    second = data.draw(_variant(name).filter(lambda v: v.strip() != first.strip()))
    header = ["a_id", "b_id", "label"]
    header[header.index(name)] = first
    header.append(second)
    text = ",".join(header) + "\nq1,q2,1,0\n"
    make_corpus(app, f"c{abs(hash(text))}")
    with pytest.raises(JudgementError, match="both read as") as refused:
        service.import_csv(app, f"c{abs(hash(text))}", text.encode("utf-8"), "j.csv")
    named = str(refused.value)  # the reader removes spaces around names (and refuses twins)
    assert repr(first.strip()) in named and repr(second.strip()) in named
