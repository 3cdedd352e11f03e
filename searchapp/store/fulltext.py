"""Full-text search over documents, kept in the same database and transaction as they are.

SQLite: one FTS5 table per corpus, ``documents_fts_{corpus id}`` (contentless: the
text lives only in ``documents``, the table holds the search words
``base/words.search_text`` makes of it: width folded, Japanese, Chinese, Thai and the
other unspaced scripts as character bigrams; porter stemming over unicode61, accents
folded; and in a second column, ``stems``, the words' Snowball stems in the language the
text is written in, ``base/stems.stem_stream``, empty for English, so a query's stems
in a corpus' languages find the other forms of its words: ``fts_chunks``), created and
dropped with its corpus (``create_corpus_index``,
``drop_corpus_index``). The store's three writes of documents keep it in the
same transaction (``index_new`` after an insert, ``unindex`` before a delete;
metadata updates leave the text alone), so a deleted document can never be
found. Not triggers: a trigger cannot choose its table by the row's corpus, so
each corpus would need its own, and every insert runs every corpus' triggers
(measured: 20,000 inserts 1.5x slower beside 100 corpora, 36x beside 1,000).
The same two calls keep the corpus' vocabulary (``store/vocabulary.py``: each word and
its document count, what "did you mean" proposes) on both databases.
Ranking is BM25
(``bm25()``, lower is better; we return its negation so that higher is better,
like cosine), and BM25's statistics (how many documents hold a word, their
average length) are those of the corpus' own table: a corpus ranks the same
whatever other corpora hold (schema 4; before, one table pooled them all).

PostgreSQL: a ``tsvector`` column ``documents.text_search`` (``english``
configuration over the same search words, written by ``index_new``: the database
cannot cut them) with a GIN index, ranked by ``ts_rank_cd``. ``ts_rank_cd`` reads the document
and the query only, so a corpus' ranking depends on that corpus alone there too.
Each query chunk goes through ``phraseto_tsquery`` (PostgreSQL parses it as it
parsed the documents), the chunks OR-ed with ``||``.

A query is cut into words (letters and digits; an unspaced run into the bigrams of
``base/words.query_tokens``, a one-character run a prefix); the words of one
whitespace-separated chunk form a phrase (``ERR-40417`` → the phrase ``err
40417``, ``東京都`` → ``東京 京都``), and the chunks are OR-ed, so a document with
every chunk ranks first and a document with some still counts. Common English words
are left out of the query, and on SQLite so are phrases found in more than 2% of a large corpus'
documents (``informative_chunks``): they carry little BM25 weight and cost a
score per matching row. Cost: proportional to the documents that contain a
remaining query word, never a scan of the corpus.

Example:
    >>> fts_query("Where is ERR-40417 in the XR-7 firmware?")
    '"err 40417" OR "xr 7" OR "firmware"'
    >>> query_words("the XR-7 firmware")
    ['xr', '7', 'firmware']
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import islice

from sqlalchemy import DDL, Connection, event, text

from searchapp.base import stems, words
from searchapp.store import vocabulary
from searchapp.store.schema import Document

WORD = re.compile(r"\w+", re.UNICODE)
IN_LIMIT = 900  # ids per IN (...) list: under SQLite's variable limit
TOP_WIDTH = 4  # candidates per result ranked before a filter is checked (then: join query)
COMMON_SHARE = 0.02  # a phrase in more of a corpus' documents is dropped from the query...
COMMON_MIN_DOCS = 2_000  # ...when that is more than this many (small corpora: never)
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
# SQLite, per corpus: {fts} is the corpus' table (its name from the corpus id, an integer)
# contentless: the table holds the search words of ``words.search_text`` only (the text
# itself lives in documents); nothing reads text back from it
SQLITE_TOKENIZE = "porter unicode61 remove_diacritics 2"  # over ``words.search_text``
SQLITE_CORPUS_DDL = f"""CREATE VIRTUAL TABLE IF NOT EXISTS {{fts}} USING fts5(
        text, stems, content='',
        tokenize='{SQLITE_TOKENIZE}')"""
SQLITE_CORPUS_DROP = "DROP TABLE IF EXISTS {fts}"
# the rows written after id {after}: the documents an insert just added (ids only grow)
_TEXTS_NEW = """SELECT id, text FROM documents WHERE corpus_id = :corpus AND id > :after
    ORDER BY id"""
_SQLITE_TEXTS_OF = """SELECT id, text FROM documents
    WHERE id IN (SELECT value FROM json_each(:ids)) ORDER BY id"""
# ``stems``: the words' stems in the text's own language (``base/stems.stem_stream``), '' for
# English and text of no stemmed language; the words as written stay in ``text``
_SQLITE_INSERT = "INSERT INTO {fts} (rowid, text, stems) VALUES (:id, :words, :stems)"
# contentless: a row leaves the index by the words it was indexed with, made again from the
# stored text before the row goes
_SQLITE_DELETE = """INSERT INTO {fts} ({fts}, rowid, text, stems)
    VALUES ('delete', :id, :words, :stems)"""
STEMS = "stems"  # the column of a document's stems (SQLite; on PostgreSQL they follow its words)
WRITE_PAGE = 500  # documents' search words made and written at a time
POSTGRESQL_DDL = [  # written by the app (index_new): the database cannot cut the words
    "ALTER TABLE documents ADD COLUMN text_search tsvector",
    "CREATE INDEX ix_documents_text_search ON documents USING GIN (text_search)",
]
# one statement per page of documents (a row at a time costs a round trip each)
_PG_SET = """UPDATE documents d SET text_search = to_tsvector('english', u.w)
    FROM unnest(CAST(:ids AS integer[]), CAST(:words AS text[])) AS u(i, w) WHERE d.id = u.i"""


def _install(target, conn: Connection, **_kw) -> None:
    if conn.dialect.name == "postgresql":
        for sql in POSTGRESQL_DDL:
            conn.execute(DDL(sql))


# A new PostgreSQL database gets the full-text column with the documents table (the
# database keeps it); SQLite gets a table per corpus as each corpus is made.
event.listen(Document.__table__, "after_create", _install)


def fts_table(corpus_id: int) -> str:
    """The name of a corpus' FTS5 table (SQLite).

    Example:
        >>> fts_table(12)
        'documents_fts_12'
    """
    return f"documents_fts_{int(corpus_id)}"  # int(): an id, never text from outside


def create_corpus_index(conn: Connection, corpus_id: int) -> None:
    """Make a new corpus' full-text table (SQLite), in the caller's transaction.

    Call it after the corpus row was written in that transaction: pysqlite opens the
    transaction at the first write, and DDL before it would commit on its own.
    """
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(SQLITE_CORPUS_DDL.format(fts=fts_table(corpus_id)))


def drop_corpus_index(conn: Connection, corpus_id: int) -> None:
    """Drop a corpus' full-text table (SQLite), in the caller's transaction: its documents
    can then be deleted without touching an index."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(SQLITE_CORPUS_DROP.format(fts=fts_table(corpus_id)))


def last_document_id(conn: Connection) -> int:
    """The highest document id so far: what ``index_new`` is given before an insert (the
    writer holds its corpus row's lock, so the corpus' rows above it are the insert's)."""
    return int(conn.execute(text("SELECT max(id) FROM documents")).scalar() or 0)


def index_new(conn: Connection, corpus_id: int, after: int) -> None:
    """Index the corpus' documents with an id above ``after`` (those just inserted: ids only
    grow, and the transaction holds SQLite's write lock); their words are counted into the
    corpus' vocabulary (both databases; PostgreSQL keeps its full-text column itself).

    Example:
        >>> after = last_document_id(conn)                      # doctest: +SKIP
        >>> conn.execute(insert(Document), rows)                # doctest: +SKIP
        >>> index_new(conn, corpus_id, after)                   # doctest: +SKIP
    """
    if conn.dialect.name == "sqlite":
        rows = conn.execute(text(_TEXTS_NEW), {"corpus": int(corpus_id), "after": int(after)})
        _write_words(conn, _SQLITE_INSERT.format(fts=fts_table(corpus_id)), rows)
    elif conn.dialect.name == "postgresql":
        rows = conn.execute(text(_TEXTS_NEW), {"corpus": int(corpus_id),
                                               "after": int(after)}).all()
        _write_words(conn, _PG_SET, rows, arrays=True)
    vocabulary.index_new(conn, corpus_id, after)


def unindex(conn: Connection, corpus_id: int, doc_ids: Sequence[int]) -> None:
    """Take documents out of their corpus' index and vocabulary; call before deleting them."""
    vocabulary.unindex(conn, corpus_id, doc_ids)
    if conn.dialect.name == "sqlite" and len(doc_ids):
        rows = conn.execute(text(_SQLITE_TEXTS_OF),
                            {"ids": json.dumps([int(i) for i in doc_ids])})
        _write_words(conn, _SQLITE_DELETE.format(fts=fts_table(corpus_id)), rows)


def _write_words(conn: Connection, sql: str, rows, arrays: bool = False) -> None:
    """Run ``sql`` (an insert or a 'delete' of the FTS5 table; ``arrays``: PostgreSQL's
    update, given a page's ids and words as two arrays) with each (id, text) row's search
    words, ``WRITE_PAGE`` rows at a time (a large insert is not held twice)."""
    statement = text(sql)
    rows = iter(rows)
    while page := list(islice(rows, WRITE_PAGE)):
        if arrays:  # PostgreSQL: one tsvector of the words, then their stems
            conn.execute(statement, {"ids": [int(i) for i, _ in page],
                                     "words": [_joined(*search_words(t)) for _, t in page]})
        else:
            made = [(int(i), *search_words(t)) for i, t in page]
            conn.execute(statement, [{"id": i, "words": w, "stems": st} for i, w, st in made])


def search_words(text_: str) -> tuple[str, str]:
    """A document's (search words, stems): what its row of the index holds.

    Example:
        >>> search_words("Die Dateien werden neu gelesen.")
        ('Die Dateien werden neu gelesen.', 'die datei werd neu geles')
        >>> search_words("The files are read.")
        ('The files are read.', '')
    """
    return words.search_text(text_), stems.stem_stream(text_)


def _joined(words_: str, stems_: str) -> str:
    """PostgreSQL's one text of a document's words and stems (its ``text_search`` column)."""
    return f"{words_}\n{stems_}" if stems_ else words_


def refill(conn: Connection) -> None:
    """Fill every corpus' (new, empty) FTS5 table, or on PostgreSQL the documents'
    ``text_search`` column, from the stored documents (the upgrade to schema 14: search
    words and stems are derived data, made by today's ``search_words``), a page at a time.

    Example:
        >>> refill(conn)                                            # doctest: +SKIP
    """
    corpora = [int(r[0]) for r in conn.execute(text("SELECT id FROM corpora ORDER BY id"))]
    page = text("SELECT id, text FROM documents WHERE corpus_id = :c AND id > :after "
                "ORDER BY id LIMIT :n")
    for corpus_id in corpora:
        pg, after = conn.dialect.name == "postgresql", 0
        insert = _PG_SET if pg else _SQLITE_INSERT.format(fts=fts_table(corpus_id))
        while rows := conn.execute(page, {"c": corpus_id, "after": after, "n": WRITE_PAGE}).all():
            _write_words(conn, insert, rows, arrays=pg)
            after = int(rows[-1][0])


# ---- queries -----------------------------------------------------------------------
def query_words(query: str) -> list[str]:
    """The query's words, lower-cased, without common English words; a run of an unspaced
    script (Japanese, Chinese, Thai, ...) is one word here (what a snippet marks)."""
    return words.query_words(query, STOPWORDS)


def _chunks(query: str) -> list[tuple[list[str], bool]]:
    """Per whitespace-separated chunk, its tokens (``words.query_tokens``: common words
    dropped, unspaced runs as bigrams) and whether the last is a prefix; empty chunks gone."""
    out = []
    for chunk in query.split()[:MAX_QUERY_CHUNKS * 4]:
        tokens, prefix = words.query_tokens(chunk, STOPWORDS)
        if tokens:
            out.append((tokens, prefix))
    return out[:MAX_QUERY_CHUNKS]


def _phrase(tokens: list[str], prefix: bool) -> str:
    """One FTS5 phrase, every token quoted (never read as syntax); ``*``: a prefix."""
    return '"' + " ".join(tokens) + '"' + (" *" if prefix else "")


def fts_chunks(query: str, stem_languages: Sequence[str] = ()) -> list[str]:
    """The query's chunks as quoted FTS5 phrases (every word quoted: never read as syntax).

    A chunk with a run of an unspaced script longer than one bigram is its phrase and
    also each of its bigrams alone (at most ``MAX_QUERY_CHUNKS`` of them): a sentence typed
    in Japanese rarely stands word for word in a document, and its bigrams rank the
    documents that share most of it, as Lucene's CJK analyzer does; the whole phrase
    still weighs on top. Measured on the Japanese manual pages (``languages.py``' ja→ja,
    BM25, MRR@10): 0.195 before bigrams, 0.223 with the phrase only, 0.713 with the
    bigrams alone too (docs/search.md).

    Example:
        >>> fts_chunks("東京都 ERR-40417 京")
        ['"東京 京都"', '"err 40417"', '"京" *', '"東京"', '"京都"']
        >>> fts_chunks("東京")
        ['"東京"']

    ``stem_languages``: the corpus' languages whose stems its index keeps (``STEMS``): each
    chunk's stems in each of them, where they differ from its words, is a phrase of the
    index's stems column too (``Dateien`` finds ``Datei`` in German pages).

        >>> fts_chunks("Dateien lesen", ["de"])
        ['"dateien"', '"lesen"', 'stems : "datei"', 'stems : "les"']
    """
    chunks = _chunks(query)
    phrases = [_phrase(tokens, prefix) for tokens, prefix in chunks]
    phrases += [f"{STEMS} : {_phrase(s, False)}" for s in _stemmed(chunks, stem_languages)]
    return phrases + [b for b in _loose([t for t, _ in chunks]) if b not in phrases]


def _stemmed(chunks: list[tuple[list[str], bool]], languages: Sequence[str]) -> list[list[str]]:
    """The chunks' stems in each language that differ from their words, each once, at most
    ``MAX_QUERY_CHUNKS`` (a chunk ending in a prefix is left as it is)."""
    out: dict[tuple[str, ...], None] = {}
    for tokens, prefix in chunks:
        if prefix:
            continue
        for _code, stemmed in stems.query_stems(tokens, languages):
            if stemmed != tokens:
                out[tuple(stemmed)] = None
    return [list(s) for s in out][:MAX_QUERY_CHUNKS]


def _loose(chunks: list[list[str]], quote: str = '"') -> list[str]:
    """The bigrams of unspaced runs of chunks longer than one token, each once, at most
    ``MAX_QUERY_CHUNKS``."""
    loose = dict.fromkeys(f"{quote}{t}{quote}" for tokens in chunks if len(tokens) > 1
                          for t in tokens if len(t) == 2 and words.has_unspaced(t))
    return list(loose)[:MAX_QUERY_CHUNKS]


def fts_query(query: str, stem_languages: Sequence[str] = ()) -> str:
    """The FTS5 MATCH expression for a user's query ('' when no word is left)."""
    return " OR ".join(fts_chunks(query, stem_languages))


def ts_chunks(query: str, stem_languages: Sequence[str] = ()) -> list[str]:
    """The query's chunks for PostgreSQL, each parsed there by ``phraseto_tsquery``.

    PostgreSQL's own parser reads each chunk as it read the documents (``ERR-40417``
    becomes ``err`` followed by ``-40417`` there), so phrases match what was indexed.
    A chunk that holds only common words is left out.

    Example:
        >>> ts_chunks("the ERR-40417 billing")
        ['ERR-40417', 'billing']
        >>> ts_chunks("Dateien lesen", ["de"])
        ['Dateien', 'lesen', 'datei', 'les']
    """
    chunks = [c for c in query.split()[:MAX_QUERY_CHUNKS * 4]
              if any(w not in STOPWORDS for w in WORD.findall(c.lower()))][:MAX_QUERY_CHUNKS]
    out = [_pg_text(c) for c in chunks]
    stemmed = [" ".join(s) for s in _stemmed(_chunks(query), stem_languages)]
    return [c for c in out if c] + stemmed + _loose(
        [words.query_tokens(c, STOPWORDS)[0] for c in chunks if words.has_unspaced(c)], quote="")


def _pg_text(chunk: str) -> str:
    """A chunk as PostgreSQL's parser is to read it: folded, an unspaced run as its bigrams
    (a one-character run at the end matches where that character ends a run only: no
    prefix there)."""
    if not words.has_unspaced(chunk):
        return words.fold(chunk)
    return " ".join(words.query_tokens(chunk, STOPWORDS)[0])


def phrase_condition(dialect: str, corpus_id: int, phrases: Sequence[str], param: str,
                     present: bool = True) -> tuple[str, dict]:
    """SQL over ``documents d`` true when the document holds one of ``phrases`` (each
    a word or words in this order, matched as the full-text index reads them: case,
    accents and, on SQLite, word endings folded), with its parameters.

    ``present=False``: true when it holds none of them (an exclusion).
    The query language's required phrases and exclusions are these,
    applied inside the candidate searches like a metadata filter. Cost: the
    documents holding the phrase, found in the index once per query.

    Example:
        >>> phrase_condition("sqlite", 3, ["notice period"], "p0")
        ('d.id IN (SELECT rowid FROM documents_fts_3 WHERE documents_fts_3 MATCH :p0)', \
{'p0': '"notice period"'})
        >>> phrase_condition("sqlite", 3, ["!!"], "p0")
        ('1=1', {})
        >>> phrase_condition("sqlite", 3, ["\u0e31"], "p0")  # a Thai mark alone: no word
        ('1=1', {})
    """
    if dialect == "postgresql":
        kept = [t for t in map(_pg_text, phrases) if WORD.search(t)]
        if not kept:
            return "1=1", {}
        names = [f"{param}_{i}" for i in range(len(kept))]
        q = " || ".join(f"phraseto_tsquery('english', :{n})" for n in names)
        # a phrase of common words only is an empty query there: it holds no condition
        match = f"d.text_search @@ ({q})" if present else f"NOT d.text_search @@ ({q})"
        return f"(numnode({q}) = 0 OR {match})", dict(zip(names, kept, strict=True))
    cut = [words.query_tokens(p) for p in phrases]
    quoted = [_phrase(tokens, prefix) for tokens, prefix in cut if tokens]
    if not quoted:
        return "1=1", {}
    fts = fts_table(corpus_id)
    inside = "IN" if present else "NOT IN"
    return f"d.id {inside} (SELECT rowid FROM {fts} WHERE {fts} MATCH :{param})", \
        {param: " OR ".join(quoted)}


# {fts}: the corpus' own table (``fts_table``); every row of it is one of its documents
SQLITE_COUNT = "SELECT count(*) FROM {fts} WHERE {fts} MATCH :q"
# a phrase's documents counted up to :cap + 1 only: whether it is common is all that matters
_SQLITE_COUNT_UP_TO = "SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH :q LIMIT :cap)"
SQLITE_TOP = """
    SELECT rowid, -bm25({fts}) AS score FROM {fts}
    WHERE {fts} MATCH :q ORDER BY rank LIMIT :m"""
_SQLITE_SEARCH = """
    SELECT f.rowid, -bm25({fts}) AS score
    FROM {fts} f JOIN documents d ON d.id = f.rowid
    WHERE {fts} MATCH :q AND ({where})
    ORDER BY bm25({fts}) LIMIT :n"""
_PG_SEARCH = """
    SELECT d.id, ts_rank_cd(d.text_search, t.q) AS score
    FROM documents d, (SELECT {tsquery} AS q) AS t
    WHERE d.corpus_id = :corpus AND d.text_search @@ t.q AND ({where})
    ORDER BY score DESC, d.id LIMIT :n"""


def informative_chunks(conn: Connection, corpus_id: int, chunks: list[str], documents: int,
                       share: int = 1) -> list[str]:
    """The FTS5 phrases worth ranking: those in at most COMMON_SHARE of the documents.

    Scoring is per matching document: a phrase in 15% of a 100,000-document
    corpus (``man``) makes BM25 score 15,000 rows for an idf of about 1.9, ten
    times the cost of the rest of the query for little of its ranking. Below
    ``COMMON_MIN_DOCS`` matches nothing is dropped, and when every phrase is that
    common the rarest is kept. Document frequencies are counted in the corpus'
    full-text table, each up to ``cap + 1`` (a phrase in 15% of a million documents is
    known to be common after 20,001 of its 150,000 rows); only when every phrase is
    common are they counted in full, to keep the rarest. ``share``: the table holds
    about 1/share of the corpus' ``documents`` (one of ``share`` shards placed by a hash),
    so a phrase is common when its count here reaches 1/share of the corpus' cap: every
    shard leaves out the phrases one index of the whole corpus would.

    Example:
        >>> informative_chunks(conn, 3, ['"man"', '"guitar"'], 100_000)     # doctest: +SKIP
        ['"guitar"']
    """
    cap = max(COMMON_MIN_DOCS, int(COMMON_SHARE * documents))
    if documents <= cap or len(chunks) < 2:
        return chunks
    cap = max(cap // max(share, 1), 1)
    up_to = text(_SQLITE_COUNT_UP_TO.format(fts=fts_table(corpus_id)))
    counts = [conn.execute(up_to, {"q": c, "cap": cap + 1}).scalar() or 0 for c in chunks]
    kept = [c for c, df in zip(chunks, counts, strict=True) if df <= cap]
    if kept:
        return kept
    count = text(SQLITE_COUNT.format(fts=fts_table(corpus_id)))
    counts = [conn.execute(count, {"q": c}).scalar() or 0 for c in chunks]
    return [min(zip(counts, chunks, strict=True))[1]]


def match_expression(informative: list[str], chunks: list[str]) -> str:
    """The FTS5 query: documents holding an informative phrase, ranked by every phrase.

    The common phrases left out by ``informative_chunks`` still count in the
    ranking of the documents the others find (as in Elasticsearch's common terms
    query): "A dog running on the beach" is found by ``beach`` and ranked by
    ``dog`` and ``running`` too, instead of trailing documents that only say
    "beach" twice. The informative phrases appear twice in the expression, so
    BM25 counts them twice: they weigh double against the common ones. Measured
    on 21 queries at 100,000 documents: 9.3 of the top 10 of a BM25 over every
    phrase (8.4 without the common phrases), 1.8 ms median (1.9 ms for every
    phrase, whose worst query took 21 ms).

    Example:
        >>> match_expression(['"beach"'], ['"dog"', '"beach"'])
        '("beach") AND ("dog" OR "beach")'
        >>> match_expression(['"dog"', '"beach"'], ['"dog"', '"beach"'])
        '"dog" OR "beach"'
    """
    either = " OR ".join(informative)
    if not informative or len(informative) == len(chunks):
        return either
    return f"({either}) AND ({' OR '.join(chunks)})"


def expression_phrases(informative: list[str], chunks: list[str]) -> list[str]:
    """The phrase instances of ``match_expression(informative, chunks)``, each as many times
    as BM25 counts it there (the informative ones twice when some phrases were left out):
    what a shard's words search takes apart (``search.shards.shard_words``).

    Example:
        >>> expression_phrases(['"beach"'], ['"dog"', '"beach"'])
        ['"beach"', '"dog"', '"beach"']
        >>> expression_phrases(['"dog"', '"beach"'], ['"dog"', '"beach"'])
        ['"dog"', '"beach"']
    """
    if not informative or len(informative) == len(chunks):
        return list(informative)
    return informative + chunks


def lexical_search(conn: Connection, corpus_id: int, query: str, n: int,
                   where: tuple[str, dict] = ("1=1", {}), documents: int = 0, share: int = 1,
                   stem_languages: Sequence[str] = ()) -> list[tuple[int, float]]:
    """The ``n`` best (document id, score) of a corpus for ``query``, best first.

    Scores are BM25 on SQLite and ``ts_rank_cd`` on PostgreSQL: higher is better,
    comparable within one query only. ``where`` is a metadata filter over
    ``documents d`` (``searchapp.search.filters.where_sql``), applied inside the query, so
    n results come back whenever n matching documents exist. ``documents``: the corpus'
    size; ``share``: the table holds 1/share of it (a shard's, ``informative_chunks``).
    ``stem_languages``: the corpus' languages whose stems the query's words are searched as
    too (``fts_chunks``).

    Example:
        >>> lexical_search(conn, corpus_id, "ERR-40417", 10)       # doctest: +SKIP
        [(17, 9.81), (4, 3.02)]
    """
    where_sql, params = where
    params = {**params, "corpus": corpus_id, "n": int(n)}
    if conn.dialect.name == "sqlite":
        chunks = fts_chunks(query, stem_languages)
        q = match_expression(informative_chunks(conn, corpus_id, chunks, documents, share),
                             chunks)
        if not q:
            return []
        found = _sqlite_top(conn, corpus_id, q, n, where)
        if found is not None:
            return found
        sql = _SQLITE_SEARCH.format(where=where_sql, fts=fts_table(corpus_id))
        params["q"] = q
    elif conn.dialect.name == "postgresql":
        q = ts_chunks(query, stem_languages)
        tsquery = " || ".join(f"phraseto_tsquery('english', :c{i})" for i in range(len(q)))
        sql = _PG_SEARCH.format(where=where_sql, tsquery=tsquery)
        params.update({f"c{i}": chunk for i, chunk in enumerate(q)})
    else:
        return []
    if not q:
        return []
    rows = conn.execute(text(sql), params).all()
    return [(int(i), float(s)) for i, s in rows]


def _sqlite_top(conn: Connection, corpus_id: int, q: str, n: int, where: tuple[str, dict]
                ) -> list[tuple[int, float]] | None:
    """Without a filter, the corpus table's best ``n``. With one, its best ``TOP_WIDTH * n``,
    kept when n of them pass the filter; None when they do not (a selective filter): then
    the join query ranks only the matching rows. Saves a row lookup per match."""
    top_sql = text(SQLITE_TOP.format(fts=fts_table(corpus_id)))
    if where[0] == "1=1":
        return [(int(i), float(s)) for i, s in conn.execute(top_sql, {"q": q, "m": n}).all()]
    m = TOP_WIDTH * n
    top = conn.execute(top_sql, {"q": q, "m": m}).all()
    ok = matching_ids(conn, corpus_id, [r[0] for r in top], where)
    kept = [(int(i), float(s)) for i, s in top if i in ok]
    if len(kept) >= n or len(top) < m:  # enough, or every match was seen
        return kept[:n]
    return None


def count_matches(conn: Connection, corpus_id: int, query: str, cap: int,
                  where: tuple[str, dict] = ("1=1", {}), stem_languages: Sequence[str] = ()
                  ) -> int:
    """How many of the corpus' documents hold at least one of the query's words or
    phrases (and pass ``where``), counted up to ``cap``: the "N matches" a results
    page shows. Common words count here too (they are matches, only poor rankers).

    Cost: proportional to the matching rows, at most ``cap`` of them.

    Example:
        >>> count_matches(conn, corpus_id, "ERR-40417", 10_000)       # doctest: +SKIP
        3
    """
    where_sql, params = where
    params = {**params, "corpus": corpus_id, "cap": int(cap)}
    if conn.dialect.name == "sqlite":
        q = fts_query(query, stem_languages)
        if not q:
            return 0
        fts = fts_table(corpus_id)  # the corpus' own table holds only its documents
        sql = (f"SELECT count(*) FROM (SELECT 1 FROM {fts} f JOIN documents d "
               f"ON d.id = f.rowid WHERE {fts} MATCH :q AND ({where_sql}) LIMIT :cap)")
        params["q"] = q
    elif conn.dialect.name == "postgresql":
        chunks = ts_chunks(query, stem_languages)
        if not chunks:
            return 0
        tsquery = " || ".join(f"phraseto_tsquery('english', :c{i})" for i in range(len(chunks)))
        sql = (f"SELECT count(*) FROM (SELECT 1 FROM documents d, (SELECT {tsquery} AS q) AS t "
               f"WHERE d.corpus_id = :corpus AND d.text_search @@ t.q AND ({where_sql}) "
               f"LIMIT :cap) AS m")
        params.update({f"c{i}": chunk for i, chunk in enumerate(chunks)})
    else:
        return 0
    return int(conn.execute(text(sql), params).scalar() or 0)


def matching_ids(conn: Connection, corpus_id: int, ids: Sequence[int],
                 where: tuple[str, dict]) -> set[int]:
    """Those of ``ids`` (documents of the corpus) that pass the filter: O(len(ids)) lookups.

    The ids travel as one parameter (a JSON array on SQLite, an array on
    PostgreSQL): a statement with hundreds of bound names costs SQLAlchemy more
    than SQLite's whole lookup.
    """
    if not len(ids):
        return set()
    where_sql, params = where
    if conn.dialect.name == "postgresql":
        wanted, value = "d.id = ANY(:ids)", [int(i) for i in ids]
    else:
        wanted, value = "d.id IN (SELECT value FROM json_each(:ids))", \
            json.dumps([int(i) for i in ids])
    sql = f"SELECT d.id FROM documents d WHERE {wanted} AND d.corpus_id = :corpus AND ({where_sql})"
    rows = conn.execute(text(sql), {**params, "ids": value, "corpus": corpus_id}).all()
    return {int(r[0]) for r in rows}


def all_matching_ids(conn: Connection, corpus_id: int, where: tuple[str, dict]) -> list[int]:
    """Ids of the corpus' documents passing the filter (one SQL pass).

    For selective filters only (the candidate search could not find enough): the
    database reads the corpus' rows, in C, through the (corpus_id, id) index.
    """
    where_sql, params = where
    sql = f"SELECT d.id FROM documents d WHERE d.corpus_id = :corpus AND ({where_sql})"
    return [int(r[0]) for r in conn.execute(text(sql), {**params, "corpus": corpus_id})]


def newest_matching_ids(conn: Connection, corpus_id: int, where: tuple[str, dict], n: int
                        ) -> list[int]:
    """The ``n`` newest (highest id) of the corpus' documents passing the filter: a query of
    filters alone. The (corpus_id, id) index is walked from the newest, so a broad filter
    stops after n rows and a selective one reads what it must."""
    where_sql, params = where
    sql = (f"SELECT d.id FROM documents d WHERE d.corpus_id = :corpus AND ({where_sql}) "
           "ORDER BY d.id DESC LIMIT :n")
    rows = conn.execute(text(sql), {**params, "corpus": corpus_id, "n": int(n)})
    return [int(r[0]) for r in rows]
