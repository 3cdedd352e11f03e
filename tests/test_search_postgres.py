"""The full-text index, filters, passages and the version-3 upgrade on PostgreSQL.

Uses the ``postgres_url`` fixture (a fresh database on a throwaway server,
issue 13's ``tests/postgres.py``); skips with the reason where it is absent.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from searchapp.search.filters import parse_condition, where_sql
from searchapp.store import fulltext, repo
from searchapp.store.db import Database
from searchapp.store.schema import SCHEMA_VERSION

DOCS = [
    ("a", "Error ERR-40417 appears when the XR-7 firmware updates.",
     {"year": "2025", "product": "devices", "opened": "2025-01-03"}),
    ("b", "The XR-7 firmware update fails with error ERR-40471.",
     {"year": "2024", "product": "devices", "opened": "2024-11-20"}),
    ("c", "I was charged twice for my subscription.",
     {"year": "n/a", "product": "billing", "opened": "soon"}),
]


@pytest.fixture
def pg_url(request) -> str:
    try:
        return request.getfixturevalue("postgres_url")
    except pytest.FixtureLookupError:
        pytest.skip("no postgres_url fixture here (it comes with the PostgreSQL tests)")


def stored(url: str) -> tuple[Database, int, dict[str, int]]:
    db = Database(url)
    with db.session() as s:
        c = repo.get_or_create_corpus(s, "t", "m")
        repo.add_documents(s, c, [repo.NewDocument(e, t, m) for e, t, m in DOCS])
        ids = {e: repo.document_by_external_id(s, c.id, e).id for e, _, _ in DOCS}
        return db, c.id, ids


def test_lexical_search_filters_and_replacements(pg_url):
    db, corpus, ids = stored(pg_url)
    with db.reader() as conn:
        assert [i for i, _ in fulltext.lexical_search(conn, corpus, "ERR-40417", 10)] == \
            [ids["a"]]
        for where, want in (("year>=2025", {"a"}), ("year<2025", {"b"}),
                            ("product=billing", {"c"}), ("product!=billing", {"a", "b"}),
                            ("opened<2025-01-01", {"b"}), ("opened>=2025-01-01", {"a"})):
            flt = where_sql([parse_condition(where)], "postgresql")
            assert set(fulltext.all_matching_ids(conn, corpus, flt)) == {ids[e] for e in want}
    with db.session() as s:
        repo.add_documents(s, repo.get_corpus(s, "t"), [repo.NewDocument("c", "A giraffe.")])
    with db.reader() as conn:
        assert fulltext.lexical_search(conn, corpus, "charged", 10) == []
        assert len(fulltext.lexical_search(conn, corpus, "giraffe", 10)) == 1
    db.dispose()


def test_passages_are_stored_and_read_back(pg_url):
    db, corpus, ids = stored(pg_url)
    with db.session() as s:
        m = repo.get_or_create_model(s, "m", 2)
        spans = np.array([[0, 5], [3, 9], [8, 12]], np.int32)
        repo.save_embeddings(s, corpus, m.id, [ids["a"]], np.ones((1, 2), np.float32),
                             {0: (np.ones((3, 2), np.float32), spans)})
        [(labels, vectors)] = list(repo.passages_since(s, corpus, m.id, 0, 2, 4096))
        assert labels.tolist() == [ids["a"] * 4096 + p for p in range(3)]
        assert vectors.shape == (3, 2)
        assert repo.passage_spans(s, [ids["a"]])[ids["a"]].tolist() == spans.tolist()
    db.dispose()


def test_version_2_database_is_upgraded_to_the_current_version(pg_url):
    db, corpus, ids = stored(pg_url)
    with db.engine.begin() as conn:  # take it back to what version 2 had
        for sql in ("DROP TABLE api_keys", "DROP TABLE judgements", "DROP TABLE evaluation_runs",
                    "ALTER TABLE documents DROP COLUMN text_search",
                    "ALTER TABLE embeddings DROP COLUMN passages",
                    "ALTER TABLE embeddings DROP COLUMN passage_spans",
                    "ALTER TABLE corpora DROP COLUMN meta_columns",
                    "ALTER TABLE corpora DROP COLUMN reranker",
                    "UPDATE schema_info SET version = 2"):
            conn.execute(text(sql))
    db.dispose()
    db = Database(pg_url)
    with db.session() as s:
        assert s.execute(text("SELECT version FROM schema_info")).scalar() == SCHEMA_VERSION
        assert repo.corpus_state(s, "t").meta_columns == ["opened", "product", "year"]
    with db.reader() as conn:
        assert [i for i, _ in fulltext.lexical_search(conn, corpus, "subscription", 10)] == \
            [ids["c"]]
    db.dispose()


def test_the_query_language_conditions_on_postgresql(pg_url):
    """Phrases, exclusions, OR groups and the LIKE-pattern filters run on PostgreSQL too."""
    from searchapp.search.query_filters import understand
    from searchapp.search.service import combined_filter

    db, corpus, ids = stored(pg_url)
    columns = ["year", "product", "opened"]
    with db.reader() as conn:
        for typed, want in (('"firmware update" -ERR-40471', {"a"}),
                            ('"charged twice" OR "fails with"', {"b", "c"}),
                            ('-"the and"', {"a", "b", "c"}),  # common words only: no condition
                            ("product:devices -year:2024", {"a"}),
                            ("year>=2025 firmware", {"a"})):
            plan = understand(typed, columns, corpus, "postgresql")
            flt = combined_filter(plan.conditions, plan.text_conditions, "postgresql")
            got = set(fulltext.all_matching_ids(conn, corpus, flt))
            assert got == {ids[e] for e in want}, typed
    db.dispose()
