"""Filters work on any column name a file can carry, and ``=`` and ``!=`` split a corpus exactly.

Metadata keys are stored escaped (``città`` as ``citt\\u00e0``, ``"`` as ``\\"``);
a filter must find them whatever they hold. Hypothesis stores documents with
arbitrary Unicode column names and values in SQLite and checks, for a generated
condition, that ``=`` matches exactly the documents whose value is the one
asked, that ``!=`` matches exactly the others (documents without the column
included), and that the condition written out (``str``) reads back as itself.
The same hostile names run on PostgreSQL where a server is at hand.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.errors import InvalidParameterError
from searchapp.search.filters import check_columns, make_condition, parse_condition, where_sql
from searchapp.store import fulltext, repo
from searchapp.store.db import Database

CHARS = st.characters(exclude_categories=("Cs",), exclude_characters="\0")
NAMES = st.text(CHARS, max_size=8)
VALUES = st.text(CHARS, max_size=8)
HOSTILE = ["città", 'a"b', "c\\d", '"', '""', "", " ", " padded ", "😀", "a\nb", "x.y", "$",
           "[0]", "it's", "\u2028", "a=b", "<", "!x", "key\\\"", "ß", "日本語"]


def store(db: Database, docs: list[dict]) -> tuple[int, dict[str, int], list[str]]:
    """A new corpus holding one document per metadata dict: (corpus id, {ext: id}, columns)."""
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, f"c{len(repo.corpus_names(s))}", "m")
        repo.add_documents(s, corpus, [repo.NewDocument(f"d{i}", f"text {i}", meta)
                                       for i, meta in enumerate(docs)])
        state = repo.corpus_state(s, corpus.name)
        ids = {e: i for i, (e, _) in repo.document_texts(s, state.id).items()}
    return state.id, ids, state.meta_columns


def passing(db: Database, corpus_id: int, ids: dict[str, int], condition) -> set[str]:
    by_id = {i: e for e, i in ids.items()}
    with db.reader() as conn:
        flt = where_sql([condition], conn.dialect.name)
        return {by_id[i] for i in fulltext.all_matching_ids(conn, corpus_id, flt)}


def check_split(db: Database, docs: list[dict], column: str, value: str) -> None:
    """``column = "value"`` passes exactly the documents holding that value; ``!=`` the rest;
    both also when written out and parsed back (the CLI's ``--where``)."""
    corpus_id, ids, columns = store(db, docs)
    equal = make_condition(column, "=", f'"{value}"')  # quoted: compared as text
    unequal = make_condition(column, "!=", f'"{value}"')
    if any(column in meta for meta in docs):
        check_columns([equal], columns, "c")  # a column the documents have is known
    want = {f"d{i}" for i, meta in enumerate(docs) if meta.get(column) == value}
    everyone = set(ids)
    for cond, expected in ((equal, want), (unequal, everyone - want)):
        assert parse_condition(str(cond)) == cond, str(cond)
        assert passing(db, corpus_id, ids, cond) == expected, (cond, docs)
    # the filter builder's suggested values name the same column the same way
    counts = Counter(meta[column] for meta in docs if meta.get(column, "") != "")
    with db.session() as s:
        facets = repo.top_values(s, corpus_id, column, 100)
    assert sorted(facets) == sorted(counts.items()), (column, docs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_equal_and_unequal_split_the_corpus_exactly_for_any_column_on_sqlite(data):
    names = data.draw(st.lists(NAMES, min_size=1, max_size=3, unique=True), "names")
    docs = data.draw(st.lists(st.dictionaries(st.sampled_from(names), VALUES, max_size=3),
                              min_size=1, max_size=6), "docs")
    column = data.draw(st.sampled_from(names), "column")
    stored_values = [m[column] for m in docs if column in m]
    value = data.draw(st.sampled_from(stored_values) if stored_values else VALUES, "value")
    db = Database("sqlite://")
    try:
        check_split(db, docs, column, value)
    finally:
        db.dispose()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_numbers_and_dates_split_the_corpus_too(data):
    """Typed comparisons: a document whose value does not read as a number (or has none)
    is outside ``=`` and inside ``!=``, never in both or neither."""
    name = data.draw(NAMES, "name")
    values = st.one_of(st.integers(-5, 5).map(str), st.sampled_from(["1.0", " 2 ", "x", "",
                                                                      "2024-06-01", "1e0"]))
    docs = data.draw(st.lists(st.one_of(st.just({}), values.map(lambda v: {name: v})),
                              min_size=1, max_size=6), "docs")
    raw = data.draw(st.sampled_from(["1", "2", "-3", "2024-06-01", "0.5"]), "raw")
    db = Database("sqlite://")
    try:
        corpus_id, ids, _ = store(db, docs)
        equal = make_condition(name, "=", raw)
        unequal = make_condition(name, "!=", raw)
        assert equal.kind in ("number", "date")
        yes, no = passing(db, corpus_id, ids, equal), passing(db, corpus_id, ids, unequal)
        assert yes | no == set(ids) and not yes & no
    finally:
        db.dispose()


def test_hostile_names_filter_on_sqlite():
    db = Database("sqlite://")
    try:
        docs = [{name: "yes"} for name in HOSTILE] + [{name: "no" for name in HOSTILE}, {}]
        for name in HOSTILE:
            check_split(db, docs, name, "yes")
    finally:
        db.dispose()


def test_hostile_names_filter_on_postgresql(postgres_url):
    db = Database(postgres_url)
    try:
        docs = [{name: "yes"} for name in HOSTILE] + [{name: "no" for name in HOSTILE}, {}]
        for name in HOSTILE:
            check_split(db, docs, name, "yes")
    finally:
        db.dispose()


@pytest.mark.parametrize("written,column", [
    ('"a=b"=1', "a=b"), ('"say ""hi"""=1', 'say "hi"'), ('" padded "=1', " padded "),
    ('""=1', ""), ("città=1", "città"), ('a"b=1', 'a"b'), ("c\\d = 1", "c\\d"),
])
def test_a_written_condition_names_any_column(written, column):
    assert parse_condition(written).column == column


def test_an_unclosed_quoted_name_says_how_to_write_one():
    with pytest.raises(InvalidParameterError, match='goes in double quotes: "a=b"=1'):
        parse_condition('"a=b=1')


@pytest.mark.parametrize("value", ["=0", "=", "==x", "!=a", "<b", ">=2024", "'x", '"'])
@pytest.mark.parametrize("op", ["=", "!="])
def test_a_text_value_that_starts_like_an_operator_is_written_so_it_reads_back(op, value):
    cond = make_condition("", op, f'"{value}"')  # the text itself, as a filter builder gives it
    assert (cond.value, cond.kind) == (value, "text")
    assert parse_condition(str(cond)) == cond, str(cond)
