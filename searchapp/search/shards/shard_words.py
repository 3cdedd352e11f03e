"""A shard's own full-text index: the search words of its documents in an FTS5 table of a
SQLite file beside the replica, ranked by BM25 as the single-machine SQLite path ranks.

The lexical side of a sharded search can come from the shared database's full text
(one query on one server, ``store.fulltext`` on PostgreSQL) or from the shards, each
ranking its own documents in parallel; ``benchmarks/shards_fulltext.py`` measured
both: on two real manuals the shards' BM25 found the right page far more often
(MRR@10 0.50 and 0.66 against PostgreSQL's ``ts_rank_cd`` 0.29 and 0.41) and, at
400,000 documents, answered in 0.04-0.06 of its time. So a shard keeps its words
unless served with ``words=False`` (``searchapp shards serve --full-text database``).

The table has the tokenizer of the app's SQLite index (``fulltext.SQLITE_TOKENIZE``)
over the same search words and stems (``fulltext.search_words``: widths folded, unspaced
scripts as bigrams; each word's stem in its text's language), and queries go through
``fulltext.lexical_search`` (phrases, common words left out of large corpora), so a
shard holding the whole corpus ranks it exactly as the app on SQLite does. Unlike the
app's table it stores the words: a document deleted from the database can still be taken
out by its row id. BM25 wants the whole corpus' statistics, which no shard holds:
``candidates`` offers a shard's best documents with its counts and each document's share
per phrase, and ``merged`` scores them all by the counts of every shard, as one index
would (only a document's length is still measured against its own shard's mean).
The file is derived data (never synced: a restarted replica builds it again); in WAL
mode, so queries read while a catch-up writes.

Example:
    >>> words = ShardWords(corpus_id=3)
    >>> words.add([(11, "The lease ends in May"), (12, "A cat on a mat")])
    >>> [doc for doc, _ in words.top("lease", 5)], words.count
    ([11], 2)
    >>> words.delete([11]); words.top("lease", 5)
    []
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import weakref
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlalchemy import create_engine, event, text

from searchapp.store import fulltext

_DDL = "CREATE VIRTUAL TABLE {fts} USING fts5(text, stems, tokenize='{tokenize}')"
# "+rowid": the ids filter the phrase's matches; as a constraint given to FTS5, each id
# would be a lookup of its own that counts the phrase's documents again (3.0 ms a query
# instead of 8.8, against 2.3 for the shard's plain top; 100,000 documents)
_PHRASE = """SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH :q
    AND +rowid IN (SELECT value FROM json_each(:ids))"""
WIDTH = 4  # candidates a shard offers per result asked, by its own ranking: its own
# statistics can move a document of the corpus' top n below its own top 2n (3 shards of
# 1,000 documents: 1 query in 40; tests/test_shards.py), not below 4n there
_WRITE_PAGE = 2_000  # rows written per statement


class ShardWords:
    """The search words of one shard's documents, searchable by BM25; see the module."""

    def __init__(self, corpus_id: int, folder: Path | None = None):
        """``folder``: where the file goes (emptied first: a replica restarted after a
        crash reuses its predecessor's folder); a new temporary one when None."""
        self.corpus_id = int(corpus_id)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
            Path(folder).mkdir(parents=True)
        self.folder = Path(folder or tempfile.mkdtemp(prefix="searchapp-shard-words-"))
        self.path = self.folder / "words.sqlite3"
        self.engine = create_engine(f"sqlite:///{self.path}")
        event.listen(self.engine, "connect", _fast_pragmas)
        self._table = fulltext.fts_table(self.corpus_id)
        with self.engine.begin() as conn:
            conn.exec_driver_sql(_DDL.format(fts=self._table,
                                             tokenize=fulltext.SQLITE_TOKENIZE))
        self.count = 0
        self._closer = weakref.finalize(self, _remove, self.engine, self.folder)

    def add(self, rows: Iterable[tuple[int, str]]) -> None:
        """Index documents given as (id, text); a document indexed before is replaced."""
        rows = list(rows)
        if not rows:
            return
        with self.engine.begin() as conn:
            self.count -= _delete(conn, self._table, [i for i, _ in rows])
            insert = text(f"INSERT INTO {self._table} (rowid, text, stems) "
                          "VALUES (:id, :words, :stems)")
            for start in range(0, len(rows), _WRITE_PAGE):
                made = [(int(i), *fulltext.search_words(t))
                        for i, t in rows[start:start + _WRITE_PAGE]]
                conn.execute(insert, [{"id": i, "words": w, "stems": st} for i, w, st in made])
        self.count += len(rows)
        self._checkpoint()

    def _checkpoint(self) -> None:
        """Write the log back into the file and empty it (a build's log would otherwise
        stay as large as its largest write: 170 MB beside 40 MB at 20,000 documents)."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")

    def delete(self, doc_ids: Sequence[int]) -> None:
        """Take documents out; ids not indexed are ignored."""
        if len(doc_ids):
            with self.engine.begin() as conn:
                self.count -= _delete(conn, self._table, doc_ids)

    def top(self, query: str, n: int, shards: int = 1, stem_languages: Sequence[str] = ()
            ) -> list[tuple[int, float]]:
        """The shard's ``n`` best (document id, BM25 score by its own statistics) for
        ``query``, best first; it is one of ``shards`` (its common phrases are those of
        the whole corpus: ``fulltext.informative_chunks``)."""
        with self.engine.connect() as conn:
            return fulltext.lexical_search(conn, self.corpus_id, query, n,
                                           documents=self.count * shards, share=shards,
                                           stem_languages=stem_languages)

    def candidates(self, query: str, n: int, shards: int = 1,
                   stem_languages: Sequence[str] = ()) -> dict:
        """The shard's best ``WIDTH * n`` documents for ``query`` with what scoring them by
        the whole corpus' statistics takes (``merged``): per phrase of the query, how many
        of the shard's documents hold it and each candidate's BM25 share of it without
        its idf; how many documents the shard holds.

        Example:
            >>> words = ShardWords(corpus_id=3)
            >>> words.add([(11, "The lease ends in May"), (12, "A cat on a mat")])
            >>> found = words.candidates("lease", 5)
            >>> found["documents"], found["held"], sorted(found["parts"])
            (2, {'"lease"': 1}, [11])
        """
        found = {"documents": self.count, "held": {}, "weights": {}, "parts": {}}
        chunks = fulltext.fts_chunks(query, stem_languages)
        with self.engine.connect() as conn:
            informative = fulltext.informative_chunks(conn, self.corpus_id, chunks,
                                                      self.count * shards, shards)
            expression = fulltext.match_expression(informative, chunks)
            rows = conn.execute(text(fulltext.SQLITE_TOP.format(fts=self._table)),
                                {"q": expression, "m": WIDTH * n}).all() if expression else []
            if rows:
                weights = Counter(fulltext.expression_phrases(informative, chunks))
                held, parts = self._phrase_parts(conn, list(weights), [int(r[0]) for r in rows])
                found.update(held=held, weights=dict(weights), parts=parts)
        return found

    def _phrase_parts(self, conn, phrases: list[str], docs: list[int]
                      ) -> tuple[dict[str, int], dict[int, dict[str, float]]]:
        """(documents of the shard holding each phrase, each of ``docs``' BM25 share of each
        phrase it holds without the phrase's idf: FTS5's ``bm25()`` of that phrase alone
        divided by the shard's idf)."""
        held, parts = {}, {doc: {} for doc in docs}
        ids = json.dumps(docs)
        for phrase in phrases:
            held[phrase] = conn.execute(text(fulltext.SQLITE_COUNT.format(fts=self._table)),
                                        {"q": phrase}).scalar() or 0
            idf = bm25_idf(self.count, held[phrase])
            for doc, score in conn.execute(text(_PHRASE.format(fts=self._table)),
                                           {"q": phrase, "ids": ids}):
                parts[int(doc)][phrase] = float(score) / idf
        return held, parts

    def disk_bytes(self) -> int:
        """What the index takes on the replica's disk."""
        return sum(p.stat().st_size for p in self.folder.glob("words.sqlite3*"))

    def close(self) -> None:
        """Drop the file (a replica stopping, or replaced by a rebuild)."""
        self._closer()


def bm25_idf(documents: int, holding: int) -> float:
    """FTS5's idf of a phrase held by ``holding`` of ``documents`` rows (fts5_aux.c: the
    log of (N - n + 0.5) / (n + 0.5), at least 1e-6).

    Example:
        >>> round(bm25_idf(1000, 10), 4), bm25_idf(10, 9)
        (4.5468, 1e-06)
    """
    idf = math.log((documents - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0 else 1e-6


def merged(answers: Sequence[dict], n: int) -> list[tuple[int, float]]:
    """The ``n`` best (document id, BM25 score) of several shards' ``candidates``, scored
    with the statistics of all of them together: each phrase's idf from the documents
    holding it in every shard, so a document scores as one index of the whole corpus
    would score it (its length normalised by its own shard's mean length, which a hash
    placement makes the corpus' within a fraction of a percent).

    Example:
        >>> one, two = ShardWords(3), ShardWords(3)
        >>> one.add([(1, "lease lease"), (2, "cat")]); two.add([(3, "lease"), (4, "dog")])
        >>> [doc for doc, _ in merged([one.candidates("lease", 5),
        ...                             two.candidates("lease", 5)], 5)]
        [1, 3]
    """
    documents = sum(a["documents"] for a in answers)
    held: Counter = Counter()
    for a in answers:
        held.update(a["held"])
    idf = {phrase: bm25_idf(documents, count) for phrase, count in held.items()}
    scored = []
    for a in answers:
        for doc, parts in a["parts"].items():
            scored.append((doc, sum(a["weights"][p] * idf[p] * g for p, g in parts.items())))
    return sorted(scored, key=lambda h: (-h[1], h[0]))[:n]


def _delete(conn, table: str, doc_ids: Sequence[int]) -> int:
    """Delete rows by id; how many there were."""
    result = conn.execute(text(f"DELETE FROM {table} WHERE rowid IN "
                               "(SELECT value FROM json_each(:ids))"),
                          {"ids": json.dumps([int(i) for i in doc_ids])})
    return max(result.rowcount, 0)


def _fast_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # queries read while a catch-up writes
    cursor.execute("PRAGMA synchronous=OFF")  # derived data: rebuilt after a crash
    cursor.close()


def _remove(engine, folder: Path) -> None:
    engine.dispose()
    shutil.rmtree(folder, ignore_errors=True)
