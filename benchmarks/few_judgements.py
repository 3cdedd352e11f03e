"""Learning from few judgements: hybrid fusion fitted from 5 judged queries, measured on others.

Real labelled data: the STS benchmark's dev and test pairs (``../shared/data/stsb``).
Every distinct ``sentence2`` is a document of one corpus (the app's own table upload,
SQLite + hnswlib, the bundled all-MiniLM-L6-v2); every ``sentence1`` of a pair scored
at least ``MIN_SCORE`` is a query, its pair's ``sentence2`` judged relevant. The
queries are split once by a seeded draw into a pool the simulated user judges from
and a test set nobody judges.

Each judged query is searched once (``evaluation.candidates``, both lists 100 deep)
and every fusion of the fit's grid scored on it (``fusion_fit.Grid``). Then, for N
judged queries (5, 10, 20, 40), ``TRIALS`` times: N queries drawn from the pool are
"the judgements"; ``fusion_fit.decide`` (the job's own rule: leave-one-query-out
below 20 queries, else 5 hashed parts; kept only with the bootstrap interval above 0
and the sign-flip p < 0.05) says whether the fitted fusion is kept; on the test set
nDCG@10 and hit@10 of doing nothing (the default fusion), of the fitted candidate and
of what the job leaves in use. The verdict is "right" when a kept fit is better on
the test set (mean nDCG@10 higher) or a fit left out is not.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/few_judgements.py [--trials 200]
Writes benchmarks/results/few_judgements.json.
"""

from __future__ import annotations

import argparse
import csv
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
sys.path.insert(0, str(ROOT))
STSB = ROOT.parent / "shared" / "data" / "stsb" / "stsbenchmark.tsv.gz"
OUT = ROOT / "benchmarks" / "results" / "few_judgements.json"
MIN_SCORE = 4.0
SIZES = (5, 10, 20, 40)
SEED = 20240745


def read_pairs() -> tuple[list[dict], dict[str, set[str]]]:
    """Documents (id, text) and query → relevant document ids."""
    docs, ids, queries = [], {}, {}
    with gzip.open(STSB, "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["split"] not in ("dev", "test"):
                continue
            text = row["sentence2"].strip()
            if text not in ids:
                ids[text] = f"s{len(ids)}"
                docs.append({"id": ids[text], "text": text})
            if float(row["score"]) >= MIN_SCORE and row["sentence1"].strip():
                queries.setdefault(row["sentence1"].strip(), set()).add(ids[text])
    return docs, queries


def build(app, docs: list[dict]) -> float:
    import pandas as pd

    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done

    started = time.monotonic()
    data = pd.DataFrame(docs).to_csv(index=False).encode()
    job = run_until_done(app, upload(app, read_table(data, "stsb.csv"), "stsb").job_id)
    assert job.status == "succeeded", job.error
    return time.monotonic() - started


def hits_at_10(lists, grades, fusion) -> np.ndarray:
    from searchapp.evaluation.candidates import ranking

    return np.array([float(any(g.get(int(d), 0) >= 1 for d in ranking(q, "hybrid", fusion, 10)))
                     for q, g in zip(lists, grades, strict=True)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    os.environ["SEARCHAPP_DATA_DIR"] = tempfile.mkdtemp(prefix="few-judgements-")
    from searchapp.context import App
    from searchapp.evaluation.candidates import candidate_lists
    from searchapp.evaluation.encoded import handle_for
    from searchapp.evaluation.fusion_fit import Grid, _judged, decide, ndcg_at_10
    from searchapp.evaluation.judged import Items, JudgedQuery
    from searchapp.search.fusion import DEFAULT, MAX_DEPTH

    app = App()
    docs, queries = read_pairs()
    build_s = build(app, docs)
    handle = handle_for(app, "stsb")
    items = Items(queries=[JudgedQuery(q, dict.fromkeys(sorted(r), 1)) for q, r in queries.items()])
    texts, grades = _judged(app, handle.corpus_id, items)
    started = time.monotonic()
    lists = candidate_lists(app, handle, texts, MAX_DEPTH)
    search_s = time.monotonic() - started
    grid = Grid.score(lists, grades)
    current = ndcg_at_10(lists, grades, DEFAULT)
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(lists))
    pool, test = order[: len(order) // 2], order[len(order) // 2:]
    test_lists, test_grades = [lists[i] for i in test], [grades[i] for i in test]
    base_ndcg, base_hit = current[test].mean(), hits_at_10(test_lists, test_grades, DEFAULT).mean()
    cache: dict = {}

    def on_test(fusion) -> tuple[float, float]:
        if fusion not in cache:
            cache[fusion] = (float(ndcg_at_10(test_lists, test_grades, fusion).mean()),
                             float(hits_at_10(test_lists, test_grades, fusion).mean()))
        return cache[fusion]

    runs = []
    for n in SIZES:
        rows = []
        for _ in range(args.trials):
            chosen = rng.choice(pool, size=n, replace=False)
            sub = Grid(grid.values_[..., chosen], grid.digit[chosen])
            d = decide(sub, [texts[i] for i in chosen], current[chosen])
            cand_ndcg, cand_hit = on_test(d.candidate)
            better_on_test = cand_ndcg > base_ndcg + 1e-12
            rows.append({"kept": d.better, "p": d.gain["p"], "cand_ndcg": cand_ndcg,
                         "cand_hit": cand_hit, "better_on_test": better_on_test,
                         "used_ndcg": cand_ndcg if d.better else base_ndcg,
                         "used_hit": cand_hit if d.better else base_hit,
                         "right": d.better == better_on_test})
        kept = [r for r in rows if r["kept"]]
        mean = lambda key, rs=rows: round(100 * float(np.mean([r[key] for r in rs])), 2)  # noqa: E731
        runs.append({
            "judged_queries": n, "trials": len(rows),
            "kept_share": round(len(kept) / len(rows), 3),
            "verdict_right_share": round(float(np.mean([r["right"] for r in rows])), 3),
            "kept_and_better_on_test": sum(r["better_on_test"] for r in kept),
            "kept": len(kept),
            "candidate_better_on_test_share": round(
                float(np.mean([r["better_on_test"] for r in rows])), 3),
            "test_ndcg@10": {"nothing": round(100 * float(base_ndcg), 2),
                             "candidate_always": mean("cand_ndcg"),
                             "job (kept only if shown)": mean("used_ndcg")},
            "test_hit@10": {"nothing": round(100 * float(base_hit), 2),
                            "candidate_always": mean("cand_hit"),
                            "job (kept only if shown)": mean("used_hit")}})
        print(json.dumps(runs[-1]), flush=True)
    out = {"benchmark": "few_judgements", "data": "STSb dev+test: sentence2 as documents, "
           f"sentence1 of pairs scored >= {MIN_SCORE} as queries",
           "documents": len(docs), "queries": len(lists), "pool": len(pool),
           "test_queries": len(test), "seed": SEED,
           "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "seconds": {"ingest_and_embed": round(build_s, 1), "search_all": round(search_s, 1)},
           "default_fusion": DEFAULT.as_dict(), "runs": runs}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
