"""A corpus' vocabulary: each word of its documents and in how many of them it stands.

What "did you mean" corrects a query's word to (``searchapp.search.spelling``): a
word of the corpus' own documents, in its languages, with its document frequency.
Kept at write time, in the same transaction as the full-text index:
``fulltext.index_new`` counts the words of the documents an insert just added,
``fulltext.unindex`` takes those of the documents about to be deleted away (a row
whose count reaches 0 goes), so the table always says what the stored texts say;
a corpus' rows go with it (ON DELETE CASCADE). One statement per batch of documents
on either database: the batch's words counted in Python, then one upsert (SQLite:
``json_each`` of the counts; PostgreSQL: ``unnest`` of two arrays).

A word is cut as the full-text index cuts it (runs of letters and digits, ``_`` and
``-`` between them), lower-cased, and kept only when it is letters alone and at
most ``MAX_WORD`` of them: ``ERR-40417`` gives ``err``, ``pg_dump`` gives ``pg``
and ``dump``, ``xr7`` nothing (a word with digits is never corrected, nor proposed).
Accents are kept as written (``café``); the spelling side compares them folded.
Words of unspaced scripts (Japanese, Chinese, Thai: ``base/words``) are left out: a run of
them is a sentence, not a word, and their search words (bigrams) are nothing to correct to.

Example:
    >>> sorted(words_of("The café's XR-7 pg_dump: Café!"))
    ['café', 'dump', 'pg', 's', 'the', 'xr']
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, text

from searchapp.base.words import spaced_only

TOKEN = re.compile(r"[^\W_]+", re.UNICODE)  # as FTS5's unicode61 cuts: letters and digits
MAX_WORD = 64  # longer runs are not words a person types (hashes, base64): left out
FILL_PAGE = 2_000  # documents read at a time when a whole corpus is counted (the upgrade)

# ---- SQL, per dialect ------------------------------------------------------------------
_SQLITE_ADD = """INSERT INTO vocabulary (corpus_id, word, documents)
    SELECT :corpus, key, value FROM json_each(:counts) WHERE true
    ON CONFLICT (corpus_id, word)
    DO UPDATE SET documents = vocabulary.documents + excluded.documents"""
_SQLITE_TAKE = """UPDATE vocabulary SET documents = vocabulary.documents - j.value
    FROM json_each(:counts) AS j WHERE vocabulary.corpus_id = :corpus AND vocabulary.word = j.key"""
_SQLITE_DROP_ZEROS = """DELETE FROM vocabulary WHERE corpus_id = :corpus AND documents <= 0
    AND word IN (SELECT key FROM json_each(:counts))"""
_SQLITE_TEXTS_OF = "SELECT text FROM documents WHERE id IN (SELECT value FROM json_each(:ids))"
_PG_ADD = """INSERT INTO vocabulary (corpus_id, word, documents)
    SELECT :corpus, u.w, u.n FROM unnest(CAST(:words AS text[]), CAST(:ns AS integer[])) AS u(w, n)
    ON CONFLICT (corpus_id, word)
    DO UPDATE SET documents = vocabulary.documents + excluded.documents"""
_PG_TAKE = """UPDATE vocabulary SET documents = vocabulary.documents - u.n
    FROM unnest(CAST(:words AS text[]), CAST(:ns AS integer[])) AS u(w, n)
    WHERE vocabulary.corpus_id = :corpus AND vocabulary.word = u.w"""
_PG_DROP_ZEROS = """DELETE FROM vocabulary WHERE corpus_id = :corpus AND documents <= 0
    AND word = ANY(CAST(:words AS text[]))"""
_PG_TEXTS_OF = "SELECT text FROM documents WHERE id = ANY(CAST(:ids AS integer[]))"
_TEXTS_AFTER = "SELECT text FROM documents WHERE corpus_id = :corpus AND id > :after"


def words_of(document: str) -> set[str]:
    """The distinct vocabulary words of one text (see the module's docstring).

    Example:
        >>> sorted(words_of("Postgres 16 and PostgreSQL's pg_hba.conf"))
        ['and', 'conf', 'hba', 'pg', 'postgres', 'postgresql', 's']
    """
    lowered = document.lower()
    if not lowered.isascii():
        lowered = unicodedata.normalize("NFC", spaced_only(lowered))  # accents composed
    return {w for w in TOKEN.findall(lowered) if len(w) <= MAX_WORD and w.isalpha()}


def count_words(texts: Iterable[str]) -> Counter[str]:
    """In how many of ``texts`` each word stands.

    Example:
        >>> count_words(["a cat", "a cat and a dog"])["a"]
        2
    """
    counts: Counter[str] = Counter()
    for one in texts:
        counts.update(words_of(one))
    return counts


def add_counts(conn: Connection, corpus_id: int, counts: Counter[str]) -> None:
    """Add ``counts`` (word → documents) to the corpus' vocabulary, in the caller's
    transaction: one upsert."""
    if not counts:
        return
    if conn.dialect.name == "postgresql":
        conn.execute(text(_PG_ADD), {"corpus": int(corpus_id), "words": list(counts),
                                     "ns": list(counts.values())})
    else:
        conn.execute(text(_SQLITE_ADD), {"corpus": int(corpus_id),
                                         "counts": json.dumps(counts)})


def take_counts(conn: Connection, corpus_id: int, counts: Counter[str]) -> None:
    """Take ``counts`` away from the corpus' vocabulary; words left in no document go."""
    if not counts:
        return
    if conn.dialect.name == "postgresql":
        params = {"corpus": int(corpus_id), "words": list(counts), "ns": list(counts.values())}
        conn.execute(text(_PG_TAKE), params)
        conn.execute(text(_PG_DROP_ZEROS), params)
    else:
        params = {"corpus": int(corpus_id), "counts": json.dumps(counts)}
        conn.execute(text(_SQLITE_TAKE), params)
        conn.execute(text(_SQLITE_DROP_ZEROS), params)


def index_new(conn: Connection, corpus_id: int, after: int) -> None:
    """Count the words of the corpus' documents with an id above ``after`` (those an insert
    just added; ``fulltext.index_new`` calls it with the same ``after``)."""
    rows = conn.execute(text(_TEXTS_AFTER), {"corpus": int(corpus_id), "after": int(after)})
    add_counts(conn, corpus_id, count_words(r[0] for r in rows))


def unindex(conn: Connection, corpus_id: int, doc_ids: Sequence[int]) -> None:
    """Take the words of documents about to be deleted away (``fulltext.unindex``)."""
    if not len(doc_ids):
        return
    ids = [int(i) for i in doc_ids]
    if conn.dialect.name == "postgresql":
        rows = conn.execute(text(_PG_TEXTS_OF), {"ids": ids})
    else:
        rows = conn.execute(text(_SQLITE_TEXTS_OF), {"ids": json.dumps(ids)})
    take_counts(conn, corpus_id, count_words(r[0] for r in rows))


def words(conn: Connection, corpus_id: int, min_documents: int = 1) -> list[tuple[str, int]]:
    """The corpus' words with their document counts (those in ``min_documents`` or more).

    Example:
        >>> words(conn, 3)                                          # doctest: +SKIP
        [('postgres', 812), ('postgresql', 1290), ...]
    """
    rows = conn.execute(text("SELECT word, documents FROM vocabulary WHERE corpus_id = :c "
                             "AND documents >= :m"), {"c": int(corpus_id), "m": int(min_documents)})
    return [(str(w), int(n)) for w, n in rows]


def refill(conn: Connection) -> None:
    """Count every corpus' vocabulary again from its stored documents (the upgrade to
    schema 12; derived data, so it is made by today's ``words_of``, not a frozen copy).

    The documents are read a page at a time by id; the counts of one corpus are held in
    memory (one entry per distinct word) and written in one statement.
    """
    conn.execute(text("DELETE FROM vocabulary"))
    corpora = [int(r[0]) for r in conn.execute(text("SELECT id FROM corpora ORDER BY id"))]
    page = text("SELECT id, text FROM documents WHERE corpus_id = :c AND id > :after "
                "ORDER BY id LIMIT :n")
    for corpus_id in corpora:
        counts: Counter[str] = Counter()
        after = 0
        while rows := conn.execute(page, {"c": corpus_id, "after": after, "n": FILL_PAGE}).all():
            counts.update(w for _, t in rows for w in words_of(t))
            after = int(rows[-1][0])
        add_counts(conn, corpus_id, counts)
