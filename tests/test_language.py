"""The language of every document: told from its text, stored as ``lang`` at ingest (files
part by part with ``langs``, table rows unless the table names its own), never an error.

The long texts are Debian's translated manual pages (manpages-de, -fr, -es, -ja; the English
ones from manpages): a test that needs one is skipped, naming the package, where it is absent.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.corpora import documents as docs
from searchapp.intake.builder import to_documents
from searchapp.intake.extract import extract_file
from searchapp.intake.ingest import read_table
from searchapp.intake.language import (
    SAMPLE_CHARS,
    UNDETERMINED,
    detect,
    document_languages,
    sample,
)
from searchapp.intake.table_upload import upload

MAN = Path("/usr/share/man")
_REQUEST = re.compile(r"^[.'][A-Za-z]{1,3}\b ?")
_ESCAPE = re.compile(r"\\(f\[[^]]*]|f\(..|f.|\(..|\*\(..|\*\[[^]]*]|\*.|\[[^]]*]|.)")

# Real sentences of each language (short texts: one line of a manual, a news sentence).
SENTENCES = {
    "de": "Die Datei wird gelesen, bevor der Index neu erstellt wird.",
    "fr": "Le fichier est lu avant que l'index ne soit reconstruit.",
    "es": "El archivo se lee antes de que el índice se reconstruya.",
    "en": "The file is read before the index is rebuilt from scratch.",
    "ja": "インデックスを再構築する前にファイルを読み込みます。",
    "zh": "在重建索引之前读取文件，然后保存结果。",
    "ar": "تتم قراءة الملف قبل إعادة بناء الفهرس من البداية.",
    "ru": "Файл читается до того, как индекс будет перестроен заново.",
}


def man_text(language: str, name: str) -> str:
    """A manual page's running text (troff requests and escapes removed), or a skip."""
    folder = MAN / language if language != "en" else MAN
    path = folder / "man1" / f"{name}.1.gz"
    if not path.exists():
        package = "manpages" if language == "en" else f"manpages-{language}"
        pytest.skip(f"{path} is absent: apt-get install {package}")
    lines = gzip.decompress(path.read_bytes()).decode("utf-8", "replace").splitlines()
    kept = (_ESCAPE.sub("", _REQUEST.sub("", line)) for line in lines
            if not line.startswith(('.\\"', "'\\\"")))
    return "\n".join(line for line in kept if line.strip())


@pytest.mark.parametrize("language", sorted(SENTENCES))
def test_one_sentence_is_told_in_eight_languages_and_four_scripts(language):
    code, confidence = detect(SENTENCES[language])
    assert (code, confidence > 0.5) == (language, True)


@pytest.mark.parametrize("language", ["de", "fr", "es", "ja", "en"])
def test_a_whole_translated_manual_page_is_its_language(language):
    text = man_text(language, "ls")
    assert len(text) > 3_000 and detect(text)[0] == language


@pytest.mark.parametrize("text", ["", "   ", "Hello world", "git commit -m", "12345 67890",
                                  "OK", "::: --- :::", "ls -la /tmp"])
def test_too_little_text_is_undetermined_rather_than_a_guess(text):
    assert detect(text)[0] == UNDETERMINED


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3_000))
def test_any_text_gives_a_code_and_a_probability_never_an_error(text):
    code, confidence = detect(text)
    assert (code == UNDETERMINED or len(code) == 2) and 0.0 <= confidence <= 1.0
    meta = document_languages(text, None)
    assert set(meta) <= {"lang", "langs"} and (meta["lang"] == UNDETERMINED
                                                or len(meta["lang"]) == 2)


def test_a_long_text_costs_a_bounded_sample(tmp_path):
    text = man_text("de", "tar") * 200  # megabytes of German
    assert len(text) > 1_000_000 and detect(text)[0] == "de"
    assert len(sample(text)) <= SAMPLE_CHARS + 2 and sample(text[:500]) == text[:500]


def test_a_file_is_stored_with_its_language(tmp_path):
    path = tmp_path / "ls.txt"
    path.write_text(man_text("fr", "ls"), encoding="utf-8")
    [doc] = extract_file(str(path), "ls.txt", path.stat().st_size, None, "ab" * 32).documents
    assert doc.meta["lang"] == "fr" and "langs" not in doc.meta


def test_a_document_with_sections_in_two_languages_lists_both(tmp_path):
    german, english = man_text("de", "cp"), man_text("en", "cp")
    path = tmp_path / "cp.md"
    path.write_text(f"# Kopieren\n\n{german}\n\n# Copying\n\n{english[:len(german) // 2]}\n",
                    encoding="utf-8")
    [doc] = extract_file(str(path), "cp.md", path.stat().st_size, None, "ab" * 32).documents
    assert (doc.meta["lang"], doc.meta["langs"]) == ("de", "de,en")


def test_a_document_own_lang_from_its_front_matter_is_kept(tmp_path):
    path = tmp_path / "note.md"
    path.write_text("---\nlang: de-CH\n---\n" + SENTENCES["de"] + "\n", encoding="utf-8")
    [doc] = extract_file(str(path), "note.md", path.stat().st_size, None, "ab" * 32).documents
    assert doc.meta["lang"] == "de-CH"


def test_table_rows_are_stored_with_their_language(app):
    rows = "".join(f'{code},"{text}"\n' for code, text in sorted(SENTENCES.items()))
    upload(app, read_table(("id,text\n" + rows).encode(), "faq.csv"), "faq")
    found, missing = docs.get_many(app, "faq", sorted(SENTENCES))
    assert not missing and {d.id: d.meta["lang"] for d in found} == {c: c for c in SENTENCES}


@pytest.mark.parametrize("column", ["lang", "Language"])
def test_a_table_that_names_its_own_language_keeps_it(column):
    table = read_table(f'text,{column}\n"{SENTENCES["de"]}",German\n'.encode(), "a.csv")
    [doc], _ = to_documents(table, id_column="")
    assert doc.meta == {column: "German"}
