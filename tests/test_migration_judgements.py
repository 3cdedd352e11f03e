"""Schema version 5: a version-4 database gains the judgements and evaluation_runs tables."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from searchapp.store import judgement_rows, repo
from searchapp.store.db import Database
from searchapp.store.migrations import current_version
from searchapp.store.schema import SCHEMA_VERSION, Base


def _as_version_4(url: str) -> None:
    """A database exactly as version 4 left it: v5 adds two tables, v9 a column of
    corpora and v10 two columns of documents, so they go."""
    db = Database(url)
    with db.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        repo.add_documents(s, c, [repo.NewDocument("a", "one"), repo.NewDocument("b", "two")])
    with db.engine.begin() as conn:
        conn.execute(text("DROP TABLE evaluation_runs"))
        conn.execute(text("DROP TABLE judgements"))
        conn.execute(text("ALTER TABLE corpora DROP COLUMN reranker"))
        conn.execute(text("DROP INDEX ix_documents_source"))
        conn.execute(text("ALTER TABLE documents DROP COLUMN source"))
        conn.execute(text("ALTER TABLE documents DROP COLUMN original"))
        conn.execute(text("UPDATE schema_info SET version = 4"))
    db.dispose()


def _check_upgraded(url: str) -> None:
    db = Database(url)
    with db.engine.connect() as conn:
        assert current_version(conn) == SCHEMA_VERSION
        found = inspect(conn)
        for table in ("judgements", "evaluation_runs"):  # the frozen SQL matches the ORM
            assert {c["name"] for c in found.get_columns(table)} == \
                set(Base.metadata.tables[table].columns.keys())
    with db.session() as s:
        faq = repo.corpus_state(s, "faq")
        assert sorted(e for e, _ in repo.document_texts(s, faq.id).values()) == ["a", "b"]
        judgement_rows.upsert(s, faq.id, "pair", None, "a", "b", 1, "cli")
        judgement_rows.upsert(s, faq.id, "pair", None, "a", "b", 0, "cli")
        judgement_rows.add_evaluation_run(s, faq.id, "m", {"ap": 0.5}, 1, "")
    with db.session() as s:
        [row] = judgement_rows.judgement_rows(s, faq.id)
        assert row.label == 0
        repo.delete_corpus(s, "faq")
    with db.session() as s:
        assert s.execute(text("select count(*) from judgements")).scalar() == 0
        assert s.execute(text("select count(*) from evaluation_runs")).scalar() == 0
    db.dispose()


def test_a_version_4_sqlite_database_is_upgraded_and_keeps_its_documents(tmp_path):
    url = f"sqlite:///{tmp_path / 'v4.db'}"
    _as_version_4(url)
    _check_upgraded(url)


def test_a_version_4_postgres_database_is_upgraded_by_the_frozen_sql(postgres_url):
    _as_version_4(postgres_url)
    _check_upgraded(postgres_url)


def test_two_writers_of_one_item_cannot_both_insert_it(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'u.db'}")
    with db.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        cid = c.id
        judgement_rows.upsert(s, cid, "pair", None, "a", "b", 1, "cli")
    from searchapp.errors import ConflictError
    from searchapp.store.schema import Judgement, utcnow
    with pytest.raises(ConflictError), db.session() as s:  # the unique item key holds
        s.add(Judgement(corpus_id=cid, kind="pair", a_id="a", b_id="b", label=0, source="cli",
                        item_key=judgement_rows.item_key("pair", None, "a", "b"),
                        created_at=utcnow(), updated_at=utcnow()))
    db.dispose()
