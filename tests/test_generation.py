"""Change tracking in the store: generations, never-reused ids, counters, tombstones."""

from __future__ import annotations

import numpy as np
from sqlalchemy import text

from searchapp.store import repo
from searchapp.store.db import Database


def corpus_with(db: Database, texts: dict[str, str], name: str = "faq"):
    with db.session() as s:
        c = repo.get_or_create_corpus(s, name, "m")
        repo.add_documents(s, c, [repo.NewDocument(k, v) for k, v in texts.items()])
        return c.id


def state(db: Database, name: str = "faq") -> repo.CorpusState:
    with db.session() as s:
        return repo.corpus_state(s, name)


def embed_all(db: Database, corpus_id: int, model_id: int, dim: int = 2) -> int:
    with db.session() as s:
        rows = repo.documents_missing_embedding(s, corpus_id, model_id, 0, 1000)
        return repo.save_embeddings(s, corpus_id, model_id, [i for i, _ in rows],
                                    np.ones((len(rows), dim), np.float32))


def test_every_change_bumps_the_generation_and_a_no_op_does_not(db_url):
    db = Database(db_url)
    cid = corpus_with(db, {"a": "x", "b": "y"})
    assert state(db).generation == 1 and state(db).documents == 2
    with db.session() as s:
        model = repo.get_or_create_model(s, "m", 2)
    assert embed_all(db, cid, model.id) == 2 == state(db).generation
    corpus_with(db, {"a": "x", "b": "y"})  # the same upload again: nothing changes
    assert state(db).generation == 2
    corpus_with(db, {"b": "y changed"})
    assert state(db).generation == 3 and state(db).documents == 2
    with db.session() as s:
        assert repo.count_embedded(s, cid, model.id) == 1  # b's vector went with its text
        assert repo.summaries(s) == [repo.CorpusSummary("faq", "m", 2, 1)]


def test_ids_are_never_reused_for_documents_or_corpora(db_url):
    db = Database(db_url)
    corpus_with(db, {"a": "x", "b": "newest"})
    with db.session() as s:
        c = repo.get_corpus(s, "faq")
        old = repo.document_by_external_id(s, c.id, "b").id
    corpus_with(db, {"b": "newest, changed"})  # the highest id is deleted, then inserted
    with db.session() as s:
        c = repo.get_corpus(s, "faq")
        new = repo.document_by_external_id(s, c.id, "b").id
        first_corpus = c.id
        repo.delete_corpus(s, "faq")
    assert new > old
    corpus_with(db, {"a": "x"})
    with db.session() as s:
        again = repo.get_corpus(s, "faq")
        assert again.id > first_corpus
        assert repo.document_by_external_id(s, again.id, "a").id > new


def test_changes_since_a_generation_are_exactly_what_changed(db_url):
    db = Database(db_url)
    cid = corpus_with(db, {"a": "x", "b": "y", "c": "z"})
    with db.session() as s:
        model = repo.get_or_create_model(s, "m", 2)
    g1 = embed_all(db, cid, model.id)
    corpus_with(db, {"c": "z2", "d": "w"})  # c replaced, d added
    g2 = embed_all(db, cid, model.id)
    with db.session() as s:
        ids = {e: i for i, (e, _) in repo.document_texts(s, cid).items()}
        removed = repo.removed_since(s, cid, g1)
        added = np.concatenate([i for i, _ in repo.embeddings_since(s, cid, model.id, g1, 2)])
        assert repo.removed_since(s, cid, g2).size == 0
        assert not list(repo.embeddings_since(s, cid, model.id, g2, 2))
    assert len(removed) == 1 and removed[0] not in ids.values()  # the old "c"
    assert sorted(added.tolist()) == sorted([ids["c"], ids["d"]])


def test_vectors_for_documents_deleted_meanwhile_are_not_stored(db_url):
    db = Database(db_url)
    cid = corpus_with(db, {"a": "x", "b": "y"})
    with db.session() as s:
        model = repo.get_or_create_model(s, "m", 2)
        rows = repo.documents_missing_embedding(s, cid, model.id, 0, 10)
    corpus_with(db, {"a": "x, edited while its vector was computed"})
    with db.session() as s:
        repo.save_embeddings(s, cid, model.id, [i for i, _ in rows], np.ones((2, 2), np.float32))
        assert repo.count_embedded(s, cid, model.id) == 1
        n = s.execute(text("select count(*) from embeddings")).scalar()
    assert n == 1


def test_missing_embeddings_are_read_as_keyset_pages():
    db = Database("sqlite://")
    cid = corpus_with(db, {str(i): f"doc {i}" for i in range(10)})
    with db.session() as s:
        model = repo.get_or_create_model(s, "m", 2)
        first = repo.documents_missing_embedding(s, cid, model.id, 0, 4)
        second = repo.documents_missing_embedding(s, cid, model.id, first[-1][0], 4)
        assert [i for i, _ in first] + [i for i, _ in second] == sorted(
            repo.document_texts(s, cid))[:8]
        plan = " ".join(str(r) for r in s.execute(text(
            "EXPLAIN QUERY PLAN SELECT id FROM documents WHERE corpus_id = 1 AND id > 5 "
            "ORDER BY id LIMIT 4")).all())
    assert "ix_documents_corpus_id_id (corpus_id=? AND id>?)" in plan
