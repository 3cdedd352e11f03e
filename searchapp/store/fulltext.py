"""Full-text search over documents, kept in the same database and transaction as they are.

SQLite: an FTS5 table ``documents_fts`` (external content: the text lives only in
``documents``) with two columns, the text (porter stemming over unicode61, accents
folded) and the corpus id; triggers on ``documents`` write it in the same
transaction as every insert, update and delete, so a deleted document can never
be found. Ranking is BM25 (``bm25()``, lower is better; we return its negation so
that higher is better, like cosine).

PostgreSQL: a stored generated ``tsvector`` column ``documents.text_search``
(``english`` configuration) with a GIN index, ranked by ``ts_rank_cd``; the
database keeps it with every write by itself. Each query chunk goes through
``phraseto_tsquery`` (PostgreSQL parses it as it parsed the documents), the
chunks OR-ed with ``||``.

A query is cut into words (letters and digits); the words of one
whitespace-separated chunk form a phrase (``ERR-40417`` → the phrase ``err
40417``), and the chunks are OR-ed, so a document with every chunk ranks first
and a document with some still counts. Common English words are left out of the
query (they carry almost no BM25 weight and cost a pass over most of the corpus).
Cost: proportional to the documents that contain a query word, never a scan of
the corpus.

Example:
    >>> fts_query("Where is ERR-40417 in the XR-7 firmware?")
    '"err 40417" OR "xr 7" OR "firmware"'
    >>> query_words("the XR-7 firmware")
    ['xr', '7', 'firmware']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlalchemy import DDL, Connection, event, text

from searchapp.store.schema import Document

WORD = re.compile(r"\w+", re.UNICODE)
IN_LIMIT = 900  # ids per IN (...) list: under SQLite's variable limit
MAX_QUERY_CHUNKS = 32  # OR-ed phrases at most: a pasted paragraph stays a bounded query
STOPWORDS = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "does", "did", "for",
    "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me",
    "my", "no", "not", "of", "on", "or", "our", "so", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what",
    "when", "where", "which", "who", "why", "will", "with", "you", "your", "can", "could",
    "would", "should",
])

# ---- DDL (the current schema; upgrades.py keeps its own frozen copy) -------------------
SQLITE_DDL = [
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
]
POSTGRESQL_DDL = [
    "ALTER TABLE documents ADD COLUMN text_search tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
    "CREATE INDEX ix_documents_text_search ON documents USING GIN (text_search)",
]


def _install(target, conn: Connection, **_kw) -> None:
    statements = {"sqlite": SQLITE_DDL, "postgresql": POSTGRESQL_DDL}.get(conn.dialect.name, [])
    for sql in statements:
        conn.execute(DDL(sql))


# A new database gets the full-text index with the documents table.
event.listen(Document.__table__, "after_create", _install)


# ---- queries -----------------------------------------------------------------------
def query_words(query: str) -> list[str]:
    """The query's words, lower-cased, without common English words."""
    return [w for w in WORD.findall(query.lower()) if w not in STOPWORDS]


def _chunks(query: str) -> list[list[str]]:
    """Per whitespace-separated chunk, its words (common words dropped); empty chunks gone."""
    out = []
    for chunk in query.lower().split()[:MAX_QUERY_CHUNKS * 4]:
        words = [w for w in WORD.findall(chunk) if w not in STOPWORDS]
        if words:
            out.append(words)
    return out[:MAX_QUERY_CHUNKS]


def fts_query(query: str) -> str:
    """The FTS5 MATCH expression for a user's query ('' when no word is left).

    Every word is quoted, so no user input is ever read as FTS5 syntax.
    """
    return " OR ".join('"' + " ".join(words) + '"' for words in _chunks(query))


def ts_chunks(query: str) -> list[str]:
    """The query's chunks for PostgreSQL, each parsed there by ``phraseto_tsquery``.

    PostgreSQL's own parser reads each chunk as it read the documents (``ERR-40417``
    becomes ``err`` followed by ``-40417`` there), so phrases match what was indexed.
    A chunk that holds only common words is left out.

    Example:
        >>> ts_chunks("the ERR-40417 billing")
        ['ERR-40417', 'billing']
    """
    chunks = [c for c in query.split()[:MAX_QUERY_CHUNKS * 4]
              if any(w not in STOPWORDS for w in WORD.findall(c.lower()))]
    return chunks[:MAX_QUERY_CHUNKS]


_SQLITE_SEARCH = """
    SELECT f.rowid, -bm25(documents_fts) AS score
    FROM documents_fts f JOIN documents d ON d.id = f.rowid
    WHERE documents_fts MATCH :q AND d.corpus_id = :corpus AND ({where})
    ORDER BY bm25(documents_fts) LIMIT :n"""
_PG_SEARCH = """
    SELECT d.id, ts_rank_cd(d.text_search, t.q) AS score
    FROM documents d, (SELECT {tsquery} AS q) AS t
    WHERE d.corpus_id = :corpus AND d.text_search @@ t.q AND ({where})
    ORDER BY score DESC, d.id LIMIT :n"""


def lexical_search(conn: Connection, corpus_id: int, query: str, n: int,
                   where: tuple[str, dict] = ("1=1", {})) -> list[tuple[int, float]]:
    """The ``n`` best (document id, score) of a corpus for ``query``, best first.

    Scores are BM25 on SQLite and ``ts_rank_cd`` on PostgreSQL: higher is better,
    comparable within one query only. ``where`` is a metadata filter over
    ``documents d`` (``searchapp.filters.where_sql``), applied inside the query, so
    n results come back whenever n matching documents exist.

    Example:
        >>> lexical_search(conn, corpus_id, "ERR-40417", 10)       # doctest: +SKIP
        [(17, 9.81), (4, 3.02)]
    """
    where_sql, params = where
    params = {**params, "corpus": corpus_id, "n": int(n)}
    if conn.dialect.name == "sqlite":
        q = fts_query(query)
        sql = _SQLITE_SEARCH.format(where=where_sql)
        params["q"] = q
    elif conn.dialect.name == "postgresql":
        q = ts_chunks(query)
        tsquery = " || ".join(f"phraseto_tsquery('english', :c{i})" for i in range(len(q)))
        sql = _PG_SEARCH.format(where=where_sql, tsquery=tsquery)
        params.update({f"c{i}": chunk for i, chunk in enumerate(q)})
    else:
        return []
    if not q:
        return []
    rows = conn.execute(text(sql), params).all()
    return [(int(i), float(s)) for i, s in rows]


def matching_ids(conn: Connection, corpus_id: int, ids: Sequence[int],
                 where: tuple[str, dict]) -> set[int]:
    """Those of ``ids`` (documents of the corpus) that pass the filter: O(len(ids)) lookups."""
    where_sql, params = where
    out: set[int] = set()
    for start in range(0, len(ids), IN_LIMIT):
        part = [int(i) for i in ids[start:start + IN_LIMIT]]
        marks = ", ".join(f":id{j}" for j in range(len(part)))
        sql = (f"SELECT d.id FROM documents d WHERE d.id IN ({marks}) "
               f"AND d.corpus_id = :corpus AND ({where_sql})")
        values = {f"id{j}": x for j, x in enumerate(part)}
        out.update(int(r[0]) for r in conn.execute(text(sql), {**params, **values,
                                                              "corpus": corpus_id}))
    return out


def all_matching_ids(conn: Connection, corpus_id: int, where: tuple[str, dict]) -> list[int]:
    """Ids of the corpus' documents passing the filter (one SQL pass).

    For selective filters only (the candidate search could not find enough): the
    database reads the corpus' rows, in C, through the (corpus_id, id) index.
    """
    where_sql, params = where
    sql = f"SELECT d.id FROM documents d WHERE d.corpus_id = :corpus AND ({where_sql})"
    return [int(r[0]) for r in conn.execute(text(sql), {**params, "corpus": corpus_id})]
