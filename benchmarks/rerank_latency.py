"""The time reranking adds to a search: 30 candidates rescored by the corpus' reranker.

A small app (the first ``--docs`` documents of ``benchmarks/ir_sections.py``'s PostgreSQL
manual collection, cached under ``benchmarks/.cache/rerank-latency-app``) gets a reranker
of the default shape attached (its weights do not change its cost: an untrained head on
the bundled encoder's layers). For each test query, in the same run and interleaved:
``search(k=10)`` (no reranking) and ``search(k=10, rerank=True)`` (30 candidates
searched, rescored in one batch, the 10 best kept); p50/p95 of each and of the
difference (the added time). Then the rescoring alone (``rerank_hits`` on the same 30
hits) for other shapes: layers kept, tokens per pair, float32 (torch) or int8 (the
reranker's CPU path: ONNX Runtime's fused int8 graph where its logits stay close, else
torch's dynamic int8; ``*_path`` names which ran), and how far int8 moves the scores
(largest |logit difference|, the first 10 kept in the same order). Torch and ONNX Runtime
run on ``--threads`` threads (2: the budget is for 2 CPU cores).

Usage:
    python benchmarks/ir_sections.py
    PYTHONPATH=. python benchmarks/rerank_latency.py [--queries 60 --docs 150]
Results: benchmarks/results/rerank_latency.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / ".cache" / "pg-sections"
APP = ROOT / "benchmarks" / ".cache" / "rerank-latency-app"
CORPUS = "pg"
SHAPES = [(6, 128), (6, 64), (3, 128), (3, 64), (2, 64)]  # (layers, tokens per pair)


def make_app(folder: Path, docs: int):
    import pandas as pd

    os.environ["SEARCHAPP_DATA_DIR"] = str(folder)
    from searchapp.context import App
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done
    from searchapp.store import repo

    app = App()
    with app.db.session() as s:
        if CORPUS in repo.corpus_names(s):
            return app
    table = pd.read_csv(DATA / "corpus.csv", keep_default_na=False).head(docs)
    csv = table.to_csv(index=False).encode()
    job = run_until_done(app, upload(app, read_table(csv, "corpus.csv"), CORPUS).job_id)
    assert job.status == "succeeded", job.error
    return app


def queries(n: int) -> list[str]:
    lines = (DATA / "test-queries.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines[:n]]


def ms(values: list[float]) -> dict:
    a = np.array(values) * 1000
    return {"p50": round(float(np.percentile(a, 50)), 1),
            "p95": round(float(np.percentile(a, 95)), 1), "n": len(a)}


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def attach_default(app):
    from searchapp.training.reranker import RerankerConfig, keep, new_cross_encoder
    from searchapp.vectors.handle import open_corpus

    handle = open_corpus(app, CORPUS)
    config = RerankerConfig()
    keep(app, handle, new_cross_encoder(app, handle, config), "latency-rr", {})
    return handle, config


def end_to_end(app, texts: list[str]) -> dict:
    from searchapp.search import rerank
    from searchapp.search.service import search

    plain, reranked = [], []
    for q in texts[:3]:  # warm up: models loaded, caches filled
        search(app, CORPUS, q, k=10, rerank=True)
    for q in texts:
        plain.append(timed(lambda q=q: search(app, CORPUS, q, k=10)))
        reranked.append(timed(lambda q=q: search(app, CORPUS, q, k=10, rerank=True)))
    added = [b - a for a, b in zip(plain, reranked, strict=True)]
    path = rerank.attached(app, CORPUS).path
    return {"no_reranking": ms(plain), "reranking": ms(reranked), "added": ms(added),
            "path": path}


def shapes(app, handle, texts: list[str]) -> list[dict]:
    from searchapp.search import rerank
    from searchapp.search.service import search
    from searchapp.training.reranker import RerankerConfig, new_cross_encoder

    hits = [search(app, CORPUS, q, k=rerank.DEPTH) for q in texts]
    out = []
    for layers, tokens in SHAPES:
        model = new_cross_encoder(app, handle, RerankerConfig(layers=layers, max_length=tokens))
        row = {"layers": layers, "tokens": tokens}
        for quantized in (False, True):
            scorer = rerank.Reranker(model, quantized=quantized)
            rerank.rerank_hits(scorer, texts[0], hits[0], 10)
            row["int8" if quantized else "float32"] = ms(
                [timed(lambda q=q, h=h, s=scorer: rerank.rerank_hits(s, q, h, 10))
                 for q, h in zip(texts, hits, strict=True)])
            row["int8_path" if quantized else "float32_path"] = scorer.path
        row["int8_vs_float32"] = exactness(model, texts, hits)
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def exactness(model, texts: list[str], hits: list) -> dict:
    from searchapp.search import rerank

    exact, fast = rerank.Reranker(model, False), rerank.Reranker(model, True)
    worst, same = 0.0, 0
    for q, h in zip(texts, hits, strict=True):
        passages = [rerank.passage_text(x) for x in h]
        a, b = exact.scores(q, passages), fast.scores(q, passages)
        worst = max(worst, float(np.abs(a - b).max()))
        same += int(list(np.argsort(-a)[:10]) == list(np.argsort(-b)[:10]))
    return {"max_abs_logit_difference": round(worst, 4), "same_top10_order": same,
            "queries": len(texts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--docs", type=int, default=150)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="rerank_latency.json", help="file in results/")
    parser.add_argument("--no-shapes", action="store_true", help="the default shape only")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    app = make_app(APP, args.docs)
    texts = queries(args.queries)
    handle, config = attach_default(app)
    report = {"machine": platform.processor() or platform.machine(), "threads": args.threads,
              "load_average": os.getloadavg(), "candidates": 30, "queries": len(texts),
              "default": {"layers": config.layers, "tokens": config.max_length, "int8": True},
              "search_k10": end_to_end(app, texts)}
    print(json.dumps(report["search_k10"]), flush=True)
    if not args.no_shapes:
        report["rescoring_alone"] = shapes(app, handle, texts)
    report["load_average_after"] = os.getloadavg()
    out = ROOT / "benchmarks" / "results" / args.out
    out.write_text(json.dumps(report, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
