"""Query latency: one query encoded, and whole searches stage by stage, against txtai and
sentence-transformers in the same run.

Three parts, each printing ours, the peer and their ratio:

1. **encode** one query (the first ``--queries`` unique STSb sentences, one at a time,
   each path in turn per query so all share the machine's conditions):
   ``st`` = ``SentenceTransformer(model).encode([q])`` (the peer); ``ours`` =
   ``encoder.encode_query(q)`` with its cache off (the query runtime's choice, see
   ``searchapp/embedding/query_runtime.py``), and each of its candidates forced
   (``ours-onnx-1``, ``ours-onnx-2``, ``ours-torch``), and ``ours-batch-path`` = the
   encoder's ``encode([q])`` as before the query runtime.
2. **passages**: long documents split into passages: the pages of Debian's manuals
   (``git-doc`` and ``postgresql-doc-15``: ``apt-get install git-doc postgresql-doc-15``),
   their text read with lxml (cut at 99,000 characters), ``--docs`` pages ingested and
   embedded as the app does (upload, the embed job). Each query runs in each mode
   (hybrid, semantic, lexical),
   timed as a whole and per stage (``searchapp.base.timing.StageTimes``: tokenize, encode,
   vector, passages, fulltext, fusion, rows, snippets), p50/p95; the query-vector cache
   is cleared before each search (a repeated query is timed apart: ``hybrid-cached``).
   The peer: txtai 9.14 (``benchmarks/requirements-query.txt``) with the same model folder
   and its hybrid index (``hybrid=True, content=True``: dense + BM25, texts stored) over
   the same pages; its semantic and lexical modes are the same index with the other side
   switched off for the call. Queries: the git manual questions
   (``benchmarks/data/git_doc_questions.tsv``), then STSb sentences up to ``--queries``.
3. **synthetic**: ``--synthetic-docs`` real texts with synthetic clustered vectors (as
   ``hybrid_latency.py``; ``--synthetic-docs 1000000`` is the 1M corpus of ``scale.py``:
   past the 100,000 real texts, each text joins two of them), our three modes with
   stages. With ``--synthetic-peer``, txtai beside them: its hybrid index (BM25 terms,
   stored texts, its default dense backend: Faiss) over the same texts holding the same
   vectors (txtai's ``external`` method: a transform that hands it the stored vector of
   each text, since encoding a million texts would take hours here), and each query
   encoded by sentence-transformers with the model, as txtai does it.

Stored corpora are kept in ``--work`` (default ``benchmarks/.cache/query-latency``) and
reused by the next run; ``--quick`` runs small sizes for a check in a few minutes.
``OMP_WAIT_POLICY=PASSIVE`` is set (unless given) before torch loads, as in
``hybrid_latency.py``: spinning torch threads ruin latency on a shared machine.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/query_latency.py [--quick]
Writes benchmarks/results/query_latency.json (query_latency_quick.json with --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from sentence_cache import first_sentences  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
MODEL = "all-MiniLM-L6-v2"
MANUALS = (Path("/usr/share/doc/git-doc"), Path("/usr/share/doc/postgresql-doc-15/html"))
QUESTIONS = ROOT / "benchmarks" / "data" / "git_doc_questions.tsv"
MODES = ("hybrid", "semantic", "lexical")
MAX_CHARS = 99_000  # a longer page is cut here (for both sides): the app's limit is 100,000


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def pct(ms: list[float]) -> dict:
    ordered = sorted(ms)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 2),
            "n": len(ordered)}


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return 1000 * (time.perf_counter() - started)


# ---- part 1: one query encoded -------------------------------------------------------
def encode_part(model_path: Path, queries: list[str]) -> dict:
    from sentence_transformers import SentenceTransformer

    from searchapp.base.timing import StageTimes
    from searchapp.embedding.encoder import SiameseEncoder

    st = SentenceTransformer(str(model_path), device="cpu")
    ours = SiameseEncoder.load(model_path, device="cpu")
    runtime = ours.query_runtime()
    paths = {"st": lambda q: st.encode([q]),
             "ours": lambda q: ours.encode_query(q, use_cache=False),
             "ours-batch-path": lambda q: ours.encode([q])}
    for c in runtime.candidates:
        paths[f"ours-{c.name}"] = lambda q, c=c: c.encode(q, StageTimes())
    for encode in paths.values():  # warm-up
        for q in queries[:10]:
            encode(q)
    ms: dict[str, list[float]] = {name: [] for name in paths}
    for q in queries:
        for name, encode in paths.items():
            ms[name].append(timed(lambda e=encode, q=q: e(q)))
    summary = {name: pct(v) for name, v in ms.items()}
    peer = summary["st"]["p50_ms"]
    for name, row in summary.items():
        row["over_st_p50"] = round(row["p50_ms"] / peer, 3)
        log(f"encode {name:16s} p50 {row['p50_ms']:6.2f} ms  p95 {row['p95_ms']:6.2f} ms  "
            f"/st {row['over_st_p50']:.3f}")
    return {"query_path": runtime.path, "reason": runtime.reason,
            "batch_speed_path": ours.speed_path, "paths": summary}


# ---- the corpora ------------------------------------------------------------------------
def manual_pages(n: int) -> list[tuple[str, str]]:
    """(id, text) of the first ``n`` manual pages (git's, then PostgreSQL's), text by lxml."""
    import lxml.html

    pages = []
    for folder in MANUALS:
        if not folder.is_dir():
            raise SystemExit(f"{folder} is missing: apt-get install git-doc postgresql-doc-15")
        for path in sorted(folder.glob("*.html")):
            root = lxml.html.fromstring(path.read_bytes())
            for bad in root.xpath("//script|//style"):
                bad.drop_tree()
            text = re.sub(r"\s+", " ", root.text_content()).strip()
            if len(text) > 200:  # the app takes texts of up to 100,000 characters
                pages.append((f"{folder.parent.name}/{path.name}", text[:MAX_CHARS]))
            if len(pages) == n:
                return pages
    return pages


def ingest_pages(app, name: str, pages: list[tuple[str, str]]) -> float:
    """Upload and embed the pages as the app does (kept in the work folder); seconds taken."""
    import pandas as pd

    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work
    from searchapp.store import repo

    with app.db.session() as s:
        found = repo.find_corpus(s, name)
        if found is not None and found.document_count == len(pages):
            log(f"{name}: stored already")
            return 0.0
    csv = app.settings.data_dir.parent / f"{name}.csv"
    pd.DataFrame(pages, columns=["id", "text"]).to_csv(csv, index=False)
    started = time.perf_counter()
    upload(app, read_table(csv), name)
    work(app, stop_when_idle=True)
    return time.perf_counter() - started


def queries_for(n: int) -> list[str]:
    import pandas as pd

    questions = pd.read_csv(QUESTIONS, sep="\t", keep_default_na=False)["question"].tolist()
    return list(dict.fromkeys(questions + first_sentences(n)))[:n]


# ---- our searches, stage by stage ---------------------------------------------------------
def measure_ours(app, handle, queries: list[str], modes=MODES) -> dict:
    from searchapp.base.timing import StageTimes
    from searchapp.search.service import search

    encoder = app.encoder(MODEL)
    encoder.query_runtime()  # built now (in the app: at its warm-up, or after one query)
    for q in queries[:5]:
        search(app, handle, q, mode="hybrid")
    # hybrid-cached: hybrid again right after it, the query's vector from the cache
    modes = ("hybrid", "hybrid-cached", *(m for m in modes if m != "hybrid"))
    totals: dict[str, list[float]] = {m: [] for m in modes}
    stages: dict[str, dict[str, list[float]]] = {m: {} for m in totals}
    for q in queries:
        for mode in modes:
            if mode != "hybrid-cached":
                encoder.query_runtime().cache.clear()
            times, plain = StageTimes(), mode.split("-")[0]
            totals[mode].append(timed(lambda q=q, m=plain, t=times: search(
                app, handle, q, k=10, mode=m, times=t)))
            for stage, ms in times.ms().items():
                stages[mode].setdefault(stage, []).append(ms)
    return {m: {"total": pct(totals[m]), "stages": {s: pct(v) for s, v in stages[m].items()}}
            for m in totals}


# ---- txtai --------------------------------------------------------------------------------
def txtai_index(model_path: Path, pages: list[tuple[str, str]], folder: Path):
    """txtai's hybrid index of the pages (saved in ``folder`` and reused); (index, seconds)."""
    from txtai import Embeddings

    config = {"path": str(model_path), "method": "sentence-transformers", "content": True,
              "hybrid": True}
    embeddings = Embeddings(config)
    marker = folder / "count.json"
    if marker.is_file() and json.loads(marker.read_text()) == len(pages):
        embeddings.load(str(folder))
        log("txtai: index loaded")
        return embeddings, 0.0
    started = time.perf_counter()
    embeddings.index([(i, text, None) for i, text in pages])
    seconds = time.perf_counter() - started
    shutil.rmtree(folder, ignore_errors=True)
    embeddings.save(str(folder))
    marker.write_text(json.dumps(len(pages)))
    return embeddings, seconds


def measure_txtai(embeddings, queries: list[str]) -> dict:
    """Hybrid as configured; semantic / lexical: the other side switched off for the call."""
    def run(query: str, mode: str) -> None:
        ann, scoring = embeddings.ann, embeddings.scoring
        try:
            if mode == "semantic":
                embeddings.scoring = None
            elif mode == "lexical":
                embeddings.ann = None
            embeddings.search(query, 10)
        finally:
            embeddings.ann, embeddings.scoring = ann, scoring

    for q in queries[:5]:
        run(q, "hybrid")
    totals: dict[str, list[float]] = {m: [] for m in MODES}
    for q in queries:
        for mode in MODES:
            totals[mode].append(timed(lambda q=q, m=mode: run(q, m)))
    return {m: {"total": pct(v)} for m, v in totals.items()}


def show(label: str, ours: dict, peer: dict | None) -> dict:
    ratios = {}
    for mode, row in ours.items():
        line = f"{label} {mode:13s} ours p50 {row['total']['p50_ms']:7.2f} p95 " \
               f"{row['total']['p95_ms']:7.2f} ms"
        if peer and mode in peer:
            ratio = row["total"]["p50_ms"] / peer[mode]["total"]["p50_ms"]
            ratios[mode] = round(ratio, 3)
            line += f" | txtai p50 {peer[mode]['total']['p50_ms']:7.2f} p95 " \
                    f"{peer[mode]['total']['p95_ms']:7.2f} ms | ours/txtai {ratio:.3f}"
        log(line)
        log("    " + ", ".join(f"{s} {v['p50_ms']:.2f}/{v['p95_ms']:.2f}"
                               for s, v in row["stages"].items()) + " (p50/p95 ms)")
    return ratios


def passages_part(args, model_path: Path, queries: list[str]) -> dict:
    from searchapp.context import App
    from searchapp.vectors.handle import open_corpus

    os.environ["SEARCHAPP_DATA_DIR"] = str(args.work / "app")
    app = App()
    pages = manual_pages(args.docs)
    log(f"passages: {len(pages)} manual pages, {sum(len(t) for _, t in pages):,} characters")
    ingest_s = ingest_pages(app, f"manuals{len(pages)}", pages)
    handle = open_corpus(app, f"manuals{len(pages)}")
    passages = handle.passages.count if handle.passages is not None else 0
    log(f"ours: ingested in {ingest_s:.1f} s (0: stored before); {passages:,} passages")
    peer_index, peer_s = txtai_index(model_path, pages, args.work / f"txtai{len(pages)}")
    log(f"txtai: indexed in {peer_s:.1f} s (0: stored before)")
    # alternate the two sides in blocks so that both see the same load
    ours, peer = measure_ours(app, handle, queries), measure_txtai(peer_index, queries)
    ratios = show("passages", ours, peer)
    return {"pages": len(pages), "passages": passages, "ingest_seconds_ours": round(ingest_s, 1),
            "index_seconds_txtai": round(peer_s, 1), "ours": ours, "txtai": peer,
            "ours_over_txtai_p50": ratios}


REAL_TEXTS = 100_000  # the shared data holds about 101,000 unique real texts


def synthetic_texts(n: int, real_texts) -> tuple[list[str], dict]:
    """n texts: real ones (``scale.real_texts``) up to 100,000; beyond, each further text
    joins two of them (text i and text 7,919·i modulo 100,000), so a million documents
    keep the words and lengths of real sentences and the full-text index real postings."""
    texts, origin = real_texts(min(n, REAL_TEXTS))
    base = len(texts)
    texts += [f"{texts[i % base]} {texts[(7919 * i) % base]}" for i in range(base, n)]
    return texts, {**origin, "joined_real_texts": n - base}


def synthetic_part(args, queries: list[str]) -> dict:
    from hybrid_latency import store
    from scale import real_texts
    from synthetic import clustered_vectors

    from searchapp.context import App
    from searchapp.vectors.handle import open_corpus

    os.environ["SEARCHAPP_DATA_DIR"] = str(args.work / "app")
    app = App()
    texts, origin = synthetic_texts(args.synthetic_docs, real_texts)
    name = f"synthetic{args.synthetic_docs}"
    store(app, name, texts, clustered_vectors(args.synthetic_docs))
    handle = open_corpus(app, name)
    log(f"synthetic: {handle.index.count:,} documents")
    peer, peer_s = None, None
    if args.synthetic_peer:
        peer_index, peer_s = txtai_external_index(
            texts, clustered_vectors(args.synthetic_docs), args.work / f"txtai-{name}")
        log(f"txtai: indexed in {peer_s:.1f} s (0: stored before)")
    ours = measure_ours(app, handle, queries)
    if args.synthetic_peer:
        peer = measure_txtai(peer_index, queries)
    ratios = show("synthetic", ours, peer)
    return {"documents": args.synthetic_docs, "texts": origin, "ours": ours,
            **({"txtai": peer, "index_seconds_txtai": round(peer_s, 1),
                "ours_over_txtai_p50": ratios} if peer else {})}


def txtai_external_index(texts: list[str], vectors, folder: Path):
    """txtai's hybrid index of ``texts`` holding ``vectors`` (row i for text i), saved in
    ``folder`` and reused; queries are encoded by sentence-transformers. (index, seconds)"""
    from sentence_transformers import SentenceTransformer
    from txtai import Embeddings

    from searchapp.embedding.models import BUNDLED

    model = SentenceTransformer(str(BUNDLED[MODEL]()), device="cpu")
    row_of = {t: i for i, t in enumerate(texts)}
    indexing = {"now": False}

    def transform(batch):  # while indexing: the texts' vectors; after: queries, encoded
        if indexing["now"]:
            return vectors[[row_of[t] for t in batch]]
        return model.encode(list(batch), normalize_embeddings=True)

    config = {"method": "external", "transform": transform, "content": True,
              "hybrid": True}
    embeddings = Embeddings(config)
    marker = folder / "count.json"
    if marker.is_file() and json.loads(marker.read_text()) == len(texts):
        embeddings.load(str(folder), config=config)
        log("txtai: index loaded")
        return embeddings, 0.0
    started, indexing["now"] = time.perf_counter(), True
    embeddings.index((i, text, None) for i, text in enumerate(texts))
    seconds, indexing["now"] = time.perf_counter() - started, False
    shutil.rmtree(folder, ignore_errors=True)
    embeddings.save(str(folder))
    marker.write_text(json.dumps(len(texts)))
    return embeddings, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: 40 pages, 10,000 synthetic documents, 40 queries")
    parser.add_argument("--docs", type=int, default=300, help="manual pages (passages part)")
    parser.add_argument("--synthetic-docs", type=int, default=100_000)
    parser.add_argument("--synthetic-peer", action="store_true",
                        help="txtai beside ours on the synthetic corpus (same vectors)")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--parts", default="encode,passages,synthetic")
    parser.add_argument("--out", help="result file name in benchmarks/results/")
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / ".cache" /
                        "query-latency")
    args = parser.parse_args()
    if args.quick:
        args.docs, args.synthetic_docs, args.queries = 40, 10_000, 40
    args.work.mkdir(parents=True, exist_ok=True)
    import torch

    from searchapp.embedding import speed
    from searchapp.embedding.models import BUNDLED

    model_path = BUNDLED[MODEL]()
    cpu = speed.read_cpuinfo()
    queries = queries_for(args.queries)
    result = {"cpu": cpu.model, "cpu_flags": cpu.relevant_flags, "machine": platform.node(),
              "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
              "queries": len(queries), "load_before": os.getloadavg(),
              "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    log(f"CPU {cpu.model} ({os.cpu_count()} cores), load {os.getloadavg()}")
    parts = args.parts.split(",")
    if "encode" in parts:
        result["encode"] = encode_part(model_path, queries)
    if "passages" in parts:
        result["passages"] = passages_part(args, model_path, queries)
    if "synthetic" in parts:
        result["synthetic"] = synthetic_part(args, queries)
    result["load_after"] = os.getloadavg()
    out = RESULTS / (args.out or ("query_latency_quick.json" if args.quick
                                  else "query_latency.json"))
    out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
