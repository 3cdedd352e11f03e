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
        from searchapp.intake.ingest import read_table
        from searchapp.intake.table_upload import upload
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
    """Old and new evaluate over the test queries: seconds, and whether they agree. Both
    start with the query path built (a process does that once) and an empty query cache."""
    from searchapp.evaluation.corpus import evaluate
    from searchapp.evaluation.encoded import handle_for

    handle = handle_for(app, CORPUS)
    cache = app.encoder(handle.model.name).query_runtime().cache  # the fast path built
    cache.clear()  # no query vector from an earlier run: each path encodes all 300
    started = time.monotonic()
    old = old_evaluate(app, handle, items)
    old_seconds = time.monotonic() - started
    cache.clear()
    started = time.monotonic()
    new = evaluate(app, handle, items)
    new_seconds = time.monotonic() - started
    differing = {mode: {m: int((~np.isclose(old[mode][m], new.per_query[mode][m],
                                            rtol=0, atol=1e-12)).sum()) for m in old[mode]}
                 for mode in old}
    return {"queries": len(items.queries), "modes": 3, "load": os.getloadavg()[0],
            "old_seconds": round(old_seconds, 1),
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


# ---- which family: RRF (shipped) against a convex combination of normalised scores --------
ALPHAS = np.round(np.arange(0.0, 1.0001, 0.05), 2)  # weight of the normalised cosine


def scored_lists(app, handle, queries: list[str], depth: int = 100) -> list[dict]:
    """Per query: the union of both lists with every candidate's cosine (best passage for a
    split document, exact for lexical-only ones) and BM25 (0 outside the lexical list)."""
    from searchapp.search.service import semantic_candidates
    from searchapp.store import fulltext
    from searchapp.vectors.index import scores_against

    encoder = app.encoder(handle.model.name)
    out = []
    with app.db.reader() as conn:
        for q in queries:
            v = encoder.encode_query(q.strip())
            cos = {c.doc: c.score for c in semantic_candidates(handle, v, depth)}
            bm25 = dict(fulltext.lexical_search(conn, handle.corpus_id, q.strip(), depth,
                                                documents=handle.documents))
            missing = [d for d in bm25 if d not in cos]
            if missing:
                labels, matrix = handle.index.vectors_of(missing)
                cos.update(zip(labels.tolist(), scores_against(matrix, v).tolist(), strict=True))
                if handle.passages is not None:
                    cos.update({d: sc for d, (_, sc) in
                                handle.passages.best_passages(v, missing).items()})
            docs = list(dict.fromkeys([*cos, *bm25]))
            out.append({"docs": np.array(docs), "cos": np.array([cos.get(d, -1.0) for d in docs]),
                        "bm25": np.array([bm25.get(d, 0.0) for d in docs])})
    return out


def _norm(x: np.ndarray, how: str) -> np.ndarray:
    if how == "minmax":
        span = x.max() - x.min()
        return (x - x.min()) / span if span > 0 else np.zeros_like(x)
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def convex_ndcg(lists: list[dict], grades: list[dict], alpha: float, how: str) -> np.ndarray:
    """nDCG@10 per query of alpha·norm(cosine) + (1 − alpha)·norm(BM25)."""
    from searchapp.evaluation.ranking import query_metrics

    out = []
    for q, g in zip(lists, grades, strict=True):
        score = alpha * _norm(q["cos"], how) + (1 - alpha) * _norm(q["bm25"], how)
        top = q["docs"][np.argsort(-score, kind="stable")[:10]]
        out.append(query_metrics([int(d) for d in top], g)["ndcg@10"])
    return np.array(out)


def judged_by_pk(app, items) -> tuple[list[str], list[dict]]:
    from searchapp.store import repo

    with app.db.session() as s:
        state = repo.corpus_state(s, CORPUS)
        known = {ext: pk for pk, (ext, _) in repo.document_texts(s, state.id).items()}
    pairs = [(q.query, {known[d]: v for d, v in q.grades.items() if d in known})
             for q in items.queries]
    pairs = [(q, g) for q, g in pairs if any(v >= 1 for v in g.values())]
    return [q for q, _ in pairs], [g for _, g in pairs]


def families(app, test_items, rrf_values: np.ndarray, n: int) -> dict:
    """Fit the convex combination on the first ``n`` training judgements (both
    normalisations, alpha in steps of 0.05); its test nDCG@10 against the fitted RRF's."""
    from searchapp.evaluation.bootstrap import mean_interval, paired_mean_difference
    from searchapp.evaluation.encoded import handle_for
    from searchapp.evaluation.service import judgement_items

    set_judgements(app, n)
    handle = handle_for(app, CORPUS)
    train_q, train_g = judged_by_pk(app, judgement_items(app, CORPUS))
    test_q, test_g = judged_by_pk(app, test_items)
    started = time.monotonic()
    train, test = scored_lists(app, handle, train_q), scored_lists(app, handle, test_q)
    fit = {(a, how): float(convex_ndcg(train, train_g, a, how).mean())
           for how in ("minmax", "z") for a in ALPHAS}
    alpha, how = max(fit, key=fit.get)
    values = convex_ndcg(test, test_g, alpha, how)
    return {"n": n, "seconds": round(time.monotonic() - started, 1),
            "convex": {"alpha": float(alpha), "normalisation": how,
                       "train_ndcg@10": round(100 * fit[(alpha, how)], 2),
                       "test_ndcg@10": mean_interval(values).scaled()},
            "best_by_normalisation_on_train": {
                h: max(((float(a), round(100 * v, 2)) for (a, hh), v in fit.items() if hh == h),
                       key=lambda t: t[1]) for h in ("minmax", "z")},
            "rrf_fitted_test_ndcg@10": mean_interval(rrf_values).scaled(),
            "convex_minus_rrf": paired_mean_difference(rrf_values, values).scaled()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", default="100,300,900")
    parser.add_argument("--skip-old", action="store_true", help="do not time the old path")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from searchapp.evaluation.service import file_items
    from searchapp.search.fusion import DEFAULT, Fusion

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
    if out["runs"]:
        last = out["runs"][-1]
        rrf = hybrid_test(app, test_items, Fusion.from_dict(last["fit"]["candidate"]))
        out["families"] = families(app, test_items, rrf, last["n"])
        print(json.dumps(out["families"]))
        hybrid_test(app, test_items, Fusion.from_dict(last["fit"]["fusion"]))
    out["seconds"] = round(time.monotonic() - started, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
