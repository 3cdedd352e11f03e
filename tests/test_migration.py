"""Schema upgrades: a version-1 database keeps every row and gains change tracking."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from searchapp.errors import ConfigError
from searchapp.store import fulltext, repo
from searchapp.store.db import Database
from searchapp.store.schema import SCHEMA_VERSION

V1_SQL = Path(__file__).parent / "data" / "schema_v1.sqlite.sql"
NOW = "2026-11-01 10:00:00.000000"


def v1_database(path: Path, orphan: bool = False) -> None:
    """A version-1 database (the DDL as the old ORM wrote it) with two corpora."""
    con = sqlite3.connect(path)
    con.executescript(V1_SQL.read_text(encoding="utf-8"))
    con.execute("INSERT INTO schema_info VALUES (1, 1)")
    con.execute("INSERT INTO models VALUES (1, 'm', 2, NULL, NULL, '{}', ?)", (NOW,))
    for cid, name in ((1, "faq"), (2, "tickets")):
        con.execute("INSERT INTO corpora VALUES (?, ?, 'm', ?, ?)", (cid, name, NOW, NOW))
    docs = [(1, 1, "a"), (2, 1, "b"), (3, 2, "t1"), (4, 1, "c")]
    for did, cid, ext in docs:
        con.execute("INSERT INTO documents VALUES (?, ?, ?, ?, '{}', 'h', ?)",
                    (did, cid, ext, f"text {ext}", NOW))
    vector = np.ones(2, np.float32).tobytes()
    for did in (1, 2, 3):
        con.execute("INSERT INTO embeddings VALUES (?, 1, ?)", (did, vector))
    if orphan:  # a document whose corpus is gone (possible when foreign keys were off)
        con.execute("INSERT INTO documents VALUES (9, 99, 'x', 'x', '{}', 'h', ?)", (NOW,))
    con.execute("INSERT INTO analyses VALUES (1, 1, 1, 'duplicates', 'k', '{}', 'fp', '{}', "
                "1.0, ?)", (NOW,))
    con.commit()
    con.close()


def test_a_version_1_database_is_upgraded_without_losing_rows(tmp_path):
    path = tmp_path / "old.db"
    v1_database(path)
    db = Database(f"sqlite:///{path}")
    with db.session() as s:
        summaries = {c.name: (c.documents, c.embedded) for c in repo.summaries(s)}
        faq = repo.corpus_state(s, "faq")
        texts = repo.document_texts(s, faq.id)
        assert s.execute(text("select version from schema_info")).scalar() == \
            SCHEMA_VERSION
        assert s.execute(text("select count(*) from analyses")).scalar() == 0
        [(ids, _)] = list(repo.embeddings_since(s, faq.id, 1, 0, 2))
    assert summaries == {"faq": (3, 2), "tickets": (1, 1)}
    assert faq.generation == 1 and sorted(texts) == [1, 2, 4]
    assert sorted(ids.tolist()) == [1, 2]
    with db.session() as s:  # the newest id, replaced, is not handed out again
        repo.add_documents(s, repo.get_corpus(s, "faq"), [repo.NewDocument("c", "new text")])
        assert repo.document_by_external_id(s, faq.id, "c").id == 5
    with db.session() as s:  # foreign keys are on again: deleting a corpus cascades
        repo.delete_corpus(s, "tickets")
        assert s.execute(text("select count(*) from embeddings")).scalar() == 2


def test_an_upgrade_that_would_break_references_changes_nothing(tmp_path):
    path = tmp_path / "old.db"
    v1_database(path, orphan=True)
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="left unchanged"):
        Database(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    assert con.execute("select version from schema_info").fetchone() == (1,)
    assert con.execute("select count(*) from embeddings").fetchone() == (3,)
    assert con.execute("select count(*) from documents").fetchone() == (5,)
    assert {r[0] for r in con.execute("select name from sqlite_master where type='table'")} \
        >= {"corpora", "documents", "embeddings", "analyses"}
    assert not {r[0] for r in con.execute(
        "select name from sqlite_master where name like '%_v2'")}
    con.close()
    assert len(path.read_bytes()) >= len(before) // 2  # still a database, not truncated


def test_version_3_indexes_the_stored_texts_and_their_metadata_columns(tmp_path):
    path = tmp_path / "old.db"
    v1_database(path)
    con = sqlite3.connect(path)
    con.execute("""UPDATE documents SET meta = '{"product": "billing", "year": "2024"}'
                   WHERE id = 1""")
    con.execute("UPDATE documents SET text = 'the zebra crossing' WHERE id = 2")
    con.commit()
    con.close()
    db = Database(f"sqlite:///{path}")
    with db.session() as s:
        faq, tickets = repo.corpus_state(s, "faq"), repo.corpus_state(s, "tickets")
    assert faq.meta_columns == ["product", "year"] and tickets.meta_columns == []
    with db.reader() as conn:
        assert sorted(i for i, _ in fulltext.lexical_search(conn, faq.id, "text", 10)) == [1, 4]
        assert [i for i, _ in fulltext.lexical_search(conn, faq.id, "zebra", 10)] == [2]
        assert fulltext.lexical_search(conn, tickets.id, "zebra", 10) == []
    with db.session() as s:  # the triggers work on the upgraded table
        repo.add_documents(s, repo.get_corpus(s, "faq"), [repo.NewDocument("b", "a giraffe")])
    with db.reader() as conn:
        assert fulltext.lexical_search(conn, faq.id, "zebra", 10) == []
        assert [i for i, _ in fulltext.lexical_search(conn, faq.id, "giraffe", 10)] == [5]


def v3_database(path: Path) -> None:
    """A version-3 database: the version-1 file brought to 3 by the frozen SQL of 2 and 3."""
    from searchapp.store.upgrades import UPGRADES

    v1_database(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA foreign_keys=OFF")
    for version in (2, 3):
        for sql in UPGRADES[version]["sqlite"]:
            con.execute(sql)
    con.execute("UPDATE schema_info SET version = 3")
    con.commit()
    con.close()


def test_a_version_3_file_is_backed_up_then_upgraded_and_gains_api_keys(tmp_path):
    from searchapp.backups.service import restore
    from searchapp.store import archive
    from searchapp.store.api_keys import add_key, list_keys

    path = tmp_path / "data" / "searchapp.db"
    path.parent.mkdir()
    v3_database(path)
    before = sqlite3.connect(path).execute("select count(*) from documents").fetchone()
    db = Database(f"sqlite:///{path}", backup_dir=tmp_path / "data" / "backups")
    with db.session() as s:
        assert list_keys(s) == []
        add_key(s, "k", "sa_x", "0" * 64, read_only=False)
        assert s.execute(text("select version from schema_info")).scalar() == SCHEMA_VERSION
    [taken] = list((tmp_path / "data" / "backups").glob(f"before-schema-{SCHEMA_VERSION}-*.tar"))
    manifest = archive.verify(taken, SCHEMA_VERSION)
    assert (manifest["kind"], manifest["schema_version"]) == ("before-upgrade", 3)
    assert {c["name"]: c["documents"] for c in manifest["corpora"]} == {"faq": 3, "tickets": 1}
    restored = restore(taken, tmp_path / "restored").data_dir / "searchapp.db"
    con = sqlite3.connect(restored)
    assert con.execute("select version from schema_info").fetchone() == (3,)
    assert con.execute("select count(*) from documents").fetchone() == before
    con.close()
    db.dispose()


def test_an_up_to_date_database_takes_no_backup(tmp_path):
    Database(f"sqlite:///{tmp_path / 'new.db'}").dispose()
    Database(f"sqlite:///{tmp_path / 'new.db'}").dispose()
    assert not (tmp_path / "backups").exists()
