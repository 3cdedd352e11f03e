"""What looking up a query's words in a multilingual corpus' other languages costs a hybrid search
(``search.translated_words``), against the same search with the words as typed, same run.

Corpus: every German manual page installed by ``manpages-de`` (``/usr/share/man/de/man*``),
each page's text (the roff source's text, requests and escapes removed, first ``PAGE_CHARS``
characters), embedded with ``use-multilingual-v3`` into SQLite through the app's upload and
worker. Queries: the English NAME summaries of the man1 pages (``languages.py``' queries),
each searched in hybrid mode, in turn, by two Apps on the same data folder: one with the translation
on (the default), one with ``SEARCHAPP_TRANSLATE_WORDS=0``. Reported: the corpus' vocabulary
and word-table sizes, the table's first build (on the first hybrid search), p50/p99 of a
search each way and their ratio, and the translate stage's own p50, per round: round 1
meets every query for the first time, round 2 repeats them (each word's neighbours and the
query vectors are then kept).

Run:  PYTHONPATH=. OMP_NUM_THREADS=2 .venv/bin/python benchmarks/translated_words_speed.py
Writes benchmarks/results/translated_words_speed.json.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULT = ROOT / "benchmarks" / "results" / "translated_words_speed.json"
MODEL = "use-multilingual-v3"
PAGE_CHARS = 4000
ROUNDS = 2  # each query searched this many times each way, alternating (the first warms)


def german_pages() -> list[dict]:
    """Every German page's text (id: its file name)."""
    import languages

    out = []
    for path in sorted(Path("/usr/share/man/de").glob("man*/*")):
        try:
            raw = path.read_bytes()
            roff = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode(
                "utf-8", "replace")
        except (OSError, EOFError):
            continue
        lines = [languages._text_line(line) for line in roff.splitlines()]
        text = " ".join(line for line in lines if line).strip()[:PAGE_CHARS]
        if text:
            out.append({"id": path.name, "text": text})
    return out


def timed(app, corpus: str, query: str) -> tuple[float, float]:
    """(ms of one hybrid search, ms of its translate stage)."""
    from searchapp.base.timing import StageTimes
    from searchapp.search.service import search

    times = StageTimes()
    started = time.perf_counter()
    search(app, corpus, query, k=10, mode="hybrid", times=times)
    stages = times.ms()
    return (time.perf_counter() - started) * 1000, float(stages.get("translate", 0.0))


def _percentiles(ms: np.ndarray) -> dict:
    return {"p50": round(float(np.median(ms)), 2), "p99": round(float(np.percentile(ms, 99)), 2)}


def main() -> None:
    import languages

    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.intake.table import Table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work
    from searchapp.search import translated_words
    from searchapp.store import vocabulary
    from searchapp.vectors.handle import open_corpus

    pages = german_pages()
    queries = [p.summary for p in languages.read_language("en").values()][:300]
    with tempfile.TemporaryDirectory(prefix="bench-translate-") as data:
        env = {"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}
        app = App(Settings.from_env(env))
        started = time.perf_counter()
        upload(app, Table.from_records(pages, lambda n: f"row {n}", fmt="csv"), "de",
               text_column="text", id_column="id", model=MODEL)
        work(app, stop_when_idle=True)
        embed_s = time.perf_counter() - started
        off = App(Settings.from_env({**env, "SEARCHAPP_TRANSLATE_WORDS": "0"}))
        handle = open_corpus(app, "de")
        with app.db.reader() as conn:
            vocab = len(vocabulary.words(conn, handle.corpus_id))
        started = time.perf_counter()
        table = translated_words.table_for(app, handle)
        build_s = time.perf_counter() - started
        timed(off, "de", queries[0])  # both warm
        rounds = []  # per round: (translated ms, stage ms, as typed ms) per query
        for _ in range(ROUNDS):
            one = []
            for q in queries:
                total, stage = timed(app, "de", q)
                one.append((total, stage, timed(off, "de", q)[0]))
            rounds.append(np.array(one))
        app.db.dispose()
        off.db.dispose()
    result = {
        "corpus": f"manpages-de, all sections: {len(pages)} pages, first {PAGE_CHARS} characters",
        "model": MODEL, "queries": len(queries), "rounds": ROUNDS,
        "embed_seconds": round(embed_s, 1), "vocabulary_words": vocab,
        "table_words": len(table.words), "table_mb": round(table.vectors.nbytes / 2**20, 1),
        "table_build_seconds": round(build_s, 2),
        # round 1: every query new to both (each word's neighbours computed the first time it
        # is met); later rounds: the same queries again (the neighbours and query vectors kept)
        "per_round": [{"round": i + 1,
                       "hybrid_words_as_typed_ms": _percentiles(r[:, 2]),
                       "hybrid_translated_ms": _percentiles(r[:, 0]),
                       "p50_ratio": round(float(np.median(r[:, 0]) / np.median(r[:, 2])), 3),
                       "translate_stage_p50_ms": round(float(np.median(r[:, 1])), 2)}
                      for i, r in enumerate(rounds)],
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
    }
    print(json.dumps(result, indent=1))
    RESULT.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
