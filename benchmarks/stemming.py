"""Stems as each language forms them: the other forms of a word found, and what it costs.

Peer: the same app with the index's ``stems`` column left empty (``base/stems.stem_stream``
patched to return '' while that corpus is stored: the index as it was before stems), searched
the same way; same pages, same queries, same run.

Collection: Debian's translated manual pages (``manpages-de``, ``-fr``, ``-es``; the DESCRIPTION
of each page of ``/usr/share/man/{de,fr,es}/man1``, read as ``benchmarks/languages.py`` reads
them), one corpus per language (``--pages`` pages, seeded sample), stored without embedding
(the words are what is measured).

1. **Other forms found.** ``--words`` (form, page) pairs per language, drawn with the seed: a
   word of 5 letters or more of the page (``w``) and another form of it (``f``, the same
   Snowball stem, a different word after the index's own porter stemming: ``Dateien`` for
   ``Datei``) that stands in some other page of the corpus, never in this one. ``f`` is
   searched by words (the app's full-text search, every hit asked for: ``found``); found
   when the page is among the hits, and in the top 10.
2. **Cost of writing.** The corpus' documents added to a fresh database (``repo.add_documents``:
   the row, the full-text index, the vocabulary) with stems and without, best of 3; and the
   bundled sample's English captions the same way (they get no stems, but their language is
   told: what every English corpus pays).
3. **Cost of a query.** Each form searched again, p50/p99 of ``search`` with and without.

Run:  PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/stemming.py
Writes benchmarks/results/stemming.json and prints the tables.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "stemming.json"
LANGUAGES = ("de", "fr", "es")
TOP = 10
MIN_LETTERS = 5
CAPTIONS = ROOT / "searchapp" / "sample" / "captions.csv.gz"


@contextmanager
def without_stems():
    """The index as it was before stems: every document's stems column empty."""
    from searchapp.base import stems

    kept = stems.stem_stream
    stems.stem_stream = lambda text: ""
    try:
        yield
    finally:
        stems.stem_stream = kept


def pages_of(lang: str, cap: int, seed: int) -> list[tuple[str, str]]:
    """(page name, DESCRIPTION text) of up to ``cap`` pages of ``lang``, seeded."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from languages import read_language

    pages = sorted(read_language(lang).values(), key=lambda p: p.name)
    random.Random(seed).shuffle(pages)
    return [(p.name, p.description) for p in pages[:cap]]


def forms(lang: str, pages: list[tuple[str, str]], n: int, seed: int) -> list[tuple[str, str]]:
    """(form, page) pairs: a form of a word of the page that the page does not hold, found
    in another page (see the module's docstring)."""
    from searchapp.base import stems
    from searchapp.base.words import fold

    porter = _porter()
    stemmer = stems.stemmer(lang)
    words_of = [set(stems.WORD.findall(fold(text).lower())) for _, text in pages]
    by_stem: dict[str, set[str]] = {}
    for held in words_of:
        for w in held:
            if len(w) >= MIN_LETTERS and w.isalpha():
                by_stem.setdefault(stemmer.stemWord(w), set()).add(w)
    pairs = []
    for (name, _), held in zip(pages, words_of, strict=True):
        for w in sorted(held):
            if len(w) < MIN_LETTERS or not w.isalpha():
                continue
            mine = {porter(x) for x in held}
            others = sorted(f for f in by_stem.get(stemmer.stemWord(w), ())
                            if f not in held and porter(f) not in mine)
            pairs += [(f, name) for f in others]
    random.Random(seed).shuffle(pairs)
    return pairs[:n]


def _porter():
    """The index's own porter stemming of a word (SQLite FTS5's tokenizer, asked directly)."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 "
                 "remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    cache: dict[str, str] = {}

    def stem(word: str) -> str:
        if word not in cache:
            conn.execute("DELETE FROM t")
            conn.execute("INSERT INTO t (x) VALUES (?)", (word,))
            cache[word] = next(iter(conn.execute("SELECT term FROM v")), ("",))[0]
        return cache[word]
    return stem


def store(app, name: str, docs: list[tuple[str, str]]) -> None:
    """A corpus of ``docs`` with their detected languages, not embedded."""
    from searchapp.base.language import document_languages
    from searchapp.store import repo

    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, app.settings.model)
        repo.add_documents(s, corpus, [repo.NewDocument(i, t, document_languages(t, None))
                                       for i, t in docs])


def found(app, corpus: str, lang: str, pairs: list[tuple[str, str]]) -> dict:
    """Share of forms whose page is among the hits, and in the top 10; each search's time.

    The app's full-text search as ``search(..., mode="lexical")`` runs it, without the
    vectors (the corpora are not embedded): ``fulltext.lexical_search`` given the query's
    stem languages as ``corpus_languages.query_stem_languages`` tells them (a single word:
    the corpus' one language)."""
    from searchapp.store import fulltext, repo

    with app.db.session() as s:
        state = repo.get_corpus(s, corpus)
        corpus_id, documents = state.id, state.document_count
    with app.db.reader() as conn:
        names = dict(conn.execute(text(
            "SELECT id, external_id FROM documents WHERE corpus_id = :c"), {"c": corpus_id}).all())
    anywhere = top = 0
    seconds = []
    for form, page in pairs:
        started = time.perf_counter()
        languages = (lang,)
        with app.db.reader() as conn:
            ids = [names[d] for d, _ in fulltext.lexical_search(
                conn, corpus_id, form, 1000, documents=documents, stem_languages=languages)]
        seconds.append(time.perf_counter() - started)
        anywhere += page in ids
        top += page in ids[:TOP]
    ms = np.array(seconds) * 1000
    return {"found": round(anywhere / len(pairs), 3), "top10": round(top / len(pairs), 3),
            "p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p99_ms": round(float(np.percentile(ms, 99)), 2)}


def write_seconds(docs: list[tuple[str, str]], stems_on: bool, repeat: int = 3) -> float:
    """Best of ``repeat``: ``docs`` added to a fresh SQLite database (row, index, vocabulary)."""
    from searchapp.store import repo
    from searchapp.store.db import Database

    best = float("inf")
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="bench-stems-write-") as folder:
            db = Database(f"sqlite:///{folder}/w.db")
            rows = [repo.NewDocument(i, t) for i, t in docs]
            started = time.perf_counter()
            if stems_on:
                _add(db, rows)
            else:
                with without_stems():
                    _add(db, rows)
            best = min(best, time.perf_counter() - started)
            db.dispose()
    return round(best, 3)


def _add(db, rows) -> None:
    from searchapp.store import repo

    with db.session() as s:
        repo.add_documents(s, repo.get_or_create_corpus(s, "w", "m"), rows)


def captions(n: int) -> list[tuple[str, str]]:
    import csv

    with gzip.open(CAPTIONS, "rt", encoding="utf-8") as f:
        rows = [r["text"] for r in csv.DictReader(f)]
    return [(f"c{i}", rows[i % len(rows)]) for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1000, help="pages per language (a sample)")
    parser.add_argument("--words", type=int, default=300, help="forms searched per language")
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--captions", type=int, default=30_000)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    from searchapp.config import Settings
    from searchapp.context import App

    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-stems-") as data:
        app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}))
        print("| language | pages | forms | found before → after | top 10 before → after "
              "| p50 ms before → after | p99 ms before → after |\n|---|---|---|---|---|---|---|")
        for lang in LANGUAGES:
            pages = pages_of(lang, args.pages, args.seed)
            pairs = forms(lang, pages, args.words, args.seed)
            with without_stems():
                store(app, f"{lang}-before", pages)
            store(app, f"{lang}-after", pages)
            for _ in range(2):  # the second round is timed warm
                before = found(app, f"{lang}-before", lang, pairs)
                after = found(app, f"{lang}-after", lang, pairs)
            row = {"language": lang, "pages": len(pages), "forms": len(pairs),
                   "examples": pairs[:5], "before": before, "after": after,
                   "write_seconds": {"before": write_seconds(pages, False),
                                     "after": write_seconds(pages, True)}}
            rows.append(row)
            print(f"| {lang} | {len(pages)} | {len(pairs)} | {before['found']:.3f} → "
                  f"{after['found']:.3f} | {before['top10']:.3f} → {after['top10']:.3f} | "
                  f"{before['p50_ms']} → {after['p50_ms']} | {before['p99_ms']} → "
                  f"{after['p99_ms']} |", flush=True)
        app.db.dispose()
    english = captions(args.captions)
    writes = {"documents": len(english), "before": write_seconds(english, False),
              "after": write_seconds(english, True)}
    writes["ratio"] = round(writes["after"] / writes["before"], 2)
    print(f"\nwriting {len(english)} English captions (row, index, vocabulary), best of 3: "
          f"{writes['before']} s without stems, {writes['after']} s with ({writes['ratio']}x)")
    for row in rows:
        w = row["write_seconds"]
        print(f"writing {row['pages']} {row['language']} pages: {w['before']} s without stems, "
              f"{w['after']} s with ({w['after'] / w['before']:.2f}x)")
    result = {"collection": "Debian manual pages, man1 DESCRIPTION sections: manpages-de, "
                            "manpages-fr, manpages-es",
              "peer": "the same index with its stems column empty (before stems)",
              "pages_per_language": args.pages, "forms_per_language": args.words,
              "seed": args.seed, "rows": rows, "english_captions_write": writes,
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
              "seconds": round(time.perf_counter() - started, 1)}
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
