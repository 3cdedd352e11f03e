"""Scale: a million documents on one machine, and 100,000 real sentences through the CLI.

Part ``synthetic`` (``--docs 1000000``): clustered unit vectors (dimension
384, ``benchmarks/synthetic.py``) stored through our store, indexed through
the App's index cache as the app does. Encoding is NOT included here (the
vectors are given); part ``ingest`` measures it. Reports:

- storing the documents, storing the vectors, building and saving the index;
  database and index size on disk; RSS of the process (now and peak);
- search p50/p99 over ``--queries`` precomputed query vectors (held out of the
  same distribution): bare hnswlib ``knn_query`` on the same index (the peer),
  ours (``search_vector``: index + rows from SQLite, on an open handle), and
  their ratio; recall@10 of both against exact search (numpy, all vectors);
- the whole query path with encoding (``search`` with real STSb sentences);
- opening the corpus in a fresh App (a new process's first search: index load).

Part ``ingest`` (``--sentences 100000``): ``searchapp ingest FILE --wait``
(parse, store, encode, store vectors, index, save) against
sentence-transformers' bare ``encode`` of the same texts, in the same run.
The shared data has 60,348 unique sentences; the rest of the 100,000 are real
two-sentence texts (an STSb, NLI or MRPC pair joined), said so in the result.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/scale.py synthetic --docs 1000000
      PYTHONPATH=. .venv/bin/python benchmarks/scale.py ingest --sentences 100000
Writes benchmarks/results/scale_synthetic_{docs}.json / scale_ingest_{n}.json.
Run ``synthetic`` again with the same ``--work`` to re-measure search on the
stored corpus and saved index (``reused_stored_corpus``: true; the store and
build times are then of loading them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import sentence_cache  # noqa: E402
from synthetic import clustered_vectors, store_corpus  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def memory() -> dict:
    """Resident memory of this process now and at its peak, in MiB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = round(int(value.split()[0]) / 1024)
    return {"rss_mib": fields.get("VmRSS"), "peak_rss_mib": fields.get("VmHWM")}


def percentiles(ms: list[float]) -> dict:
    return {"p50_ms": round(statistics.median(ms), 3),
            "p99_ms": round(float(np.percentile(ms, 99)), 3),
            "mean_ms": round(statistics.fmean(ms), 3)}


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int, chunk: int = 100_000
              ) -> np.ndarray:
    """Rows of the exact top-k for each query (q, k), over all vectors, in chunks."""
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    best_scores = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(vectors), chunk):
        scores = queries @ vectors[start:start + chunk].T  # (q, chunk)
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        rows = np.hstack([best_rows, top + start])
        merged = np.hstack([best_scores, np.take_along_axis(scores, top, axis=1)])
        keep = np.argsort(-merged, axis=1)[:, :k]
        best_rows = np.take_along_axis(rows, keep, axis=1)
        best_scores = np.take_along_axis(merged, keep, axis=1)
    return best_rows


def recall_at(found: list[set], truth: np.ndarray) -> float:
    return float(np.mean([len(f & set(t.tolist())) / len(t) for f, t in zip(found, truth,
                                                                          strict=True)]))


def sizes(data_dir: Path) -> dict:
    db = sum(f.stat().st_size for f in data_dir.glob("searchapp.db*"))
    index = sum(f.stat().st_size for f in (data_dir / "indexes").glob("*.hnsw"))
    return {"database_mib": round(db / 2**20), "index_mib": round(index / 2**20)}


def part_synthetic(args) -> dict:
    os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")
    data_dir = Path(args.work or tempfile.mkdtemp(prefix="scale-")) / "data"
    os.environ["SEARCHAPP_DATA_DIR"] = str(data_dir)
    from searchapp.context import App
    from searchapp.search.service import search, search_vector
    from searchapp.vectors.handle import open_corpus

    n, q = args.docs, args.queries
    log(f"generating {n:,} + {q:,} clustered vectors")
    everything = clustered_vectors(n + q, seed=args.seed)
    vectors, queries = everything[:n], everything[n:]
    del everything
    reused = (data_dir / "searchapp.db").is_file()  # --work of an earlier run: nothing rebuilt
    app = App()
    texts = [f"synthetic document {i}" for i in range(n)]
    stored = store_corpus(app, "scale", texts, vectors, log=log)
    del texts
    log("building the index through the App's index cache (as a first open does)")
    started = time.perf_counter()
    handle = open_corpus(app, "scale")
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    app.indexes.save(handle.corpus_id, handle.model)
    save_s = time.perf_counter() - started
    log(f"index: {handle.index.count:,} vectors built in {build_s:.0f} s, saved in {save_s:.0f} s")
    out = {"documents": n, "dimension": vectors.shape[1], "queries": q,
           "encoding_included": False,
           "reused_stored_corpus": reused,  # then the next three times are of loading, not building
           "store_documents_s": stored["documents_seconds"],
           "store_vectors_s": stored["vectors_seconds"],
           "index_build_s": round(build_s, 1), "index_save_s": round(save_s, 1),
           "index_params": {"M": handle.index.params.M,
                            "ef_construction": handle.index.params.ef_construction,
                            "ef_search": handle.index.ef_search},
           **sizes(data_dir), "after_build": memory()}
    out |= measure_search(app, handle, vectors, queries, stored["ids"], search_vector)
    out["whole_path_with_encoding"] = measure_encoded(app, handle, search, args.text_queries)
    out["fresh_process"] = measure_fresh_open(data_dir)
    out["end"] = memory()
    return out


def search_pass(app, handle, queries, search_vector, k: int = 10):
    """Peer (bare hnswlib on the same index) and ours, interleaved per query.

    Whoever runs second on a query finds its graph nodes in the CPU cache, so
    the order alternates: even queries peer first, odd queries ours first.
    """
    hnsw = handle.index._hnsw  # the very graph ours searches: the peer for overhead
    hnsw.set_ef(handle.index.ef_search)
    peer_ms, ours_ms, peer_found, ours_found = [], [], [], []

    def peer(vector) -> None:
        started = time.perf_counter()
        labels, _ = hnsw.knn_query(vector[None], k=k)
        peer_ms.append(1000 * (time.perf_counter() - started))
        peer_found.append(set(labels[0].astype(np.int64).tolist()))

    def ours(vector) -> None:
        started = time.perf_counter()
        hits = search_vector(app, handle, vector, k)
        ours_ms.append(1000 * (time.perf_counter() - started))
        ours_found.append({h.doc_id for h in hits})

    for i, vector in enumerate(queries):
        for run in ((peer, ours) if i % 2 == 0 else (ours, peer)):
            run(vector)
    peer, ours = percentiles(peer_ms), percentiles(ours_ms)
    return {"peer_search": peer, "ours_search": ours,
            "ours_over_peer_p50": round(ours["p50_ms"] / peer["p50_ms"], 3)}, \
        peer_found, ours_found


def read_documents_once(app, corpus_id: int) -> float:
    """Read every page of the corpus' documents once (what a while of traffic does)."""
    from sqlalchemy import text

    started = time.perf_counter()
    with app.db.session() as s:
        s.execute(text("SELECT sum(length(text)), sum(length(meta)) FROM documents "
                       "WHERE corpus_id = :c"), {"c": corpus_id}).one()
    return time.perf_counter() - started


def measure_search(app, handle, vectors, queries, ids, search_vector) -> dict:
    """Two passes over the queries: as they come right after the build (database pages
    possibly cold), then after the documents table was read once; recall@10 of both."""
    k = 10
    for vector in queries[:20]:  # warm up code paths, not pages
        search_vector(app, handle, vector, k)
    first, _, _ = search_pass(app, handle, queries, search_vector, k)
    read_s = read_documents_once(app, handle.corpus_id)
    warm, peer_found, ours_found = search_pass(app, handle, queries, search_vector, k)
    log("exact top-10 for recall")
    truth = ids[exact_top(vectors, queries, k)]
    result = {"peer": f"hnswlib knn_query on the same index, k={k}, "
                      f"ef={handle.index.ef_search}",
              "first_pass": first, "documents_read_once_s": round(read_s, 1),
              "warm_pass": warm,
              "recall_at_10_ours": round(recall_at(ours_found, truth), 4),
              "recall_at_10_peer": round(recall_at(peer_found, truth), 4)}
    log(json.dumps(result))
    return result


def measure_encoded(app, handle, search, n_queries: int) -> dict:
    """query text → encode → index → rows, in-process (real STSb test sentences)."""
    import pandas as pd

    stsb = pd.read_csv(sentence_cache.data_dir() / "stsb" / "stsbenchmark.tsv.gz", sep="\t",
                       keep_default_na=False)
    texts = stsb[stsb.split == "test"].sentence1.head(n_queries).tolist()
    encoder = app.encoder(handle.model.name)
    search(app, handle, "warm up", k=10)
    ms = []
    for text in texts:
        started = time.perf_counter()
        search(app, handle, text, k=10)
        ms.append(1000 * (time.perf_counter() - started))
    result = {"queries": len(texts), **percentiles(ms),
              "speed_path": getattr(encoder, "speed_path", "cpu-fp32")}
    log(f"whole path with encoding: {json.dumps(result)}")
    return result


def measure_fresh_open(data_dir: Path) -> dict:
    """A new process opens the corpus (loads the saved index) and runs one search."""
    code = ("import time,json;t=time.perf_counter();from searchapp.context import App;"
            "from searchapp.vectors.handle import open_corpus;"
            "from searchapp.search.service import search_vector;"
            "app=App();h=open_corpus(app,'scale');o=time.perf_counter()-t;"
            "v=h.index.vectors(h.index.labels()[:1])[0];s=time.perf_counter();"
            "search_vector(app,h,v,10);"
            "print(json.dumps({'open_s':round(o,2),'first_search_ms':"
            "round(1000*(time.perf_counter()-s),2),'count':h.index.count}))")
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    log(f"fresh process: {result}")
    return result


# ---- part 2: real sentences through the CLI ----------------------------------------
def real_texts(n: int) -> tuple[list[str], dict]:
    """n real texts: every unique shared sentence, then joined pairs (two-sentence texts)."""
    import pandas as pd

    frame = sentence_cache.all_sentences()
    texts = list(frame.text)
    singles = min(n, len(texts))
    d = sentence_cache.data_dir()
    pairs = []
    for path, a, b in ((d / "stsb" / "stsbenchmark.tsv.gz", "sentence1", "sentence2"),
                       (d / "nli" / "nli-train-small.tsv.gz", "premise", "hypothesis"),
                       (d / "nli" / "nli-dev.tsv.gz", "premise", "hypothesis"),
                       (d / "mrpc" / "mrpc-train-dev.tsv.gz", "sentence1", "sentence2")):
        df = pd.read_csv(path, sep="\t", keep_default_na=False)
        pairs += [f"{x.strip()} {y.strip()}" for x, y in zip(df[a], df[b], strict=True)]
    seen = set(texts)
    joined = [t for t in dict.fromkeys(pairs) if t not in seen][: max(0, n - singles)]
    out = texts[:singles] + joined
    if len(out) < n:
        raise SystemExit(f"only {len(out):,} real texts available")
    return out, {"single_sentences": singles, "joined_pairs": len(joined)}


def part_ingest(args) -> dict:
    import pandas as pd

    texts, composition = real_texts(args.sentences)
    work = Path(args.work or tempfile.mkdtemp(prefix="scale-ingest-"))
    work.mkdir(parents=True, exist_ok=True)
    csv = work / "texts.csv"
    pd.DataFrame({"id": [f"t{i}" for i in range(len(texts))], "text": texts}).to_csv(
        csv, index=False)
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(work / "data"), "SEARCHAPP_DEVICE": "cpu",
           "PYTHONPATH": str(ROOT)}
    log(f"ours: searchapp ingest {len(texts):,} texts --wait")
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "searchapp", "ingest", str(csv), "--corpus",
                          "bench", "--wait"], env=env, capture_output=True, text=True)
    ours_s = time.perf_counter() - started
    if run.returncode:
        raise SystemExit(run.stderr)
    log(f"ours: {ours_s:.1f} s ({run.stdout.strip().splitlines()[-1]})")
    from sentence_transformers import SentenceTransformer

    from searchapp.embedding.models import BUNDLED

    model = SentenceTransformer(str(BUNDLED["all-MiniLM-L6-v2"]()), device="cpu")
    log("peer: sentence-transformers encode of the same texts (model loaded, not timed)")
    started = time.perf_counter()
    model.encode(texts, batch_size=32)
    peer_s = time.perf_counter() - started
    log(f"peer: {peer_s:.1f} s")
    return {"texts": len(texts), "composition": composition,
            "ours": "searchapp ingest --wait (parse, store, encode, store vectors, index, save)",
            "ours_seconds": round(ours_s, 1),
            "peer": "SentenceTransformer.encode(texts, batch_size=32), encoding only",
            "peer_seconds": round(peer_s, 1), "ours_over_peer": round(ours_s / peer_s, 3),
            "ours_texts_per_s": round(len(texts) / ours_s, 1),
            "peer_texts_per_s": round(len(texts) / peer_s, 1)}


def machine() -> dict:
    flags = set()
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags") and not flags:
            flags = set(line.split(":", 1)[1].split())
        if line.startswith("model name") and not model:
            model = line.split(":", 1)[1].strip()
    return {"cpu": model, "cores": os.cpu_count(),
            "bf16_flags": sorted(f for f in flags if "bf16" in f or f.startswith("amx"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=["synthetic", "ingest"])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--text-queries", type=int, default=200)
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", help="folder for the data (default: a new temporary one)")
    parser.add_argument("--suffix", default="")
    args = parser.parse_args()
    started = time.perf_counter()
    result = part_synthetic(args) if args.part == "synthetic" else part_ingest(args)
    result |= {"machine": machine(), "wall_s": round(time.perf_counter() - started, 1)}
    size = args.docs if args.part == "synthetic" else args.sentences
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"scale_{args.part}_{size}{args.suffix}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {path}")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
