"""Fusion fitted per corpus, and evaluate's speed, on Debian's PostgreSQL manual.

The collection of ``benchmarks/ir_sections.py`` (1,764 sections; headings as
queries; 1,015 training and 300 test queries) is ingested once into an app under
``benchmarks/.cache/fusion-app`` (reused by later runs). Then:

1. ``evaluate`` over the 300 test queries in three modes, timed on the old path
   (``search()`` per query per mode, 100 deep, as ``evaluation.corpus.evaluate``
   did before) and on the new one (each query searched once); the per-query
   metrics of both are compared (they must be equal).
2. For N = 100, 300, 900 training judgements (the first N rows of
   ``judgements.csv``, imported with ``judge import``'s code): the fusion fit
   (timed), its held-out verdict, and hybrid nDCG@10 on the 300 test queries with
   the default fusion, the fitted candidate and the fusion in use after the fit
   (the candidate when kept), each with its 95% interval and the paired difference.

Results go to ``benchmarks/results/fusion_fit.json``.

Usage:
    python benchmarks/ir_sections.py && python benchmarks/fusion_fit.py
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / ".cache" / "pg-sections"
APP_DIR = ROOT / "benchmarks" / ".cache" / "fusion-app"
OUT = ROOT / "benchmarks" / "results" / "fusion_fit.json"
CORPUS = "pg"


def make_app():
    """The cached app (ingested once: the marker file says it finished)."""
    os.environ["SEARCHAPP_DATA_DIR"] = str(APP_DIR)
    from searchapp.context import App

    APP_DIR.mkdir(parents=True, exist_ok=True)
    app = App()
    marker = APP_DIR / "INGESTED"
    if not marker.exists():
        from searchapp.corpora.ingest import read_table
        from searchapp.corpora.service import upload
        from searchapp.jobs.worker import run_until_done

        started = time.monotonic()
        data = (DATA / "corpus.csv").read_bytes()
        job = run_until_done(app, upload(app, read_table(data, "corpus.csv"), CORPUS).job_id)
        assert job.status == "succeeded", job.error
        marker.write_text(f"{time.monotonic() - started:.1f} s\n")
    return app


def set_judgements(app, n: int) -> None:
    """The corpus' judgements become the first ``n`` rows of judgements.csv."""
    from searchapp.judgements import service as judgements

    for j in judgements.list_judgements(app, CORPUS):
        judgements.remove(app, CORPUS, j.id)
    with open(DATA / "judgements.csv", newline="") as f:
        rows = list(csv.DictReader(f))[:n]
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["query", "doc_id", "label"])
    writer.writerows([r["query"], r["id"], r["relevant"]] for r in rows)
    judgements.import_csv(app, CORPUS, text.getvalue().encode(), "judgements.csv")


def old_evaluate(app, handle, items) -> dict:
    """evaluate's queries part as it was: search() per query per mode, 100 deep."""
    from searchapp.evaluation.ranking import DEPTH, metrics_table
    from searchapp.search.service import MODES, search

    grades = [q.grades for q in items.queries]
    return {mode: metrics_table([[h.id for h in search(app, handle, q.query, k=DEPTH,
                                                       mode=mode)] for q in items.queries],
                                grades) for mode in MODES}


def timed_evaluations(app, items) -> dict:
    """Old and new evaluate over the test queries: seconds, and whether they agree."""
    from searchapp.evaluation.corpus import evaluate
    from searchapp.evaluation.encoded import handle_for

    handle = handle_for(app, CORPUS)
    started = time.monotonic()
    new = evaluate(app, handle, items)
    new_seconds = time.monotonic() - started
    started = time.monotonic()
    old = old_evaluate(app, handle, items)
    old_seconds = time.monotonic() - started
    differing = {mode: {m: int((~np.isclose(old[mode][m], new.per_query[mode][m],
                                            rtol=0, atol=1e-12)).sum()) for m in old[mode]}
                 for mode in old}
    return {"queries": len(items.queries), "modes": 3, "old_seconds": round(old_seconds, 1),
            "new_seconds": round(new_seconds, 1), "queries_differing": differing,
            "report": new.as_dict()["queries"]}


def hybrid_test(app, items, fusion) -> np.ndarray:
    """Per-query hybrid nDCG@10 on the test queries with ``fusion`` stored for the corpus."""
    from searchapp.evaluation.corpus import evaluate
    from searchapp.evaluation.encoded import handle_for
    from searchapp.search.fusion import save_fusion

    handle = handle_for(app, CORPUS)
    save_fusion(app, handle.corpus_id, handle.model.name,
                None if fusion.source == "default" else fusion)
    return evaluate(app, handle, items, modes=("hybrid",)).per_query["hybrid"]["ndcg@10"]


def one_n(app, n: int, test_items, default_values) -> dict:
    from searchapp.evaluation.bootstrap import mean_interval, paired_mean_difference
    from searchapp.evaluation.fusion_fit import fit_fusion
    from searchapp.search.fusion import DEFAULT

    set_judgements(app, n)
    hybrid_test(app, test_items, DEFAULT)  # the stored fusion back to the defaults
    started = time.monotonic()
    fit = fit_fusion(app, CORPUS)
    fit_seconds = time.monotonic() - started
    candidate = hybrid_test(app, test_items, fit.candidate or DEFAULT)
    hybrid_test(app, test_items, fit.fusion)  # what the corpus uses after the fit
    used = candidate if fit.kept else default_values
    return {"n": n, "fit_seconds": round(fit_seconds, 1), "fit": fit.as_dict(),
            "test_hybrid_ndcg@10": {
                "default": mean_interval(default_values).scaled(),
                "candidate": mean_interval(candidate).scaled(),
                "in_use_after_fit": mean_interval(used).scaled(),
                "candidate_minus_default": paired_mean_difference(default_values, candidate)
                .scaled(),
                "in_use_minus_default": paired_mean_difference(default_values, used).scaled()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", default="100,300,900")
    parser.add_argument("--skip-old", action="store_true", help="do not time the old path")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from searchapp.evaluation.service import file_items
    from searchapp.search.fusion import DEFAULT

    started = time.monotonic()
    app = make_app()
    out: dict = {"machine": f"{platform.processor() or platform.machine()}, "
                            f"{os.cpu_count()} cores, torch threads 1",
                 "ingest": (APP_DIR / "INGESTED").read_text().strip()}
    test_items = file_items(DATA / "test-queries.jsonl", DATA / "test-qrels.tsv")
    hybrid_test(app, test_items, DEFAULT)
    if not args.skip_old:  # 300 queries × 3 modes, old path and new
        out["evaluate"] = timed_evaluations(app, test_items)
        print(json.dumps({k: v for k, v in out["evaluate"].items() if k != "report"}))
    default_values = hybrid_test(app, test_items, DEFAULT)
    out["runs"] = []
    for n in [int(x) for x in args.ns.split(",")]:
        out["runs"].append(one_n(app, n, test_items, default_values))
        print(json.dumps({k: v for k, v in out["runs"][-1].items() if k != "fit"} |
                         {"sentence": out["runs"][-1]["fit"]["sentence"]}))
    out["seconds"] = round(time.monotonic() - started, 1)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
