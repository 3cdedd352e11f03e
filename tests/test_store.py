import numpy as np
import pytest
from sqlalchemy import text

from searchapp.errors import ConfigError, CorpusNotFoundError
from searchapp.store import repo
from searchapp.store.db import Database
from searchapp.store.migrations import current_version
from searchapp.store.schema import SCHEMA_VERSION


def test_sqlite_gets_wal_foreign_keys_and_a_schema_version(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'x.db'}")
    with db.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert current_version(conn) == SCHEMA_VERSION


def test_newer_schema_is_refused(db_url):
    url = db_url
    db = Database(url)
    with db.engine.begin() as conn:
        conn.execute(text("UPDATE schema_info SET version = 999"))
    with pytest.raises(ConfigError, match="newer than this searchapp"):
        Database(url)


def test_documents_are_added_once_and_changed_text_is_replaced(db_url):
    db = Database(db_url)
    with db.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        first = repo.add_documents(s, c, [repo.NewDocument("a", "x"), repo.NewDocument("b", "y")])
        again = repo.add_documents(s, c, [repo.NewDocument("a", "x"), repo.NewDocument("b", "z")])
        assert (first.added, again.added, again.updated, again.unchanged) == (2, 0, 1, 1)
        assert repo.count_documents(s, c.id) == 2


def test_embeddings_round_trip(db_url):
    db = Database(db_url)
    with db.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        repo.add_documents(s, c, [repo.NewDocument(str(i), f"doc {i}") for i in range(3)])
        model = repo.get_or_create_model(s, "m", 4)
        missing = repo.documents_missing_embedding(s, c.id, model.id, 0, 10)
        vectors = np.arange(12, dtype=np.float32).reshape(3, 4)
        repo.save_embeddings(s, c.id, model.id, [i for i, _ in missing], vectors)
        [(ids, matrix)] = list(repo.embeddings_since(s, c.id, model.id, 0, 4))
        assert np.array_equal(matrix[np.argsort(ids)], vectors)
        assert np.array_equal(repo.vectors_for(s, model.id, np.sort(ids)[::-1], 4),
                              vectors[::-1])
        assert repo.documents_missing_embedding(s, c.id, model.id, 0, 10) == []
        assert repo.count_embedded(s, c.id, model.id) == 3


def test_deleting_a_corpus_removes_its_rows_and_unknown_names_list_existing(db_url):
    db = Database(db_url)
    with db.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        repo.add_documents(s, c, [repo.NewDocument("a", "x")])
        model = repo.get_or_create_model(s, "m", 2)
        doc_id = repo.documents_missing_embedding(s, c.id, model.id, 0, 1)[0][0]
        repo.save_embeddings(s, c.id, model.id, [doc_id], np.ones((1, 2), np.float32))
    with db.session() as s:
        repo.delete_corpus(s, "faq")
    with db.session() as s:
        assert s.execute(text("select count(*) from embeddings")).scalar() == 0
        assert s.execute(text("select count(*) from documents")).scalar() == 0
        repo.get_or_create_corpus(s, "other", "m")
    with db.session() as s, pytest.raises(CorpusNotFoundError, match="Existing corpora: other"):
        repo.get_corpus(s, "faq")
