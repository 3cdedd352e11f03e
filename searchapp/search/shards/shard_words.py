"""A shard's own full-text index: the search words of its documents in an FTS5 table of a
SQLite file beside the replica, ranked by BM25 as the single-machine SQLite path ranks.

The lexical side of a sharded search can come from the shared database's full text
(one query on one server, ``store.fulltext`` on PostgreSQL) or from the shards, each
ranking its own documents in parallel; ``benchmarks/shards_fulltext.py`` measures
both (quality on a real manual, latency as the corpus grows).

The table has the tokenizer of the app's SQLite index (``fulltext.SQLITE_TOKENIZE``)
over the same search words (``words.search_text``: widths folded, unspaced scripts
as bigrams), and queries go through ``fulltext.lexical_search`` (phrases, common
words left out of large corpora), so a shard holding the whole corpus ranks it
exactly as the app on SQLite does. Unlike the app's table it stores the words: a
document deleted from the database can still be taken out by its row id. BM25's
statistics are the shard's own (as Elasticsearch's default ``query_then_fetch``):
with documents placed by a hash, every shard sees about the same word
frequencies, so the merged list is close to one index's; measured in the benchmark.
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

import shutil
import tempfile
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlalchemy import create_engine, event, text

from searchapp.base import words as search_words
from searchapp.store import fulltext

_DDL = "CREATE VIRTUAL TABLE {fts} USING fts5(text, tokenize='{tokenize}')"
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
            insert = text(f"INSERT INTO {self._table} (rowid, text) VALUES (:id, :words)")
            for start in range(0, len(rows), _WRITE_PAGE):
                conn.execute(insert, [{"id": int(i), "words": search_words.search_text(t)}
                                      for i, t in rows[start:start + _WRITE_PAGE]])
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

    def top(self, query: str, n: int, shards: int = 1) -> list[tuple[int, float]]:
        """The shard's ``n`` best (document id, BM25 score) for ``query``, best first; it is
        one of ``shards`` (its common phrases are those of the whole corpus:
        ``fulltext.informative_chunks``)."""
        with self.engine.connect() as conn:
            return fulltext.lexical_search(conn, self.corpus_id, query, n,
                                           documents=self.count * shards, share=shards)

    def disk_bytes(self) -> int:
        """What the index takes on the replica's disk."""
        return sum(p.stat().st_size for p in self.folder.glob("words.sqlite3*"))

    def close(self) -> None:
        """Drop the file (a replica stopping, or replaced by a rebuild)."""
        self._closer()


def _delete(conn, table: str, doc_ids: Sequence[int]) -> int:
    """Delete rows by id; how many there were."""
    import json

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
