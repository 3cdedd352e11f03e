"""Duplicate mining: our k-NN-graph mining against sentence-transformers' paraphrase mining.

Parts (``--part``, default all):

- ``sentences``: the ~60,000 unique sentences of ../shared/data (STSb, NLI, MRPC),
  embedded once with the bundled model (cached in benchmarks/.cache). Ours:
  ``searchapp.duplicates.knn_pairs`` over a ``VectorIndex`` (HNSW); the peer:
  ``sentence_transformers.util.paraphrase_mining_embeddings`` on the same vectors
  with its default top_k=100 (ours: k=10, widened for the few documents whose
  10th neighbour is still above the floor). Recall is measured against the exact
  set of all pairs with cosine ≥ 0.8 and ≥ 0.9 (a blockwise product, no k limit).
- ``synthetic``: N clustered 384-d unit vectors (topics → clusters → members).
  paraphrase mining is timed on a sample and extrapolated quadratically (its
  cost is the n×n matrix product); recall is estimated from a random sample of
  documents whose exact neighbours are computed against all N.
- ``mrpc``: AP and best-F1 threshold of the bundled model on mrpc-train-dev, ours
  (``searchapp duplicates calibrate``) next to sentence-transformers + scikit-learn.
- ``check``: latency of ``searchapp.duplicates.check`` (encode + index + database)
  on a 100,000-document corpus in a real App (the 60k sentences plus synthetic
  documents), next to ``util.semantic_search`` over the same vectors.

Run: ``PYTHONPATH=. python benchmarks/duplicates_mining.py [--part P] [--n-synthetic N]``
Writes benchmarks/results/duplicates_mining.json and .md (parts merge into them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sentence_cache  # the shared sentence set and its cached vectors
from synthetic import clustered_vectors, store_corpus

from searchapp.duplicates import knn_pairs
from searchapp.vectors.index import VectorIndex

RESULTS = Path(__file__).resolve().parent / "results"
THRESHOLDS = (0.8, 0.9)
K = 10
PEER_TOP_K = 100  # paraphrase_mining's default


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


# ---- helpers ------------------------------------------------------------------------
def build_index(vectors: np.ndarray) -> VectorIndex:
    index = VectorIndex(dim=vectors.shape[1], capacity=len(vectors))
    for start in range(0, len(vectors), 50_000):
        index.add(np.arange(start, min(start + 50_000, len(vectors))),
                  vectors[start:start + 50_000])
    return index


def exact_pairs_above(vectors: np.ndarray, threshold: float, rows: np.ndarray | None = None,
                      block: int = 2048, counts: dict | None = None) -> set[tuple[int, int]]:
    """Every pair (i < j) with cosine ≥ threshold, exactly (rows: only pairs touching these).

    ``counts`` {threshold: 0, ...} is filled with the number of ordered pairs at or
    above each of its (lower) thresholds, to show how many pairs a lower one would give.
    """
    rows = np.arange(len(vectors)) if rows is None else rows
    out: set[tuple[int, int]] = set()
    for start in range(0, len(rows), block):
        idx = rows[start:start + block]
        scores = vectors[idx] @ vectors.T  # (b, n)
        scores[np.arange(len(idx)), idx] = -1.0  # no self-matches
        for low in counts or {}:
            counts[low] += int(np.count_nonzero(scores >= low))
        r, c = np.nonzero(scores >= threshold)
        a, b = idx[r], c
        out.update(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist(), strict=True))
    return out


def recall(found: set, truth: set) -> float | None:
    return round(len(found & truth) / len(truth), 4) if truth else None


def ours(index: VectorIndex, floor: float, k: int) -> tuple[dict, float]:
    (a, b, s), seconds = timed(knn_pairs, index, floor, k)
    pairs = {t: {(x, y) for x, y, sc in zip(a.tolist(), b.tolist(), s.tolist(), strict=True)
                 if sc >= t} for t in THRESHOLDS}
    return pairs, seconds


def peer(vectors: np.ndarray, top_k: int = PEER_TOP_K) -> tuple[dict, float]:
    """paraphrase_mining_embeddings with its default top_k (100), max_pairs never reached."""
    from sentence_transformers.util import paraphrase_mining_embeddings

    emb = torch.from_numpy(vectors)
    result, seconds = timed(paraphrase_mining_embeddings, emb, top_k=top_k,
                            max_pairs=len(vectors) * top_k)
    pairs = {t: {(i, j) for score, i, j in result if score >= t} for t in THRESHOLDS}
    return pairs, seconds


# ---- parts -------------------------------------------------------------------------
def part_sentences(k: int) -> dict:
    _, vectors = sentence_cache.all_vectors(log=log)
    n = len(vectors)
    log(f"{n} sentences; building the HNSW index")
    index, build_s = timed(build_index, vectors)
    log(f"index built in {build_s:.1f} s; mining (ours)")
    our_pairs, our_s = ours(index, min(THRESHOLDS), k)
    log(f"ours {our_s:.2f} s; paraphrase_mining_embeddings (peer)")
    peer_pairs, peer_s = peer(vectors)
    log(f"peer {peer_s:.2f} s; exact pairs for recall")
    lower = {0.573: 0, 0.7: 0}  # the MRPC best-F1 threshold, and one between
    truth_all, truth_s = timed(exact_pairs_above, vectors, min(THRESHOLDS), counts=lower)
    sims = {p: float(vectors[p[0]] @ vectors[p[1]]) for p in truth_all}
    truth = {t: {p for p, s in sims.items() if s >= t} for t in THRESHOLDS}
    per_doc = np.bincount(np.array([x for p in truth[0.8] for x in p] or [0]), minlength=n)
    out = {"n": n, "k": k, "peer_top_k": PEER_TOP_K, "torch_threads": torch.get_num_threads(),
           "ours_index_build_s": round(build_s, 2), "ours_mining_s": round(our_s, 2),
           "peer_paraphrase_mining_s": round(peer_s, 2),
           "speedup_mining": round(peer_s / our_s, 1),
           "speedup_including_index_build": round(peer_s / (our_s + build_s), 2),
           "exact_threshold_pass_s": round(truth_s, 2),
           "max_neighbours_at_0.8": int(per_doc.max()),
           "docs_with_more_than_k_at_0.8": int((per_doc > k).sum())}
    out |= {f"exact_pairs_{low}": c // 2 for low, c in lower.items()}
    for t in THRESHOLDS:
        out[f"truth_pairs_{t}"] = len(truth[t])
        out[f"ours_recall_{t}"] = recall(our_pairs[t], truth[t])
        out[f"peer_recall_{t}"] = recall(peer_pairs[t], truth[t])
        out[f"ours_pairs_{t}"] = len(our_pairs[t])
    log(json.dumps(out))
    return out


def part_synthetic(n: int, k: int, sample_peer: int, sample_recall: int) -> dict:
    log(f"generating {n:,} clustered vectors")
    vectors = clustered_vectors(n)
    log("building the HNSW index")
    index, build_s = timed(build_index, vectors)
    log(f"index built in {build_s:.1f} s; mining (ours)")
    our_pairs, our_s = ours(index, min(THRESHOLDS), k)
    from searchapp.duplicates import group_pairs

    pairs_08 = np.array(sorted(our_pairs[0.8]), dtype=np.int64).reshape(-1, 2)
    scores_08 = np.einsum("ij,ij->i", vectors[pairs_08[:, 0]], vectors[pairs_08[:, 1]])
    groups, group_s = timed(group_pairs, pairs_08[:, 0], pairs_08[:, 1], scores_08,
                            index.vectors, 0.8)
    del index
    m = min(sample_peer, n)
    log(f"ours {our_s:.2f} s; paraphrase_mining_embeddings on a sample of {m:,}")
    _, peer_sample_s = peer(vectors[:m])
    peer_s = peer_sample_s * (n / m) ** 2
    rng = np.random.default_rng(1)
    rows = np.sort(rng.choice(n, size=min(sample_recall, n), replace=False))
    log(f"exact neighbours of {len(rows):,} sampled documents for recall")
    truth_all = exact_pairs_above(vectors, min(THRESHOLDS), rows)
    sims = {p: float(vectors[p[0]] @ vectors[p[1]]) for p in truth_all}
    sampled = set(rows.tolist())
    out = {"n": n, "k": k, "peer_top_k": PEER_TOP_K, "ours_index_build_s": round(build_s, 2),
           "ours_mining_s": round(our_s, 2), "ours_grouping_s_at_0.8": round(group_s, 2),
           "groups_at_0.8": len(groups), "peer_sample_n": m,
           "peer_sample_s": round(peer_sample_s, 2),
           "peer_extrapolated_s": round(peer_s, 1),
           "speedup_mining_vs_extrapolated": round(peer_s / our_s, 1),
           "speedup_including_index_build": round(peer_s / (our_s + build_s), 1),
           "recall_sample_documents": len(rows)}
    for t in THRESHOLDS:
        truth = {p for p, s in sims.items() if s >= t}
        found = {p for p in our_pairs[t] if p[0] in sampled or p[1] in sampled}
        out[f"truth_pairs_touching_sample_{t}"] = len(truth)
        out[f"ours_recall_{t}"] = recall(found, truth)
        out[f"ours_pairs_{t}"] = len(our_pairs[t])
    log(json.dumps(out))
    return out


def part_mrpc() -> dict:
    import pandas as pd
    from sentence_transformers import SentenceTransformer
    from sklearn.metrics import average_precision_score, precision_recall_curve

    from searchapp.cli import main
    from searchapp.embedding.models import BUNDLED

    path = sentence_cache.data_dir() / "mrpc" / "mrpc-train-dev.tsv.gz"
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SEARCHAPP_DATA_DIR"] = tmp
        os.environ["SEARCHAPP_DEVICE"] = "cpu"
        out_file = Path(tmp) / "out.json"
        log("ours: searchapp duplicates calibrate --json")
        start = time.perf_counter()
        with open(out_file, "w") as f:
            saved, sys.stdout = sys.stdout, f
            try:
                code = main(["duplicates", "calibrate", "--model", "all-MiniLM-L6-v2",
                             "--pairs", str(path), "--json"])
            finally:
                sys.stdout = saved
        ours_s = time.perf_counter() - start
        ours_result = json.loads(out_file.read_text().strip().splitlines()[-1])
        assert code == 0
    log("peer: sentence-transformers encode + scikit-learn")
    frame = pd.read_csv(path, sep="\t", keep_default_na=False)
    start = time.perf_counter()
    model = SentenceTransformer(str(BUNDLED["all-MiniLM-L6-v2"]()), device="cpu")
    u = model.encode(frame.sentence1.tolist(), normalize_embeddings=True, batch_size=32)
    v = model.encode(frame.sentence2.tolist(), normalize_embeddings=True, batch_size=32)
    sims = (u * v).sum(axis=1)
    labels = frame.is_paraphrase.to_numpy()
    ap = average_precision_score(labels, sims)
    precision, rec, thresholds = precision_recall_curve(labels, sims)
    f1 = 2 * precision * rec / np.clip(precision + rec, 1e-12, None)
    best = int(np.argmax(f1[:-1]))
    peer_s = time.perf_counter() - start
    from searchapp.evaluation.metrics import pair_metrics

    at_default = pair_metrics(sims, labels, threshold=0.8)  # the default threshold
    out = {"pairs": len(frame), "ours_ap": ours_result["ap"], "ours_f1": ours_result["f1"],
           "ours_threshold": ours_result["threshold"], "ours_seconds": round(ours_s, 1),
           "peer_ap": round(100 * ap, 2), "peer_f1": round(100 * float(f1[best]), 2),
           "peer_threshold": round(float(thresholds[best]), 4), "peer_seconds": round(peer_s, 1),
           "at_0.8_precision": at_default["precision"], "at_0.8_recall": at_default["recall"],
           "at_0.8_f1": at_default["f1"]}
    log(json.dumps(out))
    return out


def part_check(n: int = 100_000, queries: int = 50) -> dict:
    from sentence_transformers.util import semantic_search

    from searchapp import duplicates as dup
    from searchapp.context import App
    from searchapp.vectors.handle import open_corpus

    frame, vectors = sentence_cache.all_vectors(log=log)
    sentences = list(frame.text)
    extra = n - len(sentences)
    texts = sentences + [f"synthetic document {i}" for i in range(extra)]
    all_vectors = np.concatenate([vectors, clustered_vectors(extra, seed=3)]) if extra > 0 \
        else vectors[:n]
    texts = texts[:n]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SEARCHAPP_DATA_DIR"] = tmp
        os.environ["SEARCHAPP_DEVICE"] = "cpu"
        app = App()
        log(f"storing a {n:,}-document corpus with its vectors")
        store_corpus(app, "bench", texts, all_vectors, log=log)
        log("building the index (first open of the corpus)")
        handle, build_s = timed(open_corpus, app, "bench")
        import pandas as pd

        stsb = pd.read_csv(sentence_cache.data_dir() / "stsb" / "stsbenchmark.tsv.gz", sep="\t",
                           keep_default_na=False)
        questions = stsb[stsb.split == "test"].sentence2.head(queries).tolist()
        dup.check(app, "bench", "warm up the encoder and the index")
        ours_ms, matches = [], 0
        for q in questions:
            found, seconds = timed(dup.check, app, "bench", q, 0.8)
            ours_ms.append(1000 * seconds)
            matches += len(found)
        encoder = app.encoder(handle.model.name)
        handle_index = handle.index
        encode_ms, index_ms = [], []
        for q in questions:  # the two parts of a check: the encoder pass, the index query
            qv, seconds = timed(encoder.encode, [q])
            encode_ms.append(1000 * seconds)
            _, seconds = timed(handle_index.search, qv, dup.CHECK_K)
            index_ms.append(1000 * seconds)
        corpus_t = torch.from_numpy(all_vectors)
        peer_ms = []
        for q in questions:
            start = time.perf_counter()
            qv = torch.from_numpy(encoder.encode([q]))
            semantic_search(qv, corpus_t, top_k=dup.CHECK_K)
            peer_ms.append(1000 * (time.perf_counter() - start))
        app.db.dispose()
    out = {"corpus_documents": n, "queries": len(questions), "index_build_s": round(build_s, 1),
           "ours_check_median_ms": round(statistics.median(ours_ms), 1),
           "ours_check_p95_ms": round(float(np.percentile(ours_ms, 95)), 1),
           "ours_check_max_ms": round(max(ours_ms), 1),
           "of_which_encode_median_ms": round(statistics.median(encode_ms), 1),
           "of_which_index_search_median_ms": round(statistics.median(index_ms), 2),
           "torch_threads": torch.get_num_threads(),
           "peer_encode_plus_semantic_search_median_ms": round(statistics.median(peer_ms), 1),
           "matches_at_0.8": matches}
    log(json.dumps(out))
    return out


def write(results: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "duplicates_mining.json"
    merged = json.loads(path.read_text()) if path.is_file() else {}
    merged.update(results)
    path.write_text(json.dumps(merged, indent=2) + "\n")
    lines = ["# Duplicate mining benchmark", "",
             f"Machine: {os.cpu_count()} CPU cores shared with other jobs (load 8-14 during "
             "these runs). Written by benchmarks/duplicates_mining.py.", ""]
    for part, values in merged.items():
        lines += [f"## {part}", "", "| metric | value |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in values.items()]
        lines.append("")
    (RESULTS / "duplicates_mining.md").write_text("\n".join(lines))
    log(f"wrote {path}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=["sentences", "synthetic", "mrpc", "check", "all"],
                   default="all")
    p.add_argument("--k", type=int, default=K)
    p.add_argument("--n-synthetic", type=int, default=1_000_000)
    p.add_argument("--peer-sample", type=int, default=60_000)
    p.add_argument("--recall-sample", type=int, default=2_000)
    p.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    p.add_argument("--tag", default="", help="suffix for the result key")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    parts = ["sentences", "mrpc", "check", "synthetic"] if args.part == "all" else [args.part]
    for part in parts:
        if part == "sentences":
            write({"sentences_60k": part_sentences(args.k)})
        elif part == "synthetic":
            write({f"synthetic_{args.n_synthetic}": part_synthetic(
                args.n_synthetic, args.k, args.peer_sample, args.recall_sample)})
        elif part == "mrpc":
            write({"mrpc": part_mrpc()})
        else:
            write({"check_latency" + args.tag: part_check()})


if __name__ == "__main__":
    main()
