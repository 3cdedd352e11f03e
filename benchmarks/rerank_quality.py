"""The reranker's quality on a real collection: hybrid nDCG@10 on separate test queries
without and with reranking, for N = 100, 300, 900 query judgements.

Data: ``benchmarks/ir_sections.py`` (Debian's PostgreSQL manual: section headings as
queries, their sections as the documents; 1,764 documents, 1,015 training queries, 300
test queries). The corpus is ingested once into an app cached under
``benchmarks/.cache/rerank-app`` (reused by later runs). For each N the corpus'
judgements become exactly the first N rows of ``judgements.csv`` (what ``judge import``
reads); ``train_reranker`` (the product's function: its own held-out fifth and verdict)
trains on them; then the 300 test queries, never judged, are searched (hybrid, first 30
candidates) and scored as searched and as reranked by that N's reranker (whether the
verdict kept it or not): nDCG@10 with bootstrap 95% intervals and the paired difference.
Torch runs on ``--threads`` threads (1 on the shared 2-core machine).

Usage:
    python benchmarks/ir_sections.py
    PYTHONPATH=. python benchmarks/rerank_quality.py --ns 100,300 [--max-steps S]
Results: benchmarks/results/rerank_quality[_SUFFIX].json (rewritten after each N).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / ".cache" / "pg-sections"
APP = ROOT / "benchmarks" / ".cache" / "rerank-app"
CORPUS = "pg"


def make_app(folder: Path):
    os.environ["SEARCHAPP_DATA_DIR"] = str(folder)
    from searchapp.context import App

    return App()


def ingest(app) -> float:
    """Upload and embed corpus.csv unless the cached app has it already; the seconds taken."""
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done
    from searchapp.store import repo

    with app.db.session() as s:
        if CORPUS in repo.corpus_names(s):
            return 0.0
    started = time.monotonic()
    table = read_table((DATA / "corpus.csv").read_bytes(), "corpus.csv")
    job = run_until_done(app, upload(app, table, CORPUS).job_id)
    assert job.status == "succeeded", job.error
    return time.monotonic() - started


def set_judgements(app, n: int) -> None:
    """The corpus' judgements become exactly the first ``n`` rows of judgements.csv."""
    from searchapp.judgements import service as judgements

    for j in judgements.list_judgements(app, CORPUS):
        judgements.remove(app, CORPUS, j.id)
    with open(DATA / "judgements.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    lines = ["query,doc_id,label"] + [",".join(_quoted(c) for c in row) for row in rows[1:n + 1]]
    judgements.import_csv(app, CORPUS, ("\n".join(lines) + "\n").encode(), "first-n.csv")


def _quoted(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"' if any(c in cell for c in ',"\n') else cell


def test_items():
    from searchapp.evaluation.judged import from_files

    queries = {}
    for line in (DATA / "test-queries.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        queries[row["_id"]] = row["text"]
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "test-qrels.tsv").read_text("utf-8").splitlines()[1:]:
        q, d, g = line.split("\t")
        qrels.setdefault(q, {})[d] = int(g)
    return from_files(queries, qrels)


def test_hits(app, items) -> list:
    from searchapp.search.service import search

    return [search(app, CORPUS, q.query, k=30) for q in items.queries]


def test_scores(items, hits, scorer=None) -> np.ndarray:
    from searchapp.evaluation.ranking import query_metrics
    from searchapp.search.rerank import rerank_hits

    out = []
    for q, found in zip(items.queries, hits, strict=True):
        order = found if scorer is None else rerank_hits(scorer, q.query, found, len(found))
        out.append(query_metrics([h.id for h in order], q.grades)["ndcg@10"])
    return np.array(out)


def one_n(app, n: int, items, hits, base: np.ndarray, args) -> dict:
    from searchapp.evaluation.bootstrap import mean_interval, paired_mean_difference
    from searchapp.training import holdout
    from searchapp.training.judged_items import corpus_items
    from searchapp.training.reranker import RerankerConfig, train_reranker

    set_judgements(app, n)
    train, held = holdout.split(corpus_items(app, CORPUS))
    config = RerankerConfig(layers=args.layers, max_length=args.max_length,
                            max_steps=args.max_steps, epochs=args.epochs)
    started = time.monotonic()
    result = train_reranker(app, CORPUS, train, held, name=f"pg-rr-{n}", config=config)
    minutes = (time.monotonic() - started) / 60
    started = time.monotonic()
    reranked = test_scores(items, hits, result.scorer)
    return {"n": n, "train_queries": len(train.queries), "held_out_queries": len(held.queries),
            "result": result.as_dict(), "train_minutes": round(minutes, 2),
            "test_rerank_seconds": round(time.monotonic() - started, 1),
            "test_hybrid": mean_interval(base).scaled(),
            "test_reranked": mean_interval(reranked).scaled(),
            "test_difference": paired_mean_difference(base, reranked).scaled()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ns", default="100,300,900")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--suffix", default="")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    app = make_app(APP)
    out = ROOT / "benchmarks" / "results" / f"rerank_quality{args.suffix}.json"
    report = {"machine": platform.processor() or platform.machine(), "threads": args.threads,
              "args": vars(args), "ingest_seconds": round(ingest(app), 1), "runs": []}
    items = test_items()
    hits = test_hits(app, items)
    base = test_scores(items, hits)
    for n in [int(x) for x in args.ns.split(",")]:
        report["runs"].append(one_n(app, n, items, hits, base, args))
        out.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
        print(json.dumps(report["runs"][-1], indent=1), flush=True)


if __name__ == "__main__":
    main()
