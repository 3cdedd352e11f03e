"""The SQL of each schema upgrade, frozen as it was written, per database dialect.

``UPGRADES[v][dialect]`` brings a database of version v-1 to version v. The
statements are plain SQL, not derived from ``schema.py``, so that a later change
to the ORM can never change what an old upgrade does.

Version 2 (change tracking): corpora get ``generation`` and ``document_count``;
ids of corpora and documents are never reused (SQLite needs the tables rebuilt
for AUTOINCREMENT); embeddings carry their corpus and the generation that wrote
them; new tables ``embedded_counts`` and ``document_tombstones``. Stored
analyses were keyed on a fingerprint that cannot be translated: they are
dropped and recomputed on demand (they are derived data).

Version 3 (search): a full-text index over documents.text kept by the database
(SQLite: FTS5 external-content table ``documents_fts`` with triggers, filled from
the stored documents; PostgreSQL: a generated ``tsvector`` column with a GIN
index); ``embeddings.passages`` and ``embeddings.passage_spans`` for documents
longer than the model's window (NULL for the existing rows: they were embedded
truncated, and stay searchable as before until re-embedded); ``corpora.meta_columns``,
the metadata keys a corpus' documents use, filled from the documents.

Version 4 (the JSON API): ``api_keys``, each key's name, shown prefix, SHA-256
hash (never the key), read-only flag and times.

Version 5 (judgements): new tables ``judgements`` (a person's labels on query →
document and document pairs, by external id, one per item via ``item_key``) and
``evaluation_runs`` (metrics measured on them, over time). Nothing existing changes.

Version 6 (per-corpus BM25): on SQLite the one FTS5 table over every corpus
pooled BM25's statistics, so adding a corpus changed the scores of the others;
each corpus gets its own FTS5 table ``documents_fts_{id}``, filled from its
stored documents, and the shared table and its triggers go (the store writes
the corpus tables itself: per-corpus triggers would all run on every insert).
A statement wrapped in ``PerCorpus`` runs once per existing corpus with
``{corpus}`` its id. PostgreSQL ranks with ``ts_rank_cd``, which reads one
document and the query only: nothing changes there.

Version 7 (documents from files): a new table ``document_layouts``, the page and
section of each part of a document read from a file. Nothing existing changes.

Version 8 (watched folders): a new table ``watched_folders``, the folders a corpus
follows, their last status and the lease of the worker watching each. Nothing
existing changes.

Version 9 (rerankers): ``corpora.reranker``, the name of the reranker attached to the
corpus (NULL for every existing corpus: none has one until one is trained and wins).

Version 10 (sources own their documents): ``documents.source``, the app's record of
what brought each document, and ``documents.original``, the SHA-256 of the file kept
for it (``store/sources.py``). Existing documents read from files (those with a layout)
become ``files`` with the hash their metadata held, taken over by the first folder or
upload that reads them again; every other existing row becomes ``rows``.

Version 11 (answers): a new table ``passage_sentences``, the sentences of each passage
(character spans and float16 vectors per model), written by the embed job. Existing
documents have none until they are embedded again; an answer draws on those that have.

Version 12 (did you mean): a new table ``vocabulary``, each word of a corpus' documents
and how many hold it (``store/vocabulary.py``), filled from the stored documents by a
``Derived`` step: words are cut in Python (SQLite has no way to), by today's code.

Version 12 also (saved searches): new tables ``saved_searches`` (a search kept, its
watermark, feed token and notifications) and ``saved_search_hits`` (the documents its checks
found new). Nothing existing changes; there is nothing to fill (a saved search starts empty).

Version 12 also (search history): a new table ``search_history``, each user's recent
queries per corpus (the suggestions' first source). It starts empty.

Version 13 (words as each language writes them): on SQLite each corpus' FTS5 table is made
again, contentless, and filled by a ``Derived`` step with the search words of today's
``base/words.search_text`` (unspaced scripts as character bigrams, width variants folded):
Japanese, Chinese or Thai documents stored before become findable by a word inside a
sentence. The vocabulary is counted again (words of unspaced scripts are no longer in it:
"did you mean" does not correct them). PostgreSQL keeps its generated ``tsvector``: only
the vocabulary is counted again there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from sqlalchemy import Connection

from searchapp.store import fulltext
from searchapp.store.vocabulary import refill


class PerCorpus(NamedTuple):
    """SQL run once for each corpus stored at upgrade time, ``{corpus}`` being its id."""

    sql: str


class Derived(NamedTuple):
    """Derived data made again by Python in the upgrade's transaction (``fill(conn)``), where
    plain SQL cannot make it; runs after the statements before it."""

    fill: Callable[[Connection], None]

_V2_COUNTS_AND_TOMBSTONES = [
    """CREATE TABLE embedded_counts (
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        model_id INTEGER NOT NULL REFERENCES models (id) ON DELETE CASCADE,
        count INTEGER NOT NULL,
        PRIMARY KEY (corpus_id, model_id))""",
    """INSERT INTO embedded_counts (corpus_id, model_id, count)
        SELECT corpus_id, model_id, count(*) FROM embeddings GROUP BY corpus_id, model_id""",
    "CREATE INDEX ix_embeddings_changes ON embeddings (corpus_id, model_id, generation)",
    "CREATE INDEX ix_documents_corpus_id_id ON documents (corpus_id, id)",
    "CREATE INDEX ix_tombstones_changes ON document_tombstones (corpus_id, generation)",
    "CREATE INDEX ix_analyses_corpus_id ON analyses (corpus_id)",
]

_V2_SQLITE = [
    """CREATE TABLE corpora_v2 (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        name VARCHAR(200) NOT NULL UNIQUE,
        model_name VARCHAR(200) NOT NULL,
        generation INTEGER NOT NULL DEFAULT 0,
        document_count INTEGER NOT NULL DEFAULT 0,
        created_at DATETIME NOT NULL,
        updated_at DATETIME NOT NULL)""",
    """INSERT INTO corpora_v2 (id, name, model_name, generation, document_count, created_at,
                               updated_at)
        SELECT c.id, c.name, c.model_name, 1,
               (SELECT count(*) FROM documents d WHERE d.corpus_id = c.id),
               c.created_at, c.updated_at
        FROM corpora c""",
    """CREATE TABLE documents_v2 (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        external_id VARCHAR(500) NOT NULL,
        text TEXT NOT NULL,
        meta JSON NOT NULL,
        content_hash VARCHAR(64) NOT NULL,
        created_at DATETIME NOT NULL,
        CONSTRAINT uq_document_external UNIQUE (corpus_id, external_id))""",
    """INSERT INTO documents_v2 (id, corpus_id, external_id, text, meta, content_hash,
                                 created_at)
        SELECT id, corpus_id, external_id, text, meta, content_hash, created_at
        FROM documents ORDER BY id""",
    """CREATE TABLE embeddings_v2 (
        document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        model_id INTEGER NOT NULL REFERENCES models (id) ON DELETE CASCADE,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        generation INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (document_id, model_id))""",
    """INSERT INTO embeddings_v2 (document_id, model_id, corpus_id, generation, vector)
        SELECT e.document_id, e.model_id, d.corpus_id, 1, e.vector
        FROM embeddings e JOIN documents d ON d.id = e.document_id""",
    """CREATE TABLE analyses_v2 (
        id INTEGER NOT NULL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        model_id INTEGER REFERENCES models (id) ON DELETE CASCADE,
        kind VARCHAR(50) NOT NULL,
        params_key VARCHAR(500) NOT NULL,
        params JSON NOT NULL,
        generation INTEGER NOT NULL,
        result JSON NOT NULL,
        arrays BLOB,
        seconds FLOAT,
        created_at DATETIME NOT NULL,
        CONSTRAINT uq_analysis UNIQUE (corpus_id, model_id, kind, params_key))""",
    """CREATE TABLE document_tombstones (
        id INTEGER NOT NULL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL,
        generation INTEGER NOT NULL)""",
    "DROP TABLE analyses",
    "DROP TABLE embeddings",
    "DROP TABLE documents",
    "DROP TABLE corpora",
    "ALTER TABLE corpora_v2 RENAME TO corpora",
    "ALTER TABLE documents_v2 RENAME TO documents",
    "ALTER TABLE embeddings_v2 RENAME TO embeddings",
    "ALTER TABLE analyses_v2 RENAME TO analyses",
    *_V2_COUNTS_AND_TOMBSTONES,
]

# Sequences (SERIAL / IDENTITY) never hand out an id twice: no rebuild needed.
_V2_POSTGRESQL = [
    "ALTER TABLE corpora ADD COLUMN generation INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE corpora ADD COLUMN document_count INTEGER NOT NULL DEFAULT 0",
    """UPDATE corpora SET document_count =
        (SELECT count(*) FROM documents d WHERE d.corpus_id = corpora.id)""",
    "DROP INDEX IF EXISTS ix_documents_corpus_id",
    "DROP INDEX IF EXISTS ix_documents_content_hash",
    "ALTER TABLE embeddings ADD COLUMN corpus_id INTEGER REFERENCES corpora (id) "
    "ON DELETE CASCADE",
    "UPDATE embeddings SET corpus_id = d.corpus_id FROM documents d "
    "WHERE d.id = embeddings.document_id",
    "ALTER TABLE embeddings ALTER COLUMN corpus_id SET NOT NULL",
    "ALTER TABLE embeddings ADD COLUMN generation INTEGER NOT NULL DEFAULT 1",
    "DROP INDEX IF EXISTS ix_embeddings_model_id",
    "DELETE FROM analyses",
    "ALTER TABLE analyses DROP COLUMN fingerprint",
    "ALTER TABLE analyses ADD COLUMN generation INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE analyses ADD COLUMN arrays BYTEA",
    "DROP INDEX IF EXISTS ix_analyses_corpus_id",
    """CREATE TABLE document_tombstones (
        id SERIAL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL,
        generation INTEGER NOT NULL)""",
    *_V2_COUNTS_AND_TOMBSTONES,
]

_V3_SQLITE = [
    """CREATE VIRTUAL TABLE documents_fts USING fts5(
        text, content='documents', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
        INSERT INTO documents_fts (rowid, text) VALUES (new.id, new.text);
    END""",
    """CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END""",
    """CREATE TRIGGER documents_fts_update AFTER UPDATE OF text ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO documents_fts (rowid, text) VALUES (new.id, new.text);
    END""",
    "INSERT INTO documents_fts (documents_fts) VALUES ('rebuild')",
    "ALTER TABLE embeddings ADD COLUMN passages BLOB",
    "ALTER TABLE embeddings ADD COLUMN passage_spans BLOB",
    "ALTER TABLE corpora ADD COLUMN meta_columns JSON",
    """UPDATE corpora SET meta_columns = (
        SELECT json_group_array(key) FROM (
            SELECT DISTINCT j.key AS key FROM documents d, json_each(d.meta) j
            WHERE d.corpus_id = corpora.id AND json_valid(d.meta) ORDER BY j.key))""",
]

_V3_POSTGRESQL = [
    "ALTER TABLE documents ADD COLUMN text_search tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
    "CREATE INDEX ix_documents_text_search ON documents USING GIN (text_search)",
    "ALTER TABLE embeddings ADD COLUMN passages BYTEA",
    "ALTER TABLE embeddings ADD COLUMN passage_spans BYTEA",
    "ALTER TABLE corpora ADD COLUMN meta_columns JSON",
    """UPDATE corpora SET meta_columns = (
        SELECT coalesce(json_agg(k ORDER BY k), '[]'::json) FROM (
            SELECT DISTINCT json_object_keys(d.meta) AS k FROM documents d
            WHERE d.corpus_id = corpora.id AND json_typeof(d.meta) = 'object') keys)""",
]

_V4_API_KEYS_SQLITE = [
    """CREATE TABLE api_keys (
        id INTEGER NOT NULL PRIMARY KEY,
        name VARCHAR(100) NOT NULL UNIQUE,
        prefix VARCHAR(20) NOT NULL,
        key_hash VARCHAR(64) NOT NULL UNIQUE,
        read_only BOOLEAN NOT NULL,
        created_at DATETIME NOT NULL,
        last_used_at DATETIME)""",
]

_V4_API_KEYS_POSTGRESQL = [
    """CREATE TABLE api_keys (
        id SERIAL PRIMARY KEY,
        name VARCHAR(100) NOT NULL UNIQUE,
        prefix VARCHAR(20) NOT NULL,
        key_hash VARCHAR(64) NOT NULL UNIQUE,
        read_only BOOLEAN NOT NULL,
        created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
        last_used_at TIMESTAMP WITHOUT TIME ZONE)""",
]

_V5_JUDGEMENTS_SQLITE = [
    """CREATE TABLE judgements (
        id INTEGER NOT NULL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        kind VARCHAR(10) NOT NULL,
        query TEXT,
        a_id VARCHAR(500) NOT NULL,
        b_id VARCHAR(500),
        label INTEGER NOT NULL,
        source VARCHAR(20) NOT NULL,
        item_key VARCHAR(64) NOT NULL,
        created_at DATETIME NOT NULL,
        updated_at DATETIME NOT NULL,
        CONSTRAINT uq_judgement_item UNIQUE (corpus_id, item_key))""",
    "CREATE INDEX ix_judgements_corpus_kind ON judgements (corpus_id, kind, id)",
    """CREATE TABLE evaluation_runs (
        id INTEGER NOT NULL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        model_name VARCHAR(200) NOT NULL,
        created_at DATETIME NOT NULL,
        metrics JSON NOT NULL,
        judgements INTEGER NOT NULL,
        note TEXT NOT NULL)""",
    "CREATE INDEX ix_evaluation_runs_corpus ON evaluation_runs (corpus_id, created_at)",
]

_V5_JUDGEMENTS_POSTGRESQL = [
    """CREATE TABLE judgements (
        id SERIAL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        kind VARCHAR(10) NOT NULL,
        query TEXT,
        a_id VARCHAR(500) NOT NULL,
        b_id VARCHAR(500),
        label INTEGER NOT NULL,
        source VARCHAR(20) NOT NULL,
        item_key VARCHAR(64) NOT NULL,
        created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
        updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
        CONSTRAINT uq_judgement_item UNIQUE (corpus_id, item_key))""",
    "CREATE INDEX ix_judgements_corpus_kind ON judgements (corpus_id, kind, id)",
    """CREATE TABLE evaluation_runs (
        id SERIAL PRIMARY KEY,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        model_name VARCHAR(200) NOT NULL,
        created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
        metrics JSON NOT NULL,
        judgements INTEGER NOT NULL,
        note TEXT NOT NULL)""",
    "CREATE INDEX ix_evaluation_runs_corpus ON evaluation_runs (corpus_id, created_at)",
]

_V6_FTS_PER_CORPUS_SQLITE = [
    # IF EXISTS and 'delete-all': a database whose tables were made by a newer create
    # (then stamped older, as tests do) upgrades the same way
    "DROP TRIGGER IF EXISTS documents_fts_insert",
    "DROP TRIGGER IF EXISTS documents_fts_delete",
    "DROP TRIGGER IF EXISTS documents_fts_update",
    "DROP TABLE IF EXISTS documents_fts",
    PerCorpus("""CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts_{corpus} USING fts5(
        text, content='documents', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')"""),
    PerCorpus("INSERT INTO documents_fts_{corpus} (documents_fts_{corpus}) VALUES ('delete-all')"),
    PerCorpus("""INSERT INTO documents_fts_{corpus} (rowid, text)
        SELECT id, text FROM documents WHERE corpus_id = {corpus} ORDER BY id"""),
]

_V6_FTS_PER_CORPUS_POSTGRESQL: list = []  # ts_rank_cd pools nothing across corpora

_V7_LAYOUTS = [
    """CREATE TABLE IF NOT EXISTS document_layouts (
        document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        parts JSON NOT NULL,
        PRIMARY KEY (document_id))""",
]

def _watched_folders(id_column: str, timestamp: str) -> list[str]:
    """Version 8's table in a dialect: its id column and its timestamp type."""
    return [f"""CREATE TABLE IF NOT EXISTS watched_folders (
        {id_column},
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        path VARCHAR(4096) NOT NULL,
        include JSON,
        exclude JSON,
        paused BOOLEAN NOT NULL,
        device VARCHAR(40),
        available BOOLEAN NOT NULL,
        reason TEXT,
        files_seen INTEGER NOT NULL,
        files_in_step INTEGER NOT NULL,
        files_waiting INTEGER NOT NULL,
        files_failed INTEGER NOT NULL,
        failures JSON,
        last_change JSON,
        last_change_at {timestamp},
        last_sync_at {timestamp},
        job_id INTEGER,
        lease_owner VARCHAR(200),
        lease_until {timestamp},
        created_at {timestamp} NOT NULL,
        CONSTRAINT uq_watched_folder UNIQUE (corpus_id, path))"""]


_V8_WATCHED_SQLITE = _watched_folders("id INTEGER NOT NULL PRIMARY KEY", "DATETIME")
_V8_WATCHED_POSTGRESQL = _watched_folders("id SERIAL PRIMARY KEY", "TIMESTAMP WITHOUT TIME ZONE")

_V9_RERANKER = ["ALTER TABLE corpora ADD COLUMN reranker VARCHAR(200)"]

_V10_SOURCES_SQLITE = [
    "ALTER TABLE documents ADD COLUMN source VARCHAR(600)",
    "ALTER TABLE documents ADD COLUMN original VARCHAR(64)",
    """UPDATE documents SET source = 'files', original = json_extract(meta, '$.sha256')
        WHERE id IN (SELECT document_id FROM document_layouts) AND json_valid(meta)
        AND typeof(json_extract(meta, '$.sha256')) = 'text'
        AND length(json_extract(meta, '$.sha256')) = 64""",
    "UPDATE documents SET source = 'files' WHERE source IS NULL "
    "AND id IN (SELECT document_id FROM document_layouts)",
    "UPDATE documents SET source = 'rows' WHERE source IS NULL",
    "CREATE INDEX IF NOT EXISTS ix_documents_source ON documents (corpus_id, source)",
]
_V10_SOURCES_POSTGRESQL = [
    "ALTER TABLE documents ADD COLUMN IF NOT EXISTS source VARCHAR(600)",
    "ALTER TABLE documents ADD COLUMN IF NOT EXISTS original VARCHAR(64)",
    """UPDATE documents SET source = 'files', original = meta->>'sha256'
        WHERE id IN (SELECT document_id FROM document_layouts)
        AND length(meta->>'sha256') = 64""",
    "UPDATE documents SET source = 'files' WHERE source IS NULL "
    "AND id IN (SELECT document_id FROM document_layouts)",
    "UPDATE documents SET source = 'rows' WHERE source IS NULL",
    "CREATE INDEX IF NOT EXISTS ix_documents_source ON documents (corpus_id, source)",
]

def _sentences_table(blob: str) -> list[str]:
    """Version 11's table in a dialect: its binary type."""
    return [f"""CREATE TABLE IF NOT EXISTS passage_sentences (
        document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        model_id INTEGER NOT NULL REFERENCES models (id) ON DELETE CASCADE,
        passage INTEGER NOT NULL,
        spans {blob} NOT NULL,
        vectors {blob} NOT NULL,
        PRIMARY KEY (document_id, model_id, passage))"""]


def _vocabulary_table(extra: str) -> list[str | Derived]:
    """Version 12's table in a dialect (``extra``: SQLite's WITHOUT ROWID), then filled."""
    return [f"""CREATE TABLE IF NOT EXISTS vocabulary (
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        word VARCHAR(64) NOT NULL,
        documents INTEGER NOT NULL,
        PRIMARY KEY (corpus_id, word)){extra}""", Derived(refill)]


def _saved_searches(id_column: str, timestamp: str) -> list[str]:
    """Version 12's saved-search tables in a dialect: its id column and timestamp type."""
    return [f"""CREATE TABLE IF NOT EXISTS saved_searches (
        {id_column},
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        name VARCHAR(200) NOT NULL,
        query TEXT NOT NULL,
        mode VARCHAR(20) NOT NULL,
        k INTEGER NOT NULL,
        min_score FLOAT,
        conditions JSON,
        created_at {timestamp} NOT NULL,
        last_look_at {timestamp},
        watermark INTEGER NOT NULL,
        last_checked_id INTEGER NOT NULL,
        feed_token VARCHAR(64) NOT NULL UNIQUE,
        webhook_url TEXT,
        desktop BOOLEAN NOT NULL,
        last_outcome JSON,
        CONSTRAINT uq_saved_search_name UNIQUE (corpus_id, name))""",
            f"""CREATE TABLE IF NOT EXISTS saved_search_hits (
        saved_id INTEGER NOT NULL REFERENCES saved_searches (id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        score FLOAT NOT NULL,
        found_at {timestamp} NOT NULL,
        PRIMARY KEY (saved_id, document_id))""",
            "CREATE INDEX IF NOT EXISTS ix_saved_search_hits_found "
            "ON saved_search_hits (saved_id, found_at)"]


_V12_SAVED_SQLITE = _saved_searches("id INTEGER NOT NULL PRIMARY KEY", "DATETIME")
_V12_SAVED_POSTGRESQL = _saved_searches("id SERIAL PRIMARY KEY", "TIMESTAMP WITHOUT TIME ZONE")


def _search_history(id_column: str, timestamp: str) -> list[str]:
    """Version 12's search_history table in a dialect: its id column and timestamp type."""
    return [f"""CREATE TABLE IF NOT EXISTS search_history (
        {id_column},
        user_key VARCHAR(120) NOT NULL,
        corpus_id INTEGER NOT NULL REFERENCES corpora (id) ON DELETE CASCADE,
        query VARCHAR(1000) NOT NULL,
        folded VARCHAR(1000) NOT NULL,
        searched_at {timestamp} NOT NULL,
        CONSTRAINT uq_search_history UNIQUE (user_key, corpus_id, folded))""",
            "CREATE INDEX IF NOT EXISTS ix_search_history_recent "
            "ON search_history (user_key, corpus_id, searched_at)"]


_V12_SEARCH_HISTORY_SQLITE = _search_history("id INTEGER NOT NULL PRIMARY KEY", "DATETIME")
_V12_SEARCH_HISTORY_POSTGRESQL = _search_history("id SERIAL PRIMARY KEY",
                                                 "TIMESTAMP WITHOUT TIME ZONE")


_V13_WORDS_SQLITE = [
    PerCorpus("DROP TABLE IF EXISTS documents_fts_{corpus}"),
    PerCorpus("""CREATE VIRTUAL TABLE documents_fts_{corpus} USING fts5(
        text, content='',
        tokenize='porter unicode61 remove_diacritics 2')"""),
    Derived(fulltext.refill),
    Derived(refill),
]
_V13_WORDS_POSTGRESQL = [Derived(refill)]


UPGRADES: dict[int, dict[str, list[str | PerCorpus | Derived]]] = {
    2: {"sqlite": _V2_SQLITE, "postgresql": _V2_POSTGRESQL},
    3: {"sqlite": _V3_SQLITE, "postgresql": _V3_POSTGRESQL},
    4: {"sqlite": _V4_API_KEYS_SQLITE, "postgresql": _V4_API_KEYS_POSTGRESQL},
    5: {"sqlite": _V5_JUDGEMENTS_SQLITE, "postgresql": _V5_JUDGEMENTS_POSTGRESQL},
    6: {"sqlite": _V6_FTS_PER_CORPUS_SQLITE, "postgresql": _V6_FTS_PER_CORPUS_POSTGRESQL},
    7: {"sqlite": _V7_LAYOUTS, "postgresql": _V7_LAYOUTS},
    8: {"sqlite": _V8_WATCHED_SQLITE, "postgresql": _V8_WATCHED_POSTGRESQL},
    9: {"sqlite": _V9_RERANKER, "postgresql": _V9_RERANKER},
    10: {"sqlite": _V10_SOURCES_SQLITE, "postgresql": _V10_SOURCES_POSTGRESQL},
    11: {"sqlite": _sentences_table("BLOB"), "postgresql": _sentences_table("BYTEA")},
    12: {"sqlite": (_V12_SAVED_SQLITE + _V12_SEARCH_HISTORY_SQLITE
                    + _vocabulary_table(" WITHOUT ROWID")),
         "postgresql": (_V12_SAVED_POSTGRESQL + _V12_SEARCH_HISTORY_POSTGRESQL
                        + _vocabulary_table(""))},
    13: {"sqlite": _V13_WORDS_SQLITE, "postgresql": _V13_WORDS_POSTGRESQL},
}
