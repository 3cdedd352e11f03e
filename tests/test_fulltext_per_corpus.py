"""A corpus' lexical ranking depends on that corpus only (schema 4), and a version-3 database
is upgraded to it from its stored documents.

Schema 3 kept one FTS5 table for every corpus: BM25's document frequencies and
average length were pooled, so uploading another corpus changed a corpus'
scores (and its order). Schema 4 gives each corpus its own table.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from searchapp.store import fulltext, repo
from searchapp.store.db import Database
from searchapp.store.fulltext import fts_table
from searchapp.store.schema import SCHEMA_VERSION

V3_SQL = Path(__file__).parent / "data" / "schema_v3.sqlite.sql"
NOW = "2026-11-01 10:00:00.000000"
FAQ = ["How do I reset my password?", "The password reset email never arrived.",
       "Billing questions go to the billing team.", "Reset the router to fix the network.",
       "A long answer about accounts, passwords, resets, emails and the team that helps."]
# another corpus full of the query's words: in a pooled index it makes them common
OTHER = [f"Password reset number {i} for the team, reset again." for i in range(40)]


def add(db: Database, corpus: str, texts: list[str]) -> int:
    with db.session() as s:
        c = repo.get_or_create_corpus(s, corpus, "m")
        repo.add_documents(s, c, [repo.NewDocument(f"{corpus}{i}", t) for i, t in
                                  enumerate(texts)])
        return c.id


def ranking(db: Database, corpus_id: int, query: str) -> list[tuple[int, float]]:
    with db.reader() as conn:
        return [(i, round(s, 9)) for i, s in fulltext.lexical_search(conn, corpus_id, query, 10)]


@pytest.mark.parametrize("query", ["password reset", "team", "billing reset email"])
def test_another_corpus_changes_no_score_of_a_corpus(db_url, query):
    db = Database(db_url)
    faq = add(db, "faq", FAQ)
    alone = ranking(db, faq, query)
    add(db, "other", OTHER)
    assert alone and ranking(db, faq, query) == alone
    db.dispose()


def test_another_corpus_changes_no_score_on_postgresql(postgres_url):
    db = Database(postgres_url)
    faq = add(db, "faq", FAQ)
    alone = ranking(db, faq, "password reset")
    add(db, "other", OTHER)
    assert alone and ranking(db, faq, "password reset") == alone
    db.dispose()


def test_each_corpus_has_its_own_table_which_goes_with_it(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'a.db'}")
    faq, other = add(db, "faq", FAQ), add(db, "other", OTHER)
    with db.reader() as conn:
        names = {r[0] for r in conn.execute(text("SELECT name FROM sqlite_master"))}
        assert {fts_table(faq), fts_table(other)} <= names and "documents_fts" not in names
        count = f"SELECT count(*) FROM {fts_table(other)} WHERE {fts_table(other)} MATCH 'reset'"
        assert conn.execute(text(count)).scalar() == 40
    with db.session() as s:
        repo.delete_corpus(s, "other")
    with db.reader() as conn:
        left = {r[0] for r in conn.execute(text(
            "SELECT name FROM sqlite_master WHERE name LIKE :n"), {"n": fts_table(other) + "%"})}
        assert left == set()
        assert [i for i, _ in fulltext.lexical_search(conn, faq, "billing", 5)] != []
    db.dispose()


def test_a_version_3_postgresql_database_is_upgraded_and_ranks_as_before(postgres_url):
    """Nothing was pooled on PostgreSQL: the upgrade changes no full-text table and no score."""
    db = Database(postgres_url)
    faq = add(db, "faq", FAQ)
    before = ranking(db, faq, "password reset")
    with db.engine.begin() as conn:  # back to version 3: the tables of versions 4 and 5 go
        for table in ("api_keys", "judgements", "evaluation_runs"):
            conn.execute(text(f"DROP TABLE {table}"))
        conn.execute(text("ALTER TABLE corpora DROP COLUMN reranker"))  # version 9's
        conn.execute(text("UPDATE schema_info SET version = 3"))
    db.dispose()
    db = Database(postgres_url)
    with db.reader() as conn:
        assert conn.execute(text("SELECT version FROM schema_info")).scalar() == SCHEMA_VERSION
    assert before and ranking(db, faq, "password reset") == before
    db.dispose()


# ---- the upgrade from version 3 --------------------------------------------------------------
def v3_database(path: Path) -> None:
    """A version-3 database (the DDL as the version-3 ORM wrote it, shared FTS5 table and
    triggers included) holding two corpora, their texts indexed by the old triggers."""
    con = sqlite3.connect(path)
    con.executescript(V3_SQL.read_text(encoding="utf-8"))
    con.execute("INSERT INTO schema_info VALUES (1, 3)")
    for cid, (name, texts) in enumerate((("faq", FAQ), ("other", OTHER)), start=1):
        con.execute("INSERT INTO corpora (id, name, model_name, generation, document_count, "
                    "meta_columns, created_at, updated_at) VALUES (?, ?, 'm', 1, ?, '[]', ?, ?)",
                    (cid, name, len(texts), NOW, NOW))
        for i, t in enumerate(texts):
            con.execute("INSERT INTO documents (corpus_id, external_id, text, meta, "
                        "content_hash, created_at) VALUES (?, ?, ?, '{}', 'h', ?)",
                        (cid, f"{name}{i}", t, NOW))
    con.commit()
    con.close()


def pooled_ranking(path: Path, query: str) -> list[tuple[int, float]]:
    """Corpus 1's ranking as version 3 computed it: BM25 over the shared table."""
    con = sqlite3.connect(path)
    rows = con.execute(
        "SELECT f.rowid, -bm25(documents_fts) FROM documents_fts f JOIN documents d "
        "ON d.id = f.rowid WHERE documents_fts MATCH ? AND d.corpus_id = 1 "
        "ORDER BY bm25(documents_fts)", (query,)).fetchall()
    con.close()
    return [(i, round(s, 9)) for i, s in rows]


def test_a_version_3_database_gets_a_table_per_corpus_rebuilt_from_its_documents(tmp_path):
    path = tmp_path / "v3.db"
    v3_database(path)
    pooled = pooled_ranking(path, '"password" OR "reset"')
    db = Database(f"sqlite:///{path}")  # the upgrade runs here
    with db.reader() as conn:
        assert conn.execute(text("SELECT version FROM schema_info")).scalar() == SCHEMA_VERSION
        names = {r[0] for r in conn.execute(text("SELECT name FROM sqlite_master"))}
    assert {"documents_fts_1", "documents_fts_2"} <= names
    assert not names & {"documents_fts", "documents_fts_insert", "documents_fts_delete",
                        "documents_fts_update"}
    upgraded = ranking(db, 1, "password reset")
    fresh = Database(f"sqlite:///{tmp_path / 'fresh.db'}")
    alone = ranking(fresh, add(fresh, "faq", FAQ), "password reset")
    # the same documents (ids 1-5 in both), scored as if no other corpus existed
    assert upgraded == alone and upgraded != pooled
    with db.session() as s:  # the per-corpus triggers work on the upgraded database
        repo.add_documents(s, repo.get_corpus(s, "faq"), [repo.NewDocument("z", "A zebra.")])
        repo.delete_corpus(s, "other")
        for table in ("documents_fts_1",):
            s.execute(text(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"))
    assert [i for i, _ in ranking(db, 1, "zebra")] != []
    db.dispose()
    fresh.dispose()


def test_every_document_write_keeps_the_corpus_table_exact(tmp_path):
    """Inserts, a new text (old row out, new row in), new metadata only, renewed rows: the
    table agrees with the documents (FTS5's integrity-check reads both) and finds what they
    say."""
    db = Database(f"sqlite:///{tmp_path / 'a.db'}")
    faq = add(db, "faq", ["the zebra crossing", "a giraffe neck", "an okapi forest"])
    add(db, "other", ["the zebra crossing too"])
    with db.session() as s:
        c = repo.get_corpus(s, "faq")
        repo.add_documents(s, c, [repo.NewDocument("faq0", "the library opens late"),
                                  repo.NewDocument("faq1", "a giraffe neck", {"k": "v"})])
        okapi = repo.document_by_external_id(s, faq, "faq2").id
        assert repo.renew_documents(s, faq, [okapi]) == 1
        repo.delete_corpus(s, "other")
    fts = fts_table(faq)
    with db.session() as s:
        s.execute(text(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)"))
        ids = {e: repo.document_by_external_id(s, faq, e).id for e in ("faq0", "faq1", "faq2")}
    assert [i for i, _ in ranking(db, faq, "zebra")] == []
    assert [i for i, _ in ranking(db, faq, "library")] == [ids["faq0"]]
    assert [i for i, _ in ranking(db, faq, "giraffe")] == [ids["faq1"]]
    assert [i for i, _ in ranking(db, faq, "okapi")] == [ids["faq2"]] != [okapi]
    db.dispose()
