"""Stems as each language forms them (``base/stems``): a document's Snowball stems in the
index's ``stems`` column, a query's stems in the corpus' languages, through the real SQLite
FTS5 index, the store, ``search()``, the shards' own index and PostgreSQL.

``Dateien`` must find the page that says ``Datei`` and ``archivos`` the one that says
``archivo``, the words as written must still match as before, an English corpus must index
exactly as before, and a document must leave the index cleanly whatever its metadata has
become (the index is contentless: a row leaves it by the words it was indexed with).
"""

from __future__ import annotations

import dataclasses
import sqlite3

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from searchapp.base import stems, words
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.search.corpus_languages import query_stem_languages, stem_languages
from searchapp.search.service import search
from searchapp.search.snippets import make_snippet, word_spans
from searchapp.store import fulltext, repo
from searchapp.store.db import Database
from searchapp.store.document_edits import delete_by_external_id, replace_meta
from searchapp.vectors.handle import open_corpus

PAGES = [  # (id, text): long enough that their language is surely told
    ("cp", "Kopiert die Quelle zum Ziel oder mehrere Quellen in ein Verzeichnis, "
           "ohne die vorhandene Datei zu fragen."),
    ("ls", "Listet Informationen über die angegebenen Verzeichnisse auf, sortiert "
           "nach dem Namen der Einträge."),
    ("tar", "Das Programm archiviert Dateien auf Band oder in einem Archiv und stellt "
            "sie wieder her."),
    ("mv", "Benennt die Quelle in das Ziel um oder verschiebt mehrere Quellen in "
           "das angegebene Ziel."),
    ("gzip", "Comprime el archivo indicado y lo reemplaza por otro con la extensión "
             "correspondiente para ahorrar espacio."),
    ("rm", "Elimina cada uno de los ficheros indicados; por omisión no elimina los "
           "directorios que encuentre."),
]


def table(conn: sqlite3.Connection | None = None) -> sqlite3.Connection:
    """A real FTS5 table of the corpus tables' own DDL, in memory."""
    conn = conn or sqlite3.connect(":memory:")
    conn.execute(fulltext.SQLITE_CORPUS_DDL.format(fts="f"))
    return conn


def index(conn: sqlite3.Connection, rows: list[tuple[int, str]]) -> None:
    for i, t in rows:
        w, s = fulltext.search_words(t)
        conn.execute("INSERT INTO f (rowid, text, stems) VALUES (?, ?, ?)", (i, w, s))


def matches(conn: sqlite3.Connection, query: str, languages: tuple[str, ...]) -> list[int]:
    q = fulltext.fts_query(query, languages)
    return sorted(r for r, in conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (q,)))


# ---- the stems of a text and of a query ---------------------------------------------------
@pytest.mark.parametrize(("text_", "language"), [
    ("Die Dateien werden neu gelesen und die Verzeichnisse erstellt.", "de"),
    ("Le fichier est lu, puis l'index est reconstruit entièrement.", "fr"),
    ("Los archivos se leen y el índice se reconstruye por completo.", "es"),
    ("De bestanden worden gelezen en de index wordt opnieuw opgebouwd.", "nl"),
    ("Файлы читаются, и индекс полностью перестраивается заново.", "ru"),
    ("The files are read and the index is rebuilt from scratch.", None),  # porter's
    ("ファイルを読み込んでインデックスを作り直します。", None),  # no Snowball stemmer
    ("ls -l /tmp", None),  # not surely a language
])
def test_a_text_is_stemmed_in_the_language_it_is_surely_written_in(text_, language):
    assert stems.stem_language(text_) == language
    assert (stems.stem_stream(text_) != "") is (language is not None)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["Dateien", "Verzeichnisse", "werden", "gelesen", "und",
                                 "neu", "erstellt", "Quellen", "über", "ABC", "42", "東京"]),
                min_size=8, max_size=30))
def test_the_stems_keep_every_word_in_its_place(chosen):
    """One stem per word of the spaced scripts, in order (a phrase of stems matches where its
    words stand together); none where the text is not surely German."""
    text_ = " ".join(chosen)
    got = stems.stem_stream(text_).split()
    spaced = stems.WORD.findall(words.spaced_only(words.fold(text_)).lower())
    assert got == [] or len(got) == len(spaced)
    if got:
        german = stems.stemmer("de")
        assert got == german.stemWords(spaced)


def test_an_english_text_gets_no_stems_so_an_english_corpus_indexes_as_before():
    for text_ in ("How do I reset my password when the link has expired?",
                  "The XR-7 firmware fails with ERR-40417 after an update of the files.",
                  "Café prices – “rising” again in 2024 ... naïve forecasts"):
        assert fulltext.search_words(text_) == (words.search_text(text_), "")
    assert fulltext.fts_chunks("reset passwords", ()) == ['"reset"', '"passwords"']


def test_a_query_gets_its_stems_in_each_language_where_they_differ():
    assert fulltext.fts_chunks("Dateien ERR-40417", ("de", "es")) == [
        '"dateien"', '"err 40417"', 'stems : "datei"']  # Spanish leaves both as written
    assert fulltext.fts_chunks("Datei", ("de",)) == ['"datei"']  # the same: the word itself
    assert fulltext.ts_chunks("archivos", ("es",)) == ["archivos", "archiv"]


# ---- the index ------------------------------------------------------------------------------
def test_other_forms_of_a_word_are_found_by_their_stems_and_the_written_words_as_before():
    conn = table()
    index(conn, [(i, t) for i, (_, t) in enumerate(PAGES, start=1)])
    assert matches(conn, "Dateien", ("de",)) == [1, 3]  # Datei (cp) and Dateien (tar)
    assert matches(conn, "Dateien", ()) == [3]  # the word as written only
    assert matches(conn, "Verzeichnis", ("de",)) == [1, 2]
    assert matches(conn, "eliminar", ("es",)) == [6]  # Elimina
    assert matches(conn, "eliminar", ("de",)) == []  # its German stem is the word itself
    assert matches(conn, "archivos", ()) == [5]  # the index's porter took the -s off before
    # Spanish "archivos" and German "Archiv" (tar) share a stem: one meaning
    assert matches(conn, "archivos", ("es", "de")) == [3, 5]
    assert matches(conn, "elimina ficheros", ("es",)) == [6]


def test_a_document_leaves_the_index_by_its_text_whatever_its_metadata_became(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'stems.db'}")
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, "de", "m")
        repo.add_documents(s, corpus, [repo.NewDocument(i, t, {"lang": "de"}) for i, t in PAGES])
        corpus_id = corpus.id
    with db.session() as s:  # its language changed by hand, then the document deleted
        corpus = repo.get_or_create_corpus(s, "de", "m")
        assert replace_meta(s, corpus, [repo.NewDocument("tar", PAGES[2][1], {"lang": "en"})]) == 1
        delete_by_external_id(s, corpus, ["tar"])
    with db.reader() as conn:
        fts = fulltext.fts_table(corpus_id)
        ghosts = conn.execute(text(f"SELECT rowid FROM {fts} WHERE {fts} MATCH :q"),
                              {"q": 'stems : "archiviert"'}).all()
        assert ghosts == []  # the stems it was indexed with left with it
        found = fulltext.lexical_search(conn, corpus_id, "Dateien", 10, stem_languages=("de",))
        names = dict(conn.execute(text("SELECT id, external_id FROM documents")).all())
        assert [names[i] for i, _ in found] == ["cp"]
        conn.execute(text(f"INSERT INTO {fts} ({fts}) VALUES ('integrity-check')"))
    db.dispose()


def test_the_upgrade_gives_documents_stored_before_their_stems(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    db = Database(url)
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, "de", "m")
        repo.add_documents(s, corpus, [repo.NewDocument(i, t) for i, t in PAGES])
        corpus_id = corpus.id
    fts = fulltext.fts_table(corpus_id)
    with db.engine.begin() as conn:  # as version 13 left it: the words only
        conn.execute(text(f"DROP TABLE {fts}"))
        conn.execute(text(f"CREATE VIRTUAL TABLE {fts} USING fts5(text, content='', "
                          f"tokenize='{fulltext.SQLITE_TOKENIZE}')"))
        for i, t in conn.execute(text("SELECT id, text FROM documents")).all():
            conn.execute(text(f"INSERT INTO {fts} (rowid, text) VALUES (:i, :w)"),
                         {"i": i, "w": words.search_text(t)})
        conn.execute(text("UPDATE schema_info SET version = 13"))
    db.dispose()
    db = Database(url)  # upgraded on opening
    with db.reader() as conn:
        found = fulltext.lexical_search(conn, corpus_id, "Dateien", 10, stem_languages=("de",))
    assert len(found) == 2
    with db.session() as s:  # the rebuilt table takes deletes as a new one does
        delete_by_external_id(s, repo.get_or_create_corpus(s, "de", "m"), ["cp", "tar"])
    with db.reader() as conn:
        assert fulltext.lexical_search(conn, corpus_id, "Dateien", 10,
                                       stem_languages=("de",)) == []
        conn.execute(text(f"INSERT INTO {fts} ({fts}) VALUES ('integrity-check')"))
    db.dispose()


# ---- search() and what a hit shows ----------------------------------------------------------
def pages_corpus(app, name: str = "pages") -> None:
    csv = pd.DataFrame([{"id": i, "text": t} for i, t in PAGES]).to_csv(index=False).encode()
    summary = upload(app, read_table(csv, f"{name}.csv"), name)
    assert run_until_done(app, summary.job_id).status == "succeeded"


def test_search_finds_other_forms_of_a_word_in_the_corpus_languages_and_marks_them(app):
    from searchapp.context import App

    pages_corpus(app)
    handle = open_corpus(app, "pages")
    assert stem_languages(app, handle) == ("de", "es")
    # a query's words are stemmed in the corpus' language it is written in; English: none
    assert query_stem_languages(app, handle, "Verzeichnisse auflisten") == ("de",)
    assert query_stem_languages(app, handle, "eliminar ficheros") == ("es",)
    assert query_stem_languages(app, handle, "list directory contents") == ()
    assert query_stem_languages(app, handle, "1234") == ("de", "es")  # not told: all
    assert query_stem_languages(app, handle, "directories") == ("de", "es")  # one word: all
    hits = search(app, "pages", "Verzeichnisse", k=5, mode="lexical")
    assert {h.id for h in hits} == {"cp", "ls"}
    cp = next(h for h in hits if h.id == "cp")
    assert "«Verzeichnis»" in cp.marked_snippet
    assert {h.id for h in search(app, "pages", "archivos", k=5, mode="lexical")} == \
        {"gzip", "tar"}  # archivo, Archiv
    assert [h.id for h in search(app, "pages", "eliminar", k=5, mode="lexical")] == ["rm"]
    off = App(dataclasses.replace(app.settings, search_stems=False))
    try:  # the same index searched by the words as written only
        assert {h.id for h in search(off, "pages", "Verzeichnisse", k=5, mode="lexical")} \
            == {"ls"}
        assert search(off, "pages", "eliminar", k=5, mode="lexical") == []
    finally:
        off.db.dispose()


def test_a_snippet_marks_the_words_of_a_query_word_stem_in_the_text_language():
    sentence = "Die Datei und die Dateien, nicht aber das Datum."
    assert word_spans(sentence, ["dateien"]) == [(18, 25)]  # the English way: one form
    assert word_spans(sentence, ["dateien"], "de") == [(4, 9), (18, 25)]
    assert word_spans(sentence, ["dateien"], "en") == [(18, 25)]  # English: as before
    assert make_snippet(sentence, ["datei"], language="de").marked() == \
        "Die «Datei» und die «Dateien», nicht aber das Datum."


def test_a_shard_finds_other_forms_of_a_word_as_the_app_index_does(tmp_path):
    from searchapp.search.shards.shard_words import ShardWords, merged

    db = Database(f"sqlite:///{tmp_path / 'app.db'}")
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, "de", "m")
        repo.add_documents(s, corpus, [repo.NewDocument(i, t) for i, t in PAGES])
        corpus_id = corpus.id
    with db.reader() as conn:
        rows = [(int(i), t) for i, t in
                conn.execute(text("SELECT id, text FROM documents ORDER BY id"))]
    shard = ShardWords(corpus_id=corpus_id)
    shard.add(rows)
    for query in ("Dateien", "Verzeichnis Quellen", "eliminar ficheros"):
        languages = ("de", "es")  # one shard holding the corpus: the app's scores exactly
        with db.reader() as conn:
            app_top = fulltext.lexical_search(conn, corpus_id, query, 5, stem_languages=languages)
        shard_top = merged([shard.candidates(query, 5, 1, languages)], 5)
        assert [(d, round(x, 6)) for d, x in shard_top] == \
            [(d, round(x, 6)) for d, x in app_top], query
    ids = {external: i for (i, _), (external, _) in zip(rows, PAGES, strict=True)}
    assert sorted(shard.candidates("Dateien", 5, stem_languages=("de",))["parts"]) == \
        sorted([ids["cp"], ids["tar"]])
    assert sorted(shard.candidates("Dateien", 5)["parts"]) == [ids["tar"]]
    shard.delete([ids["cp"]])
    assert [d for d, _ in shard.top("Dateien", 5, stem_languages=("de",))] == [ids["tar"]]
    db.dispose()


def test_postgresql_finds_other_forms_of_a_word_by_their_stems(postgres_url):
    db = Database(postgres_url)
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, "de", "m")
        repo.add_documents(s, corpus, [repo.NewDocument(i, t) for i, t in PAGES])
        corpus_id = corpus.id
    with db.reader() as conn:
        names = dict(conn.execute(text("SELECT id, external_id FROM documents")).all())
        found = fulltext.lexical_search(conn, corpus_id, "eliminar", 10, stem_languages=("es",))
        assert [names[i] for i, _ in found] == ["rm"]  # Elimina
        assert fulltext.lexical_search(conn, corpus_id, "eliminar", 10) == []
    db.dispose()
