"""Retrieval over a real manual: the app's document ingest and search against page baselines.

The manual is Debian's ``git-doc`` (``apt-get install git-doc``): git's man pages
and user manual as HTML. The files indexed are chosen by a rule, not by results:
every top-level ``git*.html`` of ``/usr/share/doc/git-doc`` plus ``user-manual.html``
(197 files in git-doc 2.39). Each file is one "page"; a hit counts when its id
(the file's path) is one of the question's relevant files.

Questions: ``benchmarks/data/git_doc_questions.tsv`` (66) and
``git_doc_questions_more.tsv`` (150 more) — question, relevant files
comma-separated, note — each set written and committed before any search was
run on it. The ranking of split documents (``searchapp.search.evidence``) chose
its one number on the 150 later questions only; the first 66 are held out
(reported apart, ``by_part``).

``--collection pg``: a second manual no one on the project wrote, PostgreSQL's
HTML pages with a section's heading as the question and the page without that
heading as its answer (``benchmarks/pg_pages.py``: the rule, 130 pages with
text, 153 questions); nothing was chosen on it.

Ours (the app's own path, SQLite + hnswlib, the bundled all-MiniLM-L6-v2):
``request_ingest`` of the chosen files, the ``ingest`` job, then its ``embed``
job (passages planned per section), then ``searchapp.search.service.search`` in
each mode: hybrid, semantic, lexical; and **before** in the same run: hybrid and
semantic with split documents ranked by their best passage alone
(``Fusion.document_weight`` 0, what search did before ``evidence``). The
systems take turns per question, so their latencies (p50, p95 per query, warm)
are measured alike.

Baselines, computed in the same run from the same extracted text (the parts of
``read_document`` joined, exactly what the app stores):

- **BM25 page**: Okapi BM25 (k1=1.2, b=0.75, Lucene's idf) over each file's whole
  text, ``\\w+`` lower-case tokens, no stemming, no stop words;
- **dense first-256**: the bundled model over each file's first 256 tokens
  (the encoder's own truncation at its max_seq_length of 256), cosine;
- **RRF(BM25, dense)**: reciprocal-rank fusion, k=60, equal weights, over the
  two full rankings.

Metrics per system: Success@5 (a relevant file in the top 5) and MRR@10, with
percentile-bootstrap 95% intervals over questions (1,000 resamples, the same
resamples for every system, so differences are paired), hybrid (and hybrid
before) minus the best baseline (best by the point value, per metric) and minus
each baseline, hybrid minus hybrid before; per question file too. The JSON
keeps each system's top 10 per question (and the semantic and lexical top 50),
so failures can be studied without running again.

Run (``--work DIR`` keeps the data folder there: the first run ingests and
embeds, the next ones with the same DIR only search, for ranking experiments):

    PYTHONPATH=. .venv/bin/python benchmarks/retrieval_documents.py --work /tmp/gitdoc
    PYTHONPATH=. .venv/bin/python benchmarks/retrieval_documents.py --collection pg \
        --work /tmp/pgpages
    ... --quick   (10 questions, their files and every 8th other file: a smoke run)

Writes benchmarks/results/retrieval_documents.json (``_pg`` for PostgreSQL's,
``_quick`` with --quick). On 2 shared cores a fresh git-doc run took 1.5 minutes
when they were quiet (ingest and embedding 1.2; 14 under a load of 6), a run on a
kept ``--work`` 30 seconds.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results"
QUESTIONS = [ROOT / "benchmarks" / "data" / "git_doc_questions.tsv",  # 66, the first set
             ROOT / "benchmarks" / "data" / "git_doc_questions_more.tsv"]  # 150 more, written
# from the manual pages before any result was seen
MANUAL = Path("/usr/share/doc/git-doc")
CORPUS = "gitdoc"
ROUNDS, SEED = 1000, 20240601
K1, B = 1.2, 0.75
RRF_K = 60
DENSE_CHARS = 20_000  # text handed to the encoder; it keeps the first 256 tokens
TOKEN = re.compile(r"\w+")
# ours: (system, mode, document weight); the "before" ones rank a split document by its best
# passage alone, as search did before searchapp.search.evidence (document weight 0)
OURS = (("hybrid", "hybrid", None), ("hybrid_before", "hybrid", 0.0),
         ("semantic", "semantic", None), ("semantic_before", "semantic", 0.0),
         ("lexical", "lexical", None))
OUR_NAMES = tuple(name for name, _, _ in OURS)
BASELINES = ("bm25_page", "dense_first256", "rrf_bm25_dense")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- input -----------------------------------------------------------------------------------
def chosen_files(folder: Path) -> list[str]:
    """The rule: top-level git*.html and user-manual.html."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix == ".html"
                  and (p.name.startswith("git") or p.name == "user-manual.html"))


def read_questions(path: Path) -> list[tuple[str, set[str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows[0][:2] == ["question", "relevant"], rows[0]
    return [(r[0].strip(), {x.strip() for x in r[1].split(",") if x.strip()}) for r in rows[1:]
            if r and r[0].strip()]


def page_texts(folder: Path, names: list[str]) -> dict[str, str]:
    """Each file's text as the app stores it (the reader's parts joined)."""
    from searchapp.intake.formats.document_readers import read_document

    out = {}
    for name in names:
        docs = read_document(folder / name, name)
        out[name] = "\n\n".join(d.text for d in docs)
    return out


# ---- baselines ---------------------------------------------------------------------------------
def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class BM25:
    """Okapi BM25 over whole pages (k1=1.2, b=0.75, idf = ln(1 + (N - df + .5) / (df + .5)))."""

    def __init__(self, docs: list[str]):
        self.tf = [Counter(tokens(d)) for d in docs]
        self.len = np.array([sum(c.values()) for c in self.tf], dtype=float)
        self.avg = float(self.len.mean())
        df = Counter(w for c in self.tf for w in c)
        n = len(docs)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self.tf))
        norm = K1 * (1 - B + B * self.len / self.avg)
        for w in set(tokens(query)):
            idf = self.idf.get(w)
            if idf is None:
                continue
            f = np.array([c.get(w, 0) for c in self.tf], dtype=float)
            out += idf * f * (K1 + 1) / (f + norm)
        return out


def ranking(scores: np.ndarray, names: list[str]) -> list[str]:
    order = sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))
    return [names[i] for i in order]


def rrf(lists: list[list[str]], k: int = RRF_K) -> list[str]:
    score: dict[str, float] = {}
    for ranked in lists:
        for rank, name in enumerate(ranked, start=1):
            score[name] = score.get(name, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda n: (-score[n], n))


# ---- metrics -----------------------------------------------------------------------------------
def per_question(ranked: list[str], relevant: set[str]) -> tuple[float, float, int | None]:
    """(success@5, reciprocal rank @10, first relevant rank or None)."""
    first = next((i + 1 for i, name in enumerate(ranked[:10]) if name in relevant), None)
    return (1.0 if first is not None and first <= 5 else 0.0,
            1.0 / first if first is not None else 0.0, first)


def interval(values: np.ndarray, draws: np.ndarray) -> dict:
    means = values[draws].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"value": round(100 * float(values.mean()), 1), "low": round(100 * float(lo), 1),
            "high": round(100 * float(hi), 1)}


def difference(a: np.ndarray, b: np.ndarray, draws: np.ndarray) -> dict:
    est = interval(a - b, draws)
    est["verdict"] = ("better" if est["low"] > 0 else "worse" if est["high"] < 0
                      else "not distinguishable")
    return est


# ---- the machine -----------------------------------------------------------------------------
def machine() -> dict:
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    return {"cpu": model, "cores": affinity, "load_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version()}


def commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "searchapp"], cwd=ROOT,
                               text=True, capture_output=True, check=True).stdout.strip()
        return head + ("+dirty(searchapp)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# ---- ours ------------------------------------------------------------------------------------
def ingest(app, corpus: str, folder: Path, names: list[str]) -> dict:
    from searchapp.intake.files_job import request_ingest
    from searchapp.jobs.worker import run_until_done

    started = time.perf_counter()
    job_id = request_ingest(app, corpus, [folder / n for n in names])
    job = run_until_done(app, job_id)
    if job.status != "succeeded":
        raise SystemExit(f"ingest job failed: {job.error}")
    read_s = time.perf_counter() - started
    report = job.result
    if report.get("failed") or report.get("skipped"):
        log(f"ingest problems: {report.get('problems')}")
    embed = {}
    if report.get("embed_job") is not None:
        ejob = run_until_done(app, report["embed_job"])
        if ejob.status != "succeeded":
            raise SystemExit(f"embed job failed: {ejob.error}")
        embed = ejob.result
    total_s = time.perf_counter() - started
    out = {"files": len(names), "documents": report.get("documents"),
           "failed": report.get("failed"), "skipped": report.get("skipped"),
           "passages": embed.get("passages"), "split_documents": embed.get("split"),
           "ingest_job_minutes": round(read_s / 60, 2),
           "embed_job_minutes": round((total_s - read_s) / 60, 2),
           "total_minutes": round(total_s / 60, 2)}
    log(f"ingested: {out}")
    return out


def run_ours(app, corpus: str, questions, k: int = 10) -> tuple[dict, dict, dict]:
    """Per system: the top-k ids per question and ms per query (p50 and mean; each query
    run once, warm); semantic/lexical also at 50."""
    from dataclasses import replace

    from searchapp.search.fusion import fusion_for
    from searchapp.search.service import open_corpus, search

    handle = open_corpus(app, corpus)
    # every system is handed its fusion, so none pays the per-query read of the corpus' own
    # (fusion_for: a database read that search does when it is given none)
    own = fusion_for(app, handle.corpus_id, handle.model.name)
    for q, _ in questions:  # warm: the query cache and the passage vectors of the hits
        search(app, handle, q, k=k, mode="hybrid")
    lists = {name: [] for name, _, _ in OURS}
    took: dict[str, list[float]] = {name: [] for name in lists}
    for i, (q, _) in enumerate(questions):  # the systems take turns going first
        for name, mode, weight in OURS[i % len(OURS):] + OURS[:i % len(OURS)]:
            fusion = own if weight is None else replace(own, document_weight=weight)
            started = time.perf_counter()
            lists[name].append([h.id for h in search(app, handle, q, k=k, mode=mode,
                                                     fusion=fusion)])
            took[name].append(1000 * (time.perf_counter() - started))
    ms = {name: {"p50": round(float(np.median(t)), 2), "p95": round(float(np.percentile(t, 95)),
                                                                    2)}
          for name, t in took.items()}
    deep = {}
    for mode in ("semantic", "lexical"):
        deep[mode] = [[h.id for h in search(app, handle, q, k=50, mode=mode)]
                      for q, _ in questions]
    return lists, ms, deep


# ---- the collections -----------------------------------------------------------------------
def collection(args, work: Path
               ) -> tuple[str, Path, list[str], list[tuple[str, set[str]]], list[str], dict]:
    """(corpus name, folder, file names, questions, each question's part, description);
    the PostgreSQL pages are written under ``work``."""
    if args.collection == "pg":
        from pg_pages import MANUAL as PG_MANUAL
        from pg_pages import build

        if not PG_MANUAL.is_dir():
            raise SystemExit(f"{PG_MANUAL} is missing: apt-get install postgresql-doc-15")
        folder, names, questions = build(work / "pages")
        texts_ok = [n for n in names if _has_text(folder / n)]
        about = {"folder": str(PG_MANUAL), "rule": "benchmarks/pg_pages.py",
                 "package": _package_version("postgresql-doc-15")}
        return "pg", folder, texts_ok, questions, ["pg"] * len(questions), about
    if not args.manual.is_dir():
        raise SystemExit(f"{args.manual} is missing: apt-get install git-doc")
    names = chosen_files(args.manual)
    questions, parts = [], []
    for path in args.questions:
        found = read_questions(path)
        questions += found
        parts += [path.stem] * len(found)
    missing = sorted({f for _, rel in questions for f in rel} - set(names))
    if missing:
        raise SystemExit(f"relevant files outside the chosen set: {missing}")
    about = {"folder": str(args.manual), "rule": "top-level git*.html + user-manual.html",
             "package": _package_version("git-doc")}
    return CORPUS, args.manual, names, questions, parts, about


def _has_text(path: Path) -> bool:
    from searchapp.errors import SearchAppError
    from searchapp.intake.formats.document_readers import read_document

    try:
        return bool(read_document(path, path.name))
    except SearchAppError:
        return False


def open_work(work: Path | None) -> tuple[Path, bool]:
    """(the folder holding the data folder, whether it holds an ingested corpus already)."""
    if work is None:
        return Path(tempfile.mkdtemp(prefix="bench-docs-")), False
    work.mkdir(parents=True, exist_ok=True)
    return work, (work / "data" / "searchapp.db").exists()


# ---- main ----------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collection", choices=("gitdoc", "pg"), default="gitdoc",
                        help="git-doc's pages and questions, or PostgreSQL's (pg_pages.py)")
    parser.add_argument("--manual", type=Path, default=MANUAL)
    parser.add_argument("--questions", type=Path, nargs="+", default=QUESTIONS)
    parser.add_argument("--quick", action="store_true",
                        help="10 questions, their files and every 8th other file")
    parser.add_argument("--work", type=Path, help="keep the data folder here and reuse it on "
                        "the next run with the same --work (the corpus is ingested and "
                        "embedded once; later runs only search)")
    parser.add_argument("--out", type=Path, help="write the result here instead")
    args = parser.parse_args()

    started_at, head = machine(), commit()  # the tree is shared: the code as the run starts
    tmp, reuse = open_work(args.work)
    corpus, folder, names, questions, parts, about = collection(args, tmp)
    if args.quick:
        questions, parts = questions[:10], parts[:10]
        wanted = {f for _, rel in questions for f in rel}
        names = sorted(wanted | set(names[::8]))
    log(f"{len(names)} files, {len(questions)} questions")

    os.environ["SEARCHAPP_DATA_DIR"] = str(tmp / "data")
    os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")
    from searchapp.context import App

    app = App()
    try:
        # the same text the app stores, for the baselines
        t0 = time.perf_counter()
        texts = page_texts(folder, names)
        read_s = time.perf_counter() - t0
        chars = sum(len(t) for t in texts.values())
        log(f"read {len(texts)} files ({chars:,} characters) in {read_s:.1f} s")

        # ours: the one heavy step (ingest + embedding, once per --work), then the searches
        ingested = ({"reused": str(tmp)} if reuse else ingest(app, corpus, folder, names))
        ours, ours_ms, deep = run_ours(app, corpus, questions)
        seen = {i for ranked in ours.values() for r in ranked for i in r}
        if not seen <= set(names):
            raise SystemExit(f"hit ids are not the file names: {sorted(seen - set(names))[:5]}")
        log(f"ours searched: ms/query {ours_ms}")

        base, base_times = baselines(app, texts, questions)
        result = measure(ours, base, questions, parts)
        report(result)
        result.update({
            "benchmark": "retrieval_documents", "collection": args.collection,
            "quick": args.quick, "commit": head, "commit_at_end": commit(),
            "machine_at_start": started_at, "machine_at_end": machine(),
            "manual": {**about, "files": len(names), "characters": chars},
            "questions": {"files": ([str(p.relative_to(ROOT)) for p in args.questions]
                                    if args.collection == "gitdoc" else ["pg_pages.py"]),
                          "n": len(questions)},
            "bootstrap": {"rounds": ROUNDS, "seed": SEED, "paired": True},
            "baseline_settings": {"bm25": {"k1": K1, "b": B, "tokens": r"\w+ lower-case"},
                                  "dense": {"model": app.settings.model},
                                  "rrf_k": RRF_K},
            "timings": {"read_files_s": round(read_s, 1), **ingested,
                        "ms_per_query": {**ours_ms, **base_times.pop("ms")}, **base_times},
        })
        first = result.pop("_first")
        result["per_question"] = [
            {"question": q, "relevant": sorted(rel), "part": part,
             "first_relevant_rank": {s: first[s][i] for s in first},
             "top10": {s: lists[i][:10] for s, lists in {**ours, **base}.items()},
             "top50": {m: deep[m][i] for m in deep}}
            for i, ((q, rel), part) in enumerate(zip(questions, parts, strict=True))]
        RESULTS.mkdir(parents=True, exist_ok=True)
        name = "retrieval_documents" + ("_pg" if args.collection == "pg" else "")
        out = args.out or RESULTS / (name + ("_quick" if args.quick else "") + ".json")
        out.write_text(json.dumps(result, indent=1) + "\n")
        log(f"wrote {out}")
    finally:
        app_dispose = getattr(app, "close", None)
        if callable(app_dispose):
            app_dispose()
        if args.work:
            log(f"kept {tmp} (run again with --work {tmp} to search it without ingesting)")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def baselines(app, texts: dict[str, str], questions) -> tuple[dict, dict]:
    """The page baselines' rankings per question, and their timings."""
    order = list(texts)
    t0 = time.perf_counter()
    bm25 = BM25([texts[n] for n in order])
    bm25_build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bm25_lists = [ranking(bm25.scores(q), order) for q, _ in questions]
    bm25_ms = 1000 * (time.perf_counter() - t0) / len(questions)
    encoder = app.encoder(app.settings.model)
    t0 = time.perf_counter()
    page_vecs = np.asarray(encoder.encode([texts[n][:DENSE_CHARS] for n in order]))
    dense_build_s = time.perf_counter() - t0
    page_vecs /= np.linalg.norm(page_vecs, axis=1, keepdims=True)
    t0 = time.perf_counter()
    qvecs = np.asarray(encoder.encode([q for q, _ in questions]))
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    dense_lists = [ranking(page_vecs @ v, order) for v in qvecs]
    dense_ms = 1000 * (time.perf_counter() - t0) / len(questions)
    fused = [rrf([a, b]) for a, b in zip(bm25_lists, dense_lists, strict=True)]
    log(f"baselines: BM25 built in {bm25_build_s:.1f} s, dense pages encoded in "
        f"{dense_build_s:.1f} s")
    return ({"bm25_page": bm25_lists, "dense_first256": dense_lists, "rrf_bm25_dense": fused},
            {"ms": {"bm25_page": round(bm25_ms, 1), "dense_first256": round(dense_ms, 1)},
             "bm25_build_s": round(bm25_build_s, 1),
             "dense_pages_encode_s": round(dense_build_s, 1)})


def measure(ours: dict, base: dict, questions, parts: list[str]) -> dict:
    """Metrics with intervals; hybrid (after, before) minus each baseline and each other;
    per part of the questions too (git-doc: each question file)."""
    systems = {**ours, **base}
    n = len(questions)
    draws = np.random.default_rng(SEED).integers(0, n, size=(ROUNDS, n))
    s5, rr, first = {}, {}, {}
    for name, lists in systems.items():
        got = [per_question(r, rel) for r, (_, rel) in zip(lists, questions, strict=True)]
        s5[name] = np.array([g[0] for g in got])
        rr[name] = np.array([g[1] for g in got])
        first[name] = [g[2] for g in got]
    values = {"success@5": s5, "mrr@10": rr}
    table = {name: {m: interval(values[m][name], draws) for m in values} for name in systems}
    best = {"success@5": max(BASELINES, key=lambda b: (s5[b].mean(), rr[b].mean())),
            "mrr@10": max(BASELINES, key=lambda b: (rr[b].mean(), s5[b].mean()))}
    diffs = {}
    for metric, v in values.items():
        diffs[metric] = {}
        for ours_name in ("hybrid", "hybrid_before"):
            for b in BASELINES:
                diffs[metric][f"{ours_name} - {b}"] = difference(v[ours_name], v[b], draws)
            diffs[metric][f"{ours_name} - best baseline"] = {
                "baseline": best[metric], **difference(v[ours_name], v[best[metric]], draws)}
        diffs[metric]["hybrid - hybrid_before"] = difference(v["hybrid"], v["hybrid_before"],
                                                             draws)
        diffs[metric]["semantic - semantic_before"] = difference(
            v["semantic"], v["semantic_before"], draws)
    by_part = {}
    for part in dict.fromkeys(parts):
        idx = np.array([i for i, p in enumerate(parts) if p == part])
        sub = np.random.default_rng(SEED).integers(0, len(idx), size=(ROUNDS, len(idx)))
        by_part[part] = {"n": len(idx), **{
            f"{a} - {b}": {m: difference(values[m][a][idx], values[m][b][idx], sub)
                           for m in values}
            for a, b in (("hybrid", "rrf_bm25_dense"), ("hybrid_before", "rrf_bm25_dense"),
                         ("hybrid", "hybrid_before"))},
            "metrics": {s: {m: interval(values[m][s][idx], sub) for m in values}
                        for s in ("hybrid", "hybrid_before", "rrf_bm25_dense")}}
    beats = all(diffs[m]["hybrid - best baseline"]["value"] > 0 for m in diffs)
    significant = all(diffs[m]["hybrid - best baseline"]["verdict"] == "better" for m in diffs)
    return {"metrics": table, "differences": diffs, "best_baseline": best, "by_part": by_part,
            "hybrid_beats_best_baseline": beats,
            "hybrid_beats_best_baseline_with_interval": significant, "_first": first}


def report(result: dict) -> None:
    table, diffs = result["metrics"], result["differences"]
    print()
    print(f"{'system':<22} {'Success@5 [95% CI]':>24} {'MRR@10 [95% CI]':>24}")
    for name in table:
        a, b = table[name]["success@5"], table[name]["mrr@10"]
        tag = "  (ours)" if name in OUR_NAMES else ""
        print(f"{name:<22} {a['value']:>6.1f} [{a['low']:5.1f}, {a['high']:5.1f}]      "
              f"{b['value']:>6.1f} [{b['low']:5.1f}, {b['high']:5.1f}]{tag}")
    print()
    for metric in diffs:
        for label, d in diffs[metric].items():
            extra = f" ({d['baseline']})" if "baseline" in d else ""
            print(f"{metric:<10} {label + extra:<48} {d['value']:+6.1f} "
                  f"[{d['low']:+5.1f}, {d['high']:+5.1f}] {d['verdict']}")
    for part, got in result["by_part"].items():
        print(f"\nquestions {part} (n={got['n']}):")
        for s, m in got["metrics"].items():
            print(f"  {s:<16} Success@5 {m['success@5']['value']:5.1f}  "
                  f"MRR@10 {m['mrr@10']['value']:5.1f}")
        for label, d in got.items():
            if " - " in label:
                print(f"  {label:<34} " + "  ".join(
                    f"{m} {x['value']:+5.1f} [{x['low']:+5.1f}, {x['high']:+5.1f}]"
                    for m, x in d.items()))
    print(f"\nhybrid beats the best baseline on both metrics (point values): "
          f"{result['hybrid_beats_best_baseline']}; with intervals above 0: "
          f"{result['hybrid_beats_best_baseline_with_interval']}")


def _package_version(name: str) -> str | None:
    try:
        return subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], text=True,
                              capture_output=True, check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


if __name__ == "__main__":
    main()
