"""A corpus' vocabulary (schema 12) says what its stored texts say, through every write.

Kept in the transaction of the full-text index: documents inserted, replaced (a new text
under the same id), renewed, deleted by id, a corpus deleted; and the upgrade from
version 11 counts the stored documents. The same on PostgreSQL.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from searchapp.store import document_edits, repo, vocabulary
from searchapp.store.db import Database
from searchapp.store.documents import renew_documents
from searchapp.store.migrations import current_version
from searchapp.store.schema import SCHEMA_VERSION


def stored(db: Database, corpus: str) -> dict[str, int]:
    """The vocabulary table of a corpus, as a dict."""
    with db.session() as s:
        c = repo.find_corpus(s, corpus)
        return dict(vocabulary.words(s.connection(), c.id)) if c else {}


def expected(db: Database, corpus: str) -> dict[str, int]:
    """What the corpus' stored texts say, counted afresh."""
    with db.session() as s:
        c = repo.find_corpus(s, corpus)
        texts = s.execute(text("SELECT text FROM documents WHERE corpus_id = :c"),
                          {"c": c.id}).scalars().all()
    return dict(vocabulary.count_words(texts))


def put(db: Database, corpus: str, docs: dict[str, str]) -> None:
    with db.session() as s:
        c = repo.get_or_create_corpus(s, corpus, "m")
        repo.add_documents(s, c, [repo.NewDocument(k, v) for k, v in docs.items()], batch=2)


def delete(db: Database, corpus: str, ids: list[str]) -> None:
    with db.session() as s:
        document_edits.delete_by_external_id(s, repo.find_corpus(s, corpus), ids)


def writes_keep_it(db: Database) -> None:
    put(db, "faq", {"a": "Postgres keeps the café's data.", "b": "postgres again, XR-7 pg_dump",
                    "c": "Nothing in common"})
    put(db, "other", {"a": "Postgres in another corpus"})
    assert stored(db, "faq") == {"postgres": 2, "keeps": 1, "the": 1, "café": 1, "s": 1,
                                 "data": 1, "again": 1, "xr": 1, "pg": 1, "dump": 1,
                                 "nothing": 1, "in": 1, "common": 1}
    put(db, "faq", {"b": "A new text for b"})  # replaced: its old words go
    assert stored(db, "faq")["postgres"] == 1 and "dump" not in stored(db, "faq")
    delete(db, "faq", ["a", "zz"])
    assert "postgres" not in stored(db, "faq") and stored(db, "faq") == expected(db, "faq")
    with db.session() as s:
        c = repo.find_corpus(s, "faq")
        renew_documents(s, c.id, [r[0] for r in s.execute(text(
            "SELECT id FROM documents WHERE corpus_id = :c"), {"c": c.id})])
    assert stored(db, "faq") == expected(db, "faq")
    assert stored(db, "other") == {"postgres": 1, "in": 1, "another": 1, "corpus": 1}
    with db.session() as s:
        other_id = repo.find_corpus(s, "other").id
        repo.delete_corpus(s, "other")
    with db.reader() as conn:
        assert vocabulary.words(conn, other_id) == []


def test_inserts_replacements_renewals_and_deletes_keep_the_counts(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'v.db'}")
    writes_keep_it(db)
    db.dispose()


def test_postgresql_keeps_the_same_counts(postgres_url):
    db = Database(postgres_url)
    writes_keep_it(db)
    db.dispose()


WORDS = st.sampled_from(["postgres", "Postgres", "café", "CAFE", "xr-7", "pg_dump", "dump",
                         "the", "a1", "été", "ÉTÉ", "naïve", "x"])
TEXTS = st.lists(WORDS, max_size=6).map(" ".join)
OPS = st.lists(st.tuples(st.sampled_from(["put", "delete"]),
                         st.sampled_from(["a", "b", "c", "d"]), TEXTS), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_any_sequence_of_writes_leaves_the_counts_of_the_stored_texts(tmp_path_factory, ops):
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('v') / 'v.db'}")
    for op, key, words in ops:
        if op == "put":
            put(db, "c", {key: words})
        else:
            put(db, "c", {})
            delete(db, "c", [key])
        assert stored(db, "c") == expected(db, "c")
        assert all(n > 0 and w.isalpha() and w == w.lower() for w, n in stored(db, "c").items())
    db.dispose()


def as_version_11(url: str) -> None:
    """A database as version 11 left it: documents, and no vocabulary table."""
    db = Database(url)
    put(db, "faq", {"a": "Postgres keeps data", "b": "postgres twice"})
    put(db, "other", {"a": "Another corpus"})
    with db.engine.begin() as conn:
        conn.execute(text("DROP TABLE vocabulary"))
        conn.execute(text("UPDATE schema_info SET version = 11"))
    db.dispose()


def upgraded(url: str) -> dict:
    db = Database(url)
    with db.engine.connect() as conn:
        assert current_version(conn) == SCHEMA_VERSION
    out = {"faq": stored(db, "faq"), "other": stored(db, "other")}
    put(db, "faq", {"c": "Postgres thrice"})  # the table takes writes as a new one does
    out["after"] = stored(db, "faq")["postgres"]
    db.dispose()
    return out


UPGRADED = {"faq": {"postgres": 2, "keeps": 1, "data": 1, "twice": 1},
            "other": {"another": 1, "corpus": 1}, "after": 3}


def test_the_upgrade_counts_the_stored_documents(tmp_path):
    url = f"sqlite:///{tmp_path / 'v11.db'}"
    as_version_11(url)
    assert upgraded(url) == UPGRADED


def test_the_upgrade_on_postgresql_counts_the_same(postgres_url):
    as_version_11(postgres_url)
    assert upgraded(postgres_url) == UPGRADED


def test_words_are_letters_lower_cased_with_their_accents():
    assert vocabulary.words_of("ÉTÉ naïve E\u0301te\u0301 x1 ab_cd --force C++") == {
        "été", "naïve", "ab", "cd", "force", "c"}
    assert vocabulary.count_words(["a a a", "a b"]) == Counter({"a": 2, "b": 1})
