"""Single documents by id: upsert, get, delete keep the store, the indexes and the
full-text index consistent, as uploads do; a bad batch stores nothing.

Includes a property-based test (hypothesis): any sequence of upserts and deletes
leaves the corpus equal to a plain dict that had the same operations applied.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.corpora import documents as docs
from searchapp.corpora.service import corpus_status, create_corpus
from searchapp.errors import DocumentNotFoundError, InvalidParameterError
from searchapp.jobs.worker import work
from searchapp.search.service import search
from searchapp.store import fulltext, repo

Doc = docs.Doc


@pytest.fixture
def faq(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    create_corpus(app, "faq")
    docs.upsert(app, "faq", [Doc("p1", "How do I reset my password?", {"lang": "en"}),
                             Doc("p2", "Where can I download my invoice?", {"lang": "en"}),
                             Doc("p3", "The zebra crossing near the office is unsafe.")])
    work(app, stop_when_idle=True)
    return app


def generation(app) -> int:
    return corpus_status(app, "faq").generation


def test_the_same_document_again_changes_nothing_not_even_the_generation(faq):
    before = generation(faq)
    done = docs.upsert(faq, "faq", [Doc("p1", "How do I reset my password?", {"lang": "en"})])
    assert (done.unchanged, done.job_id, done.generation) == (1, None, before)


def test_changed_metadata_is_replaced_in_place_without_embedding_again(faq):
    before = generation(faq)
    done = docs.upsert(faq, "faq", [Doc("p1", "How do I reset my password?",
                                        {"lang": "de", "team": "accounts"})])
    assert (done.metadata_updated, done.job_id) == (1, None) and done.generation > before
    assert docs.get(faq, "faq", "p1").meta == {"lang": "de", "team": "accounts"}
    assert docs.get(faq, "faq", "p1").embedded  # the vector is kept: the text did not change
    hits = search(faq, "faq", "password", k=3, mode="lexical", where=["team=accounts"])
    assert [h.id for h in hits] == ["p1"]


def test_a_changed_text_is_embedded_again_and_found_by_its_new_words_only(faq):
    done = docs.upsert(faq, "faq", [Doc("p3", "Penguins at the city zoo eat herring.")])
    assert done.updated == 1 and done.job_id is not None
    assert not docs.get(faq, "faq", "p3").embedded
    work(faq, stop_when_idle=True)
    assert [h.id for h in search(faq, "faq", "penguins herring", k=1)] == ["p3"]
    assert search(faq, "faq", "zebra", k=3, mode="lexical") == []


def test_a_deleted_document_is_gone_from_the_index_the_full_text_and_the_counts(faq):
    assert search(faq, "faq", "download my invoice", k=1)[0].id == "p2"
    done = docs.delete(faq, "faq", ["p2", "nope"])
    assert (done.deleted, done.missing) == (1, ["nope"])
    assert "p2" not in [h.id for h in search(faq, "faq", "download my invoice", k=3)]
    assert search(faq, "faq", "invoice", k=3, mode="lexical") == []
    status = corpus_status(faq, "faq")
    assert (status.documents, status.embedded) == (2, 2)
    with pytest.raises(DocumentNotFoundError, match="no document with id 'p2'"):
        docs.get(faq, "faq", "p2")
    with faq.db.session() as s:  # the tombstone that every other process' index reads
        assert repo.removed_since(s, repo.corpus_state(s, "faq").id, done.generation - 1).size


@pytest.mark.parametrize("batch, message", [
    ([Doc("a", "x"), Doc("a", "y")], "appears twice"),
    ([Doc("a", "x"), Doc("b", "   ")], "empty text"),
    ([Doc("a", "x"), Doc("b", "y", {"k": [1]})], "not a list or an object"),
    ([Doc("a", "x"), Doc("b", "nul\x00")], "NUL"),
    ([Doc("a", "x"), Doc("b", "bad \ud800")], "lone surrogate"),
    ([Doc("a", "x"), Doc("", "y")], "non-empty"),
    ([Doc("a", "x"), Doc("b", "y", {"n": float("nan")})], "finite"),
    ([], "at least one"),
])
def test_a_bad_batch_stores_nothing_and_says_what_to_fix(faq, batch, message):
    before = generation(faq)
    with pytest.raises(InvalidParameterError, match=message):
        docs.upsert(faq, "faq", batch)
    assert generation(faq) == before and corpus_status(faq, "faq").documents == 3


EXAMPLE = itertools.count()
ids = st.sampled_from(["a", "b", "c", "d"])
texts = st.sampled_from(["alpha beta", "gamma delta", "epsilon"])
metas = st.dictionaries(st.sampled_from(["x", "y"]), st.sampled_from(["1", "2"]), max_size=2)
operations = st.lists(st.one_of(
    st.tuples(st.just("upsert"), st.lists(st.tuples(ids, texts, metas), min_size=1, max_size=3,
                                         unique_by=lambda t: t[0])),
    st.tuples(st.just("delete"), st.lists(ids, min_size=1, max_size=3))), max_size=8)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_any_sequence_of_upserts_and_deletes_matches_a_plain_dict(app, ops):
    name = f"prop-{next(EXAMPLE)}"  # a fresh corpus per example
    create_corpus(app, name)
    model: dict[str, tuple[str, dict]] = {}
    for kind, items in ops:
        if kind == "upsert":
            docs.upsert(app, name, [Doc(i, t, m) for i, t, m in items])
            # stored with the language told from the text (none given here)
            model.update({i: (t, docs.with_language(Doc(i, t, m)).meta) for i, t, m in items})
        else:
            docs.delete(app, name, items)
            for i in items:
                model.pop(i, None)
    found, missing = docs.get_many(app, name, ["a", "b", "c", "d"])
    assert {d.id: (d.text, d.meta) for d in found} == model
    assert sorted(missing) == sorted(set("abcd") - set(model))
    assert corpus_status(app, name).documents == len(model)
    with app.db.session() as s:
        corpus_id = repo.corpus_state(s, name).id
    with app.db.reader() as conn:  # the full-text index holds exactly the live texts
        for word in ("alpha", "gamma", "epsilon"):
            hits = {i for i, _ in fulltext.lexical_search(conn, corpus_id, word, 10)}
            assert len(hits) == sum(word in t for t, _ in model.values()), word
