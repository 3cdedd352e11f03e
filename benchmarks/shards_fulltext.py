"""The lexical side of a sharded search: PostgreSQL's full text (one query on the shared
database, what the app does on PostgreSQL) against each shard's own full text
(``search.shards.shard_words``: an FTS5 file per shard, BM25, the top n of every shard merged).

1. Quality, on real manuals with real questions: Debian's git-doc pages with the
   project's question files (``benchmarks/data/git_doc_questions*.tsv``) and the
   PostgreSQL manual's pages with their section headings as questions
   (``pg_pages.py``: the heading removed from its page). Every page is one
   document, its text as the app's reader gives it. Lexical MRR@10 and success@5
   with 95% bootstrap intervals for: PostgreSQL's full text (``ts_rank_cd``),
   and the shards' (1, 4, 8 shards by the app's hash placement; 1 shard ranks as
   the app on SQLite does), merged as the fan-out merges them (candidates scored by
   the whole corpus' statistics) and, for comparison, by each shard's own BM25.
2. Latency as the corpus grows: documents of two of the manuals' paragraphs each
   (drawn at random: distinct texts up to ``--scale`` documents), stored through
   the app's store in a throwaway PostgreSQL server; the same questions as
   queries, 50 results each (the depth a hybrid search asks for): PostgreSQL's
   p50/p99 against the shards' (each shard in a thread of this process, asked
   in parallel as the fan-out asks its replicas; a Ray call adds about 1 ms,
   ``shards_ray.json``). And how far each shard's own BM25 statistics move the
   merged top 10 from one index's: the share of 1 shard's top 10 that N shards
   return.

    PYTHONPATH=. .venv/bin/python benchmarks/shards_fulltext.py --scale 100000,400000

Writes benchmarks/results/shards_fulltext.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.shards_ray import cpu_model

RESULTS = Path(__file__).parent / "results" / "shards_fulltext.json"
GIT_MANUAL = Path("/usr/share/doc/git-doc")
GIT_QUESTIONS = sorted((Path(__file__).parent / "data").glob("git_doc_questions*.tsv"))
SHARDS = (1, 4, 8)
DEPTH = 50  # results a hybrid search asks of the lexical side
QUERY_STEP = 3  # the latency part asks every third question (PostgreSQL takes seconds each)
BATCH = 20_000


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- input ---------------------------------------------------------------------------------
def collections(work: Path) -> list[tuple[str, dict[str, str], list[tuple[str, set[str]]]]]:
    """(name, {page: text}, [(question, {relevant pages})]) of each manual installed."""
    from retrieval_documents import chosen_files, page_texts, read_questions

    out = []
    if GIT_MANUAL.is_dir():
        names = chosen_files(GIT_MANUAL)
        questions = [q for path in GIT_QUESTIONS for q in read_questions(path)]
        out.append(("git-doc", page_texts(GIT_MANUAL, names), questions))
    from pg_pages import MANUAL, build

    if MANUAL.is_dir():
        folder, names, questions = build(work / "pg-pages")
        texts = {n: t for n, t in page_texts_safe(folder, names).items() if t.strip()}
        out.append(("postgresql-doc", texts, [(q, r) for q, r in questions if r & texts.keys()]))
    if not out:
        raise SystemExit("No manual installed: apt-get install git-doc postgresql-doc-15")
    return out


def page_texts_safe(folder: Path, names: list[str]) -> dict[str, str]:
    from retrieval_documents import page_texts

    from searchapp.errors import SearchAppError

    out = {}
    for name in names:
        try:
            out.update(page_texts(folder, [name]))
        except SearchAppError:
            continue
    return out


# ---- the two lexical sides --------------------------------------------------------------------
def store(app, corpus: str, texts: list[tuple[str, str]]) -> tuple[int, np.ndarray]:
    """Documents (external id, text) stored through the app's store; (corpus id, ids (n,))."""
    from searchapp.store import repo

    model = app.settings.model
    ids: list[int] = []
    for start in range(0, len(texts), BATCH):
        part = texts[start:start + BATCH]
        with app.db.session() as s:
            c = repo.get_or_create_corpus(s, corpus, model)
            repo.add_documents(s, c, [repo.NewDocument(e, t) for e, t in part])
            corpus_id = c.id
    with app.db.session() as s:
        by_external = {e: i for i, e in repo.external_ids(s, corpus_id).items()}
    ids = [by_external[e] for e, _ in texts]
    return corpus_id, np.asarray(ids, np.int64)


def database_top(app, corpus_id: int, query: str, n: int) -> list[int]:
    from searchapp.store import fulltext

    with app.db.reader() as conn:
        return [d for d, _ in fulltext.lexical_search(conn, corpus_id, query, n)]


class ShardsWords:
    """``shards`` ShardWords holding the documents by the app's placement, asked in parallel."""

    def __init__(self, corpus_id: int, ids: np.ndarray, texts: list[str], shards: int):
        from searchapp.search.shards.shard_words import ShardWords
        from searchapp.store.shard_rows import shard_of

        self.parts = [ShardWords(corpus_id) for _ in range(shards)]
        place = shard_of(ids, shards)
        started = time.perf_counter()
        for number, words in enumerate(self.parts):
            rows = [(int(ids[k]), texts[k]) for k in np.flatnonzero(place == number)]
            for start in range(0, len(rows), BATCH):
                words.add(rows[start:start + BATCH])
        self.build_seconds = time.perf_counter() - started
        self.pool = ThreadPoolExecutor(max_workers=shards)

    def top(self, query: str, n: int) -> list[int]:
        """As the fan-out does: every shard's candidates, scored by the corpus' statistics."""
        from searchapp.search.shards.shard_words import merged

        shards = len(self.parts)
        answers = list(self.pool.map(lambda w: w.candidates(query, n, shards), self.parts))
        return [d for d, _ in merged(answers, n)]

    def local_top(self, query: str, n: int) -> list[int]:
        """Each shard's top n by its own statistics, merged by those scores (what
        Elasticsearch's default does): for comparison."""
        shards = len(self.parts)
        answers = list(self.pool.map(lambda w: w.top(query, n, shards), self.parts))
        found = sorted((h for a in answers for h in a), key=lambda h: (-h[1], h[0]))[:n]
        return [d for d, _ in found]

    def disk_bytes(self) -> int:
        return sum(w.disk_bytes() for w in self.parts)

    def close(self) -> None:
        self.pool.shutdown()
        for w in self.parts:
            w.close()


# ---- measures -------------------------------------------------------------------------------
def quality(ranked: list[list[int]], relevant: list[set[int]], rng) -> dict:
    """MRR@10 and success@5 (percent) with 95% bootstrap intervals."""
    rr, s5 = [], []
    for found, rel in zip(ranked, relevant, strict=True):
        first = next((i + 1 for i, d in enumerate(found[:10]) if d in rel), None)
        rr.append(1 / first if first else 0.0)
        s5.append(1.0 if first and first <= 5 else 0.0)
    draws = rng.integers(0, len(rr), size=(2000, len(rr)))
    out = {}
    for name, values in (("mrr@10", np.array(rr)), ("success@5", np.array(s5))):
        lo, hi = np.percentile(values[draws].mean(axis=1), [2.5, 97.5])
        out[name] = {"value": round(100 * values.mean(), 1), "low": round(100 * lo, 1),
                     "high": round(100 * hi, 1)}
    return out


def timed(top, queries: list[str], n: int) -> dict:
    for q in queries[:10]:
        top(q, n)
    ms = []
    for q in queries:
        started = time.perf_counter()
        top(q, n)
        ms.append(1000 * (time.perf_counter() - started))
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p99_ms": round(float(np.percentile(ms, 99)), 2)}


def shared(lists: list[list[int]], reference: list[list[int]]) -> float:
    """The mean share of each reference top 10 that the other list holds too (queries
    whose reference is empty, no document holding a word of them, left out)."""
    return round(float(np.mean([len(set(a) & set(b)) / len(b)
                                for a, b in zip(lists, reference, strict=True) if b])), 3)


def quality_run(app, manuals) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for name, texts, questions in manuals:
        pages = sorted(texts)
        corpus_id, ids = store(app, name, [(p, texts[p]) for p in pages])
        by_page = dict(zip(pages, ids.tolist(), strict=True))
        relevant = [{by_page[p] for p in rel if p in by_page} for _, rel in questions]
        queries = [q for q, _ in questions]
        row = {"collection": name, "documents": len(pages), "questions": len(queries),
               "postgresql": quality([database_top(app, corpus_id, q, 10) for q in queries],
                                     relevant, rng)}
        for shards in SHARDS:
            words = ShardsWords(corpus_id, ids, [texts[p] for p in pages], shards)
            row[f"shards_{shards}"] = quality([words.top(q, 10) for q in queries], relevant,
                                              rng)
            if shards > 1:
                row[f"shards_{shards}_own_statistics"] = quality(
                    [words.local_top(q, 10) for q in queries], relevant, rng)
            words.close()
        log(f"{name}: {json.dumps(row)}")
        rows.append(row)
    return rows


def paragraphs(manuals) -> list[str]:
    """The manuals' paragraphs of at least 40 characters, in page order."""
    out = []
    for _, texts, _ in manuals:
        for page in sorted(texts):
            out += [p.strip() for p in re.split(r"\n\s*\n", texts[page]) if len(p.strip()) >= 40]
    return out


def latency_run(app, manuals, scales: list[int], shards_list: list[int]) -> list[dict]:
    base = paragraphs(manuals)
    queries = [q for _, _, qs in manuals for q, _ in qs][::QUERY_STEP]
    log(f"{len(base):,} paragraphs, {len(queries)} queries")
    rows, stored, ids, corpus_id = [], 0, np.zeros(0, np.int64), 0
    texts: list[str] = []
    rng = np.random.default_rng(0)
    for scale in scales:
        started = time.perf_counter()
        pairs = rng.integers(0, len(base), size=(scale - stored, 2))  # distinct texts: two
        more = [(f"p{stored + i}", f"{base[a]}\n\n{base[b]}")      # paragraphs each
                for i, (a, b) in enumerate(pairs.tolist())]
        corpus_id, new_ids = store(app, "paragraphs", more)
        ids, stored = np.concatenate([ids, new_ids]), scale
        texts += [t for _, t in more]
        row = {"documents": scale, "store_seconds": round(time.perf_counter() - started, 1),
               "postgresql": timed(lambda q, n, c=corpus_id: database_top(app, c, q, n),
                                   queries, DEPTH)}
        single = None  # 1 shard's top 10 of each query: BM25 over the whole corpus
        for shards in shards_list:
            words = ShardsWords(corpus_id, ids, texts, shards)
            top10 = [words.top(q, 10) for q in queries]
            single = single or top10
            own = [words.local_top(q, 10) for q in queries]
            part = {**timed(words.top, queries, DEPTH),
                    "build_seconds": round(words.build_seconds, 1),
                    "disk_mib": round(words.disk_bytes() / 2**20, 1),
                    "top10_shared_with_1_shard": shared(top10, single),
                    "top10_shared_with_1_shard_own_statistics": shared(own, single)}
            part["p50_ratio_to_postgresql"] = round(part["p50_ms"]
                                                    / row["postgresql"]["p50_ms"], 2)
            row[f"shards_{shards}"] = part
            words.close()
        log(f"{scale:,} documents: {json.dumps(row)}")
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="100000,400000",
                        help="corpus sizes for the latency part (comma list)")
    parser.add_argument("--shards", default="1,4,8", help="shard counts for the latency part")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from tests.postgres import PostgresServer

    work = Path(tempfile.mkdtemp(prefix="shards-fulltext-"))
    with PostgresServer.start() as server:
        os.environ.update({"SEARCHAPP_DATA_DIR": str(work / "data"),
                           "SEARCHAPP_DATABASE_URL": server.create_database()})
        from searchapp.context import App

        app = App()
        manuals = collections(work)
        result = {"cpu": cpu_model(), "cores": os.cpu_count(), "database": "postgresql",
                  "quality": quality_run(app, manuals)}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        result["latency"] = latency_run(app, manuals, [int(s) for s in args.scale.split(",")],
                                        [int(s) for s in args.shards.split(",")])
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
