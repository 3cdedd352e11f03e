"""Words as each language writes them (``base/words``): unspaced scripts searched by
bigrams through the real SQLite FTS5 index, width folded, English indexed as before.

Japanese, Chinese and Thai have no spaces between words: before, a run of them was one
"word" of the index and a word inside a sentence was never found. The properties run
real FTS5 tables (an in-memory SQLite, the corpus tables' own tokenizer); the rest go
through the store and ``search()``.
"""

from __future__ import annotations

import csv
import gzip
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from searchapp.base import words
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search
from searchapp.search.snippets import make_snippet
from searchapp.store import fulltext, repo, vocabulary
from searchapp.store.db import Database
from searchapp.store.documents import remove_documents
from searchapp.store.migrations import current_version
from searchapp.store.schema import SCHEMA_VERSION

TOKENIZER = "porter unicode61 remove_diacritics 2"  # the corpus tables' tokenizer
LATIN = "abcdefghijklmnopqrstuvwxyzABCXYZéüñçÉ0123456789ＡＢＣａｂｃ１２"
UNSPACED = ("東京都大阪市北京上海住在にでいますかがのをファイルカタカナーｶﾀｸ한국어서울"
            "ภาษาไทยกินข้าวແລະ")
SPACES = " 　,.、。!?-_"
SAMPLE = Path(__file__).resolve().parents[1] / "searchapp" / "sample" / "captions.csv.gz"


def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(text, content='', tokenize='{TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    return conn


def tokens(conn: sqlite3.Connection, one: str) -> list[str]:
    """The index's tokens of ``one``, in order (a fresh row 1)."""
    conn.execute("INSERT INTO f (f) VALUES ('delete-all')")
    conn.execute("INSERT INTO f (rowid, text) VALUES (1, ?)", (one,))
    return [t for t, in conn.execute("SELECT term FROM v ORDER BY offset")]


def found(conn: sqlite3.Connection, document: str, query: str) -> bool:
    """Whether the index of ``document``'s search words matches every chunk of ``query``."""
    conn.execute("INSERT INTO f (f) VALUES ('delete-all')")
    conn.execute("INSERT INTO f (rowid, text) VALUES (1, ?)", (words.search_text(document),))
    chunks = fulltext.fts_chunks(query)
    return bool(conn.execute("SELECT count(*) FROM f WHERE f MATCH ?",
                             (" AND ".join(chunks),)).fetchone()[0])


def _spaced_word_char(c: str) -> bool:
    return (c.isalnum() or c == "_") and not words.has_unspaced(c)


@st.composite
def text_and_cut(draw):
    """A mixed-script text and a substring of it cut at word boundaries of spaced scripts
    (anywhere inside an unspaced run)."""
    doc = draw(st.text(st.sampled_from(LATIN + UNSPACED + SPACES), min_size=1, max_size=40))
    cuts = [i for i in range(len(doc) + 1)
            if i in (0, len(doc)) or not (_spaced_word_char(doc[i - 1])
                                          and _spaced_word_char(doc[i]))]
    a = draw(st.sampled_from(cuts))
    b = draw(st.sampled_from([c for c in cuts if c > a] or [a]))
    return doc, doc[a:b]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_and_cut())
def test_any_piece_of_a_text_cut_at_its_words_finds_the_text(pair):
    doc, piece = pair
    assume(fulltext.fts_chunks(piece))  # something to search by (not spaces, marks alone)
    # a common word inside a chunk is dropped from its phrase (the query's rule, as before)
    spaced = words.spaced_only(words.fold(piece).lower())
    assume(not set(words.WORD.findall(spaced)) & fulltext.STOPWORDS)
    assert found(fts(), doc, piece), (doc, piece, words.search_text(doc),
                                      fulltext.fts_chunks(piece))


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from(UNSPACED), min_size=2, max_size=30), st.data())
def test_every_word_of_two_or_more_characters_inside_a_run_is_found(run, data):
    a = data.draw(st.integers(0, len(run) - 2))
    b = data.draw(st.integers(a + 2, len(run)))
    assume(fulltext.fts_chunks(run[a:b]))  # not combining marks alone (they are dropped)
    assert found(fts(), f"x {run} y", run[a:b])


def test_the_search_words_of_a_run_are_its_bigrams_and_its_last_character():
    conn = fts()
    assert tokens(conn, words.search_text("東京都に住んでいます")) == [
        "東京", "京都", "都に", "に住", "住ん", "んで", "でい", "いま", "ます", "す"]
    assert tokens(conn, words.search_text("ｶﾀｶﾅ ＡＢＣ１２")) == [
        "カタ", "タカ", "カナ", "ナ", "abc12"]
    # the Thai vowel and tone marks dropped (the index would cut a word at each)
    assert tokens(conn, words.search_text("กินข้าว")) == ["กน", "นข", "ขา", "าว", "ว"]


def test_english_text_indexes_to_the_same_tokens_as_before():
    """The bundled sample's 3,025 English captions, and accented Latin text: the same
    tokens through the new words as through the index alone (the English guard)."""
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        captions = [row[-1] for row in csv.reader(f)]
    texts = [*captions, "Café crème, naïve résumé — Zürich's Ærøskøbing, São Paulo"]
    conn = fts()
    assert len(texts) > 3000
    for one in texts:
        assert words.search_text(one) == one or tokens(conn, words.search_text(one)) == \
            tokens(conn, one), one
    english = ["Where is ERR-40417 in the XR-7 firmware?", "the pg_dump -Fc backup", "café"]
    assert [fulltext.fts_chunks(q) for q in english] == [
        ['"err 40417"', '"xr 7"', '"firmware"'], ['"pg_dump"', '"fc"', '"backup"'], ['"café"']]


def test_accents_and_widths_are_folded():
    conn = fts()
    assert found(conn, "Un café au lait", "cafe")
    assert found(conn, "cafe and tea", "Ｃａｆｅ")
    assert found(conn, "ＡＢＣ株式会社", "abc")
    assert found(conn, "ｶﾀｶﾅで書く", "カタカナ")


# ---- through the store and search() ------------------------------------------------------
ROWS = [
    {"id": "tokyo", "text": "私は東京都に住んでいます。毎朝電車で会社に行きます。"},
    {"id": "osaka", "text": "大阪の食べ物はおいしいです。京都にも近いです。"},
    {"id": "beijing", "text": "我住在北京市朝阳区，每天坐地铁上班。"},
    {"id": "file", "text": "このコマンドはファイルの内容を表示します。"},
    {"id": "seoul", "text": "저는서울에살고있습니다"},
    {"id": "cafe", "text": "The café on the corner serves coffee."},
    {"id": "dog", "text": "A dog runs along the beach chasing a ball."},
]


@pytest.fixture
def app(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    csv_bytes = pd.DataFrame(ROWS).to_csv(index=False).encode()
    job = run_until_done(app, upload(app, read_table(csv_bytes, "words.csv"), "words").job_id)
    assert job.status == "succeeded", job.error
    return app


def lexical(app, query: str) -> list[str]:
    return [h.id for h in search(app, "words", query, k=10, mode="lexical")]


def test_a_word_inside_a_sentence_is_found_in_japanese_chinese_and_korean(app):
    assert lexical(app, "東京") == ["tokyo"]
    assert lexical(app, "電車") == ["tokyo"]
    assert lexical(app, "住んで") == ["tokyo"]
    assert set(lexical(app, "京都")) == {"tokyo", "osaka"}  # 東京都 holds 京都: bigrams agree
    assert lexical(app, "北京") == ["beijing"]
    assert lexical(app, "地铁") == ["beijing"]
    assert lexical(app, "ファイル") == ["file"]
    assert lexical(app, "ﾌｧｲﾙ") == ["file"]  # half-width katakana folded
    assert lexical(app, "서울") == ["seoul"]
    assert lexical(app, "cafe") == ["cafe"]
    assert lexical(app, "神戸") == []


def test_one_character_phrases_and_exclusions(app):
    assert set(lexical(app, "阪")) == {"osaka"}
    assert set(lexical(app, "京")) == {"tokyo", "osaka", "beijing"}
    assert lexical(app, '"東京都"') == ["tokyo"]
    assert lexical(app, '"都に住んで"') == ["tokyo"]
    assert lexical(app, '"東京に住んで"') == []
    assert set(lexical(app, "京 -東京")) == {"osaka", "beijing"}


def test_the_japanese_word_is_highlighted_inside_its_sentence(app):
    hit = search(app, "words", "電車 東京", k=1, mode="lexical")[0]
    marked = hit.snippet
    assert [marked[a:b] for a, b in hit.highlights] == ["東京", "電車"]
    snippet = make_snippet("ファイルの内容を表示します。ファイル", ["ファイル", "表示"])
    assert snippet.marked() == "«ファイル»の内容を«表示»します。«ファイル»"


def test_a_word_found_without_its_accents_is_marked_with_them(app):
    hit = search(app, "words", "cafe", k=1, mode="lexical")[0]
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["café"]
    assert make_snippet("Größe, GRÖSSE und Grosse", ["grösse"]).marked() == \
        "Größe, «GRÖSSE» und «Grosse»"
    assert make_snippet("Le résumé du CAFÉ", ["Resume", "café"]).marked() == \
        "Le «résumé» du «CAFÉ»"


def test_did_you_mean_proposes_nothing_for_japanese(app):
    from searchapp.search.spelling import correct

    assert correct(app, "words", "東京都に住みます") is None
    with app.db.reader() as conn:
        corpus_id = conn.execute(text("SELECT id FROM corpora WHERE name = 'words'")).scalar()
        vocab = {w for w, _ in vocabulary.words(conn, corpus_id)}
    assert {"dog", "café"} <= vocab and not any(words.has_unspaced(w) for w in vocab)


# ---- the upgrade -----------------------------------------------------------------------
OLD_DDL = """CREATE VIRTUAL TABLE {fts} USING fts5(
        text, content='documents', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')"""


def as_version_12(url: str) -> int:
    """A database as version 12 left it: each corpus' FTS5 table external content over the
    documents' text as written (one "word" per Japanese run)."""
    db = Database(url)
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, "ja", "m")
        repo.add_documents(s, corpus, [repo.NewDocument(r["id"], r["text"]) for r in ROWS])
        corpus_id = corpus.id
    table = fulltext.fts_table(corpus_id)
    with db.engine.begin() as conn:
        conn.execute(text(f"DROP TABLE {table}"))
        conn.execute(text(OLD_DDL.format(fts=table)))
        conn.execute(text(f"INSERT INTO {table} ({table}) VALUES ('rebuild')"))
        conn.execute(text("UPDATE schema_info SET version = 12"))
    db.dispose()
    return corpus_id


def test_the_upgrade_makes_old_japanese_documents_findable(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    corpus_id = as_version_12(url)
    db = Database(url)
    with db.reader() as conn:
        assert current_version(conn) == SCHEMA_VERSION >= 13
        ids = {i for i, _ in fulltext.lexical_search(conn, corpus_id, "東京", 10)}
        names = {r[0] for r in conn.execute(text(
            "SELECT external_id FROM documents WHERE id IN (SELECT value FROM json_each(:i))"),
            {"i": str(sorted(ids))})}
        assert names == {"tokyo"}
        vocab = [w for w, _ in vocabulary.words(conn, corpus_id)]
    assert "dog" in vocab and not any(words.has_unspaced(w) for w in vocab)
    with db.session() as s:  # the rebuilt table takes deletes as a new one does
        remove_documents(s, corpus_id, sorted(ids), 2)
    with db.reader() as conn:
        assert fulltext.lexical_search(conn, corpus_id, "東京", 10) == []
        assert len(fulltext.lexical_search(conn, corpus_id, "大阪", 10)) == 1
        conn.execute(text(f"INSERT INTO {fulltext.fts_table(corpus_id)} "
                          f"({fulltext.fts_table(corpus_id)}) VALUES ('integrity-check')"))
    db.dispose()


# ---- PostgreSQL: the same words in the column the app writes ----------------------------
def found_ids(db: Database, corpus_id: int, query: str) -> set[str]:
    with db.reader() as conn:
        ids = [i for i, _ in fulltext.lexical_search(conn, corpus_id, query, 10)]
        rows = conn.execute(text("SELECT id, external_id FROM documents")).all()
    names = dict(rows)
    return {names[i] for i in ids}


def stored_rows(db: Database) -> int:
    """``ROWS`` stored as corpus 'ja' (no embedding: the words are what is tested); its id."""
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, "ja", "m")
        repo.add_documents(s, corpus, [repo.NewDocument(r["id"], r["text"]) for r in ROWS])
        return corpus.id


def test_postgresql_finds_a_word_inside_a_sentence(postgres_url):
    db = Database(postgres_url)
    corpus_id = stored_rows(db)
    assert found_ids(db, corpus_id, "東京") == {"tokyo"}
    assert found_ids(db, corpus_id, "北京") == {"beijing"}
    assert found_ids(db, corpus_id, "ﾌｧｲﾙ") == {"file"}
    assert found_ids(db, corpus_id, "coffee") == {"cafe"}
    # what phraseto_tsquery is given: the phrase of bigrams, then each bigram alone
    assert fulltext.ts_chunks("東京都 ERR-40417") == ["東京 京都", "ERR-40417", "東京", "京都"]
    with db.reader() as conn:
        sql, params = fulltext.phrase_condition("postgresql", corpus_id, ["東京都"], "p")
        hits = conn.execute(text(f"SELECT d.external_id FROM documents d WHERE {sql}"),
                            params).scalars().all()
    assert hits == ["tokyo"]
    db.dispose()


def test_the_upgrade_on_postgresql_makes_old_japanese_documents_findable(postgres_url):
    db = Database(postgres_url)
    corpus_id = stored_rows(db)
    with db.engine.begin() as conn:  # as version 12 left it: the generated column
        for sql in ("ALTER TABLE documents DROP COLUMN text_search",
                    "ALTER TABLE documents ADD COLUMN text_search tsvector "
                    "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
                    "CREATE INDEX ix_documents_text_search ON documents USING GIN (text_search)",
                    "UPDATE schema_info SET version = 12"):
            conn.execute(text(sql))
    assert found_ids(db, corpus_id, "東京") == set()  # what version 12 found
    db.dispose()
    db = Database(postgres_url)
    assert found_ids(db, corpus_id, "東京") == {"tokyo"}
    with db.session() as s:  # new documents get their words written too
        repo.add_documents(s, repo.get_or_create_corpus(s, "ja", "m"),
                           [repo.NewDocument("kobe", "神戸港の夜景はきれいです。")])
    assert found_ids(db, corpus_id, "夜景") == {"kobe"}
    db.dispose()
