"""Suggestions as you type: p50/p95 of ``search.suggest.suggest`` at 10,000 and 1,000,000
documents, against a plain SQL range query on an indexed column (the peer), same data,
same prefixes, same run.

The corpus is synthetic, written straight into SQLite with ``executemany`` (not through
the embed path; suggestions read no vector): titles of 2-9 words drawn from a Zipf
vocabulary of 30,000 made-up words and the 60 commonest English words, a quarter of the
documents without a title (their first line is read instead), and 1-4 section headings
each from 3,000 headings drawn Zipf-wise (plus a document-specific one in one of five).
Prefixes are real: 2,000 per size, each the first 1-12 characters of a random
title, heading or phrase word start of the stored data (with a user history of 50 queries).

``suggest()`` is timed whole: the corpus' generation read, the user's history read,
the in-memory lookup. The peer holds exactly the index's entries (folded text, text,
weight; a phrase's later-word entries too) in a table with an index on the folded
text and answers ``WHERE folded >= :p AND folded < :p || x'f4' ORDER BY weight DESC
LIMIT 8``. The build (the first call's read of the whole corpus) is timed and its
memory measured (RSS before and after).

Run:  PYTHONPATH=. .venv/bin/python benchmarks/suggestions_latency.py [--sizes 10000 1000000]
Writes benchmarks/results/suggestions_latency.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import machine  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
COMMON = tuple("""
the a of to and in for on with how is your from by at an not can this what when
do why use using set up new all my one it be are as or into out about after
before more get make first""".split())  # noqa: SIM905
SYLLABLES = tuple("""
ka to ri mo sen port lin dex ser ver con fig net work data base log in stal
reset pass word back up sync file fold er clus ter mod el vec tor que ry tra in
cach e ro ute pro xy gra ph ta ble sch ema""".split())  # noqa: SIM905


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(ms: list[float]) -> dict:
    ordered = sorted(ms)
    return {"p50_ms": round(statistics.median(ordered), 3),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
            "max_ms": round(ordered[-1], 3), "n": len(ordered)}


class Words:
    """A Zipf vocabulary of made-up words, the common English words mixed in."""

    def __init__(self, rng: random.Random, size: int = 30_000):
        seen: dict[str, None] = {}
        while len(seen) < size:
            seen.setdefault("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))))
        self.vocab = list(seen)
        weights = [1 / (rank + 1) ** 1.05 for rank in range(size)]
        self.cum = list(_accumulate(weights))
        self.rng = rng

    def phrase(self, low: int, high: int) -> str:
        n = self.rng.randint(low, high)
        out = []
        for i in range(n):
            if 0 < i < n - 1 and self.rng.random() < 0.3:
                out.append(self.rng.choice(COMMON))
            else:
                out.append(self.rng.choices(self.vocab, cum_weights=self.cum)[0])
        text = " ".join(out)
        return text[:1].upper() + text[1:]


def _accumulate(values):
    total = 0.0
    for v in values:
        total += v
        yield total


def write_corpus(app, name: str, docs: int, seed: int = 7) -> tuple[float, list[str]]:
    """The synthetic corpus written with executemany; (seconds, sample texts for prefixes)."""
    from sqlalchemy import text

    from searchapp.store import repo

    rng = random.Random(seed)
    words = Words(rng)
    headings = [words.phrase(1, 4) for _ in range(3_000)]
    hcum = list(_accumulate(1 / (r + 1) for r in range(len(headings))))
    with app.db.session() as s:
        corpus_id = repo.get_or_create_corpus(s, name, "all-MiniLM-L6-v2").id
    samples: list[str] = []
    started = time.perf_counter()
    batch = 50_000
    with app.db.engine.begin() as conn:
        raw = conn.connection.driver_connection
        next_id = (raw.execute("SELECT coalesce(max(id), 0) FROM documents").fetchone()[0]) + 1
        for at in range(0, docs, batch):
            rows, layouts = [], []
            for i in range(at, min(docs, at + batch)):
                title = words.phrase(2, 9)
                first = words.phrase(5, 14)
                heads = rng.choices(headings, cum_weights=hcum, k=rng.randint(1, 4))
                if rng.random() < 0.2:
                    heads.append(words.phrase(2, 5))
                meta = {"title": title} if rng.random() < 0.75 else {}
                body = f"{first}\n{title} {' '.join(heads)}"
                rows.append((next_id, corpus_id, f"doc-{i}", body, json.dumps(meta),
                             f"{i:064x}", "2026-01-01 00:00:00", "files"))
                layouts.append((next_id, json.dumps(
                    [[0, len(first), None, heads[0]]] + [[0, 1, None, f"{heads[0]} > {h}"]
                                                         for h in heads[1:]])))
                if len(samples) < 20_000 and rng.random() < 0.05:
                    samples.extend([title, first, *heads])
                next_id += 1
            raw.executemany("INSERT INTO documents (id, corpus_id, external_id, text, meta, "
                            "content_hash, created_at, source) VALUES (?,?,?,?,?,?,?,?)", rows)
            raw.executemany("INSERT INTO document_layouts (document_id, parts) VALUES (?,?)",
                            layouts)
        conn.execute(text("UPDATE corpora SET document_count = :n, generation = generation + 1 "
                          "WHERE id = :c"), {"n": docs, "c": corpus_id})
    return time.perf_counter() - started, samples


def prefixes(rng: random.Random, samples: list[str], n: int) -> list[str]:
    """Real prefixes: 1-12 characters from a word start of a stored title/heading/line."""
    out = []
    while len(out) < n:
        sample = rng.choice(samples)
        starts = [0] + [i + 1 for i, c in enumerate(sample) if c == " "]
        at = rng.choice(starts[:3])
        out.append(sample[at:at + rng.randint(1, 12)])
    return out


def peer_table(app, index) -> float:
    """The index's entries in a table with an index on the folded text; seconds to fill."""
    started = time.perf_counter()
    with app.db.engine.begin() as conn:
        raw = conn.connection.driver_connection
        raw.execute("DROP TABLE IF EXISTS peer_completions")
        raw.execute("CREATE TABLE peer_completions (folded TEXT NOT NULL, text TEXT NOT NULL, "
                    "kind TEXT NOT NULL, weight INTEGER NOT NULL)")
        raw.executemany("INSERT INTO peer_completions VALUES (?,?,?,?)", index.entries())
        raw.execute("CREATE INDEX ix_peer_folded ON peer_completions (folded)")
    return time.perf_counter() - started


def peer_query(app, folded: str) -> list:
    with app.db.engine.connect() as conn:
        raw = conn.connection.driver_connection
        return raw.execute("SELECT text, kind, weight FROM peer_completions WHERE folded >= ? "
                           "AND folded < ? ORDER BY weight DESC LIMIT 8",
                           (folded, folded + "\U0010ffff")).fetchall()


def measure(docs: int, queries: int) -> dict:
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.search import history
    from searchapp.search.suggest import MEMO_KEY, suggest
    from searchapp.store.search_history import fold

    with tempfile.TemporaryDirectory() as tmp:
        app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": tmp}))
        log(f"{docs:,} documents: writing")
        write_s, samples = write_corpus(app, "bench", docs)
        rng = random.Random(docs)
        for q in rng.sample(samples, 50):
            history.remember(app, "bench", "local", q.lower())
        log(f"written in {write_s:.1f} s; building the completions (first call)")
        before = rss_mb()
        started = time.perf_counter()
        suggest(app, "bench", "a", user="local")  # a large corpus: built on a thread
        for builder in [t for t in threading.enumerate() if t.name.startswith("completions-")]:
            builder.join()
        build_s = time.perf_counter() - started
        grown = rss_mb() - before
        index = app.memo.latest(1, MEMO_KEY)[1]
        log(f"built in {build_s:.1f} s, +{grown:.0f} MB RSS, {len(index):,} completions")
        asked = prefixes(rng, samples, queries)
        peer_s = peer_table(app, index)
        ours, peer, empty = [], [], 0
        for i, prefix in enumerate(asked):
            for who in ((0, 1) if i % 2 else (1, 0)):  # alternate who goes first
                started = time.perf_counter()
                if who == 0:
                    empty += not suggest(app, "bench", prefix, user="local")
                    ours.append((time.perf_counter() - started) * 1000)
                else:
                    peer_query(app, fold(prefix))
                    peer.append((time.perf_counter() - started) * 1000)
        ours_p, peer_p = pct(ours), pct(peer)
        result = {"documents": docs, "write_s": round(write_s, 1),
                  "build_s": round(build_s, 2), "build_rss_mb": round(grown),
                  "completions": len(index), "peer_fill_s": round(peer_s, 1),
                  "prefixes": queries, "prefixes_without_suggestion": empty,
                  "suggest": ours_p, "peer_sql_range": peer_p,
                  "ratio_p50": round(peer_p["p50_ms"] / ours_p["p50_ms"], 1),
                  "ratio_p95": round(peer_p["p95_ms"] / ours_p["p95_ms"], 1)}
        log(json.dumps(result))
        app.db.dispose()
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=RESULTS / "suggestions_latency.json")
    args = parser.parse_args()
    runs = [measure(n, args.queries) for n in args.sizes]
    args.out.write_text(json.dumps({"machine": machine(), "runs": runs}, indent=2) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
