"""Retrieval quality of the search modes, and long documents: truncation against passages.

Three query sets built from ``../shared/data`` (seeded), each searched through
the app's own path (upload, the embed job, ``searchapp.search.service.search``):

- **paraphrase**: STSb pairs scored >= 4; the query is sentence1 and the
  relevant document sentence2, inside a corpus of every unique STSb sentence
  (the query's own sentence is in the corpus too and is skipped in its results).
- **keyword**: rare codes (``ERR-40417``, ``SKU-83125``, ...) inserted into 3
  documents each of the same corpus; the query is the code alone and the 3
  documents are relevant (codes share their prefixes, so only the number tells).
- **long**: documents of 300+ tokens (NLI premises as filler) with an STSb
  sentence planted after the 256th token; the query is its STSb partner
  (score >= 4) and the document is relevant. Searched twice: a corpus embedded
  the old way (each text truncated at the model's window, the peer) and one
  embedded with passages (ours); also the mean-of-passages document vector
  alone (what duplicates and clusters use).

Reports MRR@10, nDCG@10, recall@1 and recall@10 (x100) per set and mode, and the
same for other fusions computed from the same semantic and lexical lists
(reciprocal-rank fusion with other constants and weights), so the default mode
and fusion are chosen by measurement.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/retrieval_quality.py [--queries 1000]
Writes benchmarks/results/retrieval_quality.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import sentence_cache  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
PREFIXES = ["ERR", "XR", "KB", "INV", "SKU", "REF", "PO", "TKT"]
DEPTH = 50  # candidates per list for the offline fusions


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- data --------------------------------------------------------------------------------
def build_sets(n_queries: int, n_codes: int, n_long: int, seed: int,
               corpus_limit: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    d = sentence_cache.data_dir()
    sts = pd.read_csv(d / "stsb" / "stsbenchmark.tsv.gz", sep="\t", keep_default_na=False)
    sts["sentence1"], sts["sentence2"] = sts.sentence1.str.strip(), sts.sentence2.str.strip()
    corpus = list(sentence_cache.stsb_sentences().text.str.strip())
    pairs = sts[(sts.score.astype(float) >= 4) & (sts.sentence1 != sts.sentence2)]
    pairs = pairs.drop_duplicates(["sentence1"]).sample(frac=1.0, random_state=seed)
    para = pairs.iloc[:n_queries]
    planted = pairs.iloc[n_queries:n_queries + n_long]
    used = set(para.sentence1) | set(para.sentence2)
    if corpus_limit:  # a quick trial: the sentences the queries need, and some others
        corpus = list(dict.fromkeys([*used, *corpus[:corpus_limit]]))
    # keyword set: each code into 3 documents that no paraphrase query needs
    free = [i for i, t in enumerate(corpus) if t not in used]
    chosen = rng.choice(free, size=3 * n_codes, replace=False).reshape(n_codes, 3)
    codes, keyword = set(), []
    texts = list(corpus)
    for rows in chosen:
        while (code := f"{rng.choice(PREFIXES)}-{rng.integers(10_000, 99_999)}") in codes:
            pass
        codes.add(code)
        for r in rows:
            words = texts[r].split()
            words.insert(int(rng.integers(0, len(words) + 1)), code)
            texts[r] = " ".join(words)
        keyword.append((code, {texts[r] for r in rows}))
    para_q = [(a, {b}) for a, b in zip(para.sentence1, para.sentence2, strict=True)]
    return {"stsb_texts": texts, "paraphrase": para_q, "keyword": keyword,
            "planted": list(zip(planted.sentence1, planted.sentence2, strict=True))}


def long_documents(planted: list[tuple[str, str]], tokenizer, window: int, seed: int,
                   extra: int) -> tuple[list[str], list[tuple[str, set]], dict]:
    """Long texts with a planted sentence after token ``window``; queries → their document."""
    rng = np.random.default_rng(seed + 1)
    d = sentence_cache.data_dir()
    nli = pd.read_csv(d / "nli" / "nli-train-small.tsv.gz", sep="\t", keep_default_na=False)
    filler = [s.strip() for s in dict.fromkeys(nli.premise) if len(s.split()) >= 8]
    rng.shuffle(filler)
    pos = 0

    def take() -> str:
        nonlocal pos
        pos += 1
        return filler[pos % len(filler)]

    def n_tokens(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    docs, queries, starts = [], [], []
    for query, sentence in planted:
        head = []
        while n_tokens(" ".join(head)) <= window + int(rng.integers(0, 120)):
            head.append(take())
        tail = [take() for _ in range(int(rng.integers(0, 3)))]
        text = " ".join([*head, sentence, *tail])
        starts.append(n_tokens(" ".join(head)))
        docs.append(text)
        queries.append((query, {text}))
    for _ in range(extra):  # long documents without a planted sentence
        head = []
        while n_tokens(" ".join(head)) <= window + int(rng.integers(0, 200)):
            head.append(take())
        docs.append(" ".join(head))
    lengths = [n_tokens(t) for t in docs]
    return docs, queries, {"documents": len(docs), "with_planted_sentence": len(planted),
                           "tokens_median": int(np.median(lengths)),
                           "tokens_max": int(max(lengths)),
                           "planted_start_token_min": int(min(starts)),
                           "planted_start_token_median": int(np.median(starts))}


# ---- running -------------------------------------------------------------------------------
def ingest(app, name: str, texts: list[str]) -> dict:
    from searchapp.corpora.service import request_embed
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done

    frame = pd.DataFrame({"id": [f"d{i}" for i in range(len(texts))], "text": texts})
    started = time.perf_counter()
    summary = upload(app, read_table(frame.to_csv(index=False).encode(), f"{name}.csv"), name)
    job_id = summary.job_id or request_embed(app, name)  # --work: stored, maybe half embedded
    if job_id is None:
        log(f"{name}: already embedded")
        return {"split": None, "passages": None, "seconds": None}
    job = run_until_done(app, job_id)
    if job.status != "succeeded":
        raise SystemExit(f"embedding {name} failed: {job.error}")
    log(f"{name}: {len(texts):,} documents embedded in {time.perf_counter() - started:.1f} s "
        f"({job.result})")
    return job.result


def ranked_texts(app, handle, queries, mode: str, k: int = 10,
                 fusion=None) -> tuple[list, list]:
    """Per query: texts of the top k (the query's own text skipped), and the raw hits."""
    from searchapp.search.service import search

    out, raw = [], []
    for query, _ in queries:
        hits = search(app, handle, query, k=k + 1, mode=mode, fusion=fusion)
        raw.append(hits)
        out.append([h.text for h in hits if h.text != query][:k])
    return out, raw


def fuse(semantic: list, lexical: list, k_rrf: float, w_sem: float, w_lex: float,
         query: str) -> list[str]:
    """Weighted reciprocal-rank fusion of two ranked text lists (the query's own text skipped)."""
    score: dict[str, float] = {}
    for w, ranked in ((w_sem, semantic), (w_lex, lexical)):
        for rank, text in enumerate([t for t in ranked if t != query], start=1):
            score[text] = score.get(text, 0.0) + w / (k_rrf + rank)
    return sorted(score, key=lambda t: -score[t])[:10]


def evaluate_set(app, handle, queries, label: str) -> dict:
    """Each mode through ``search``; semantic and lexical lists (depth 50) also fused offline."""
    from searchapp.evaluation.metrics import retrieval_metrics

    relevant = [rel for _, rel in queries]
    out, lists = {}, {}
    for mode in ("semantic", "lexical", "hybrid"):
        started = time.perf_counter()
        depth = DEPTH if mode != "hybrid" else 10
        lists[mode], _ = ranked_texts(app, handle, queries, mode, k=depth)
        out[mode] = retrieval_metrics([r[:10] for r in lists[mode]], relevant)
        out[mode]["ms_per_query"] = round(1000 * (time.perf_counter() - started) / len(queries),
                                          1)
        log(f"{label} {mode}: {out[mode]}")
    fusions = {}
    for k_rrf in (10, 20, 60):
        for w_sem, w_lex, code_w in ((1, 1, None), (1.5, 1, None), (2, 1, None), (3, 1, None),
                                     (2, 1, (1, 1)), (2, 1, (1, 2)), (3, 1, (1, 1))):
            fused = []
            for s_list, x_list, (q, _) in zip(lists["semantic"], lists["lexical"], queries,
                                              strict=True):
                ws, wl = code_w if code_w and any(ch.isdigit() for ch in q) else (w_sem, w_lex)
                fused.append(fuse(s_list, x_list, k_rrf, ws, wl, q))
            name = f"rrf k={k_rrf} w={w_sem}:{w_lex}" + (
                f", {code_w[0]}:{code_w[1]} when the query has a digit" if code_w else "")
            fusions[name] = retrieval_metrics(fused, relevant)
    out["fusions (offline, from the depth-50 lists)"] = fusions
    log(f"{label} fusions: " + ", ".join(f"{k} {v['mrr@10']}" for k, v in fusions.items()))
    return out


def truncating_embed(encoder, texts, tokens=None, layouts=None, checkpoint=None):
    """The peer for long documents: what the embed job did before passages (one vector, cut)."""
    from searchapp.embedding.passages import Embedded

    return Embedded(encoder.encode(list(texts)), {})


def long_part(app, encoder, sets: dict, args) -> dict:
    """The long-document set: truncation (the peer) against passages of each window."""
    from searchapp.corpora import embed_job as embed_task
    from searchapp.embedding.passages import window_for
    from searchapp.evaluation.metrics import retrieval_metrics
    from searchapp.search.fusion import DEFAULT
    from searchapp.vectors.handle import open_corpus

    # how split documents ranked before searchapp.search.evidence: the best passage alone
    best_passage_only = dataclasses.replace(DEFAULT, document_weight=0.0)
    window, _ = window_for(encoder.max_seq_length, 10**6)  # the model's whole window
    docs, queries, shape = long_documents(sets["planted"], encoder.tokenizer, window,
                                          args.seed, args.extra_long)
    log(f"long set: {shape}")
    relevant = [rel for _, rel in queries]
    out: dict = {"set": shape, "results": {}}
    real = embed_task.embed_documents
    embed_task.embed_documents = truncating_embed
    try:
        ingest(app, "long-truncated", docs)
    finally:
        embed_task.embed_documents = real
    ranked, _ = ranked_texts(app, open_corpus(app, "long-truncated"), queries, "semantic")
    out["results"]["truncation (semantic, before)"] = retrieval_metrics(ranked, relevant)
    for tokens in args.windows:
        app.settings = dataclasses.replace(app.settings, passage_tokens=tokens)
        name = f"long-passages-{tokens}"
        embedded = ingest(app, name, docs)
        out["set"][f"split with {tokens}-token passages"] = {
            "documents": embedded["split"], "passages": embedded["passages"],
            "embed_seconds": embedded["seconds"]}
        handle = open_corpus(app, name)
        for mode in ("semantic", "lexical", "hybrid"):
            ranked, _ = ranked_texts(app, handle, queries, mode)
            out["results"][f"passages of {tokens} tokens ({mode})"] = \
                retrieval_metrics(ranked, relevant)
        for mode in ("semantic", "hybrid"):  # a split document by its best passage alone
            ranked, _ = ranked_texts(app, handle, queries, mode, fusion=best_passage_only)
            out["results"][f"passages of {tokens} tokens ({mode}, best passage alone)"] = \
                retrieval_metrics(ranked, relevant)
        mean_only = dataclasses.replace(handle, passages=None)
        ranked, _ = ranked_texts(app, mean_only, queries, "semantic")
        out["results"][f"mean of {tokens}-token passages as the document vector (semantic)"] = \
            retrieval_metrics(ranked, relevant)
    app.settings = dataclasses.replace(app.settings, passage_tokens=None)
    for k, v in out["results"].items():
        log(f"long {k}: {v}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--codes", type=int, default=200)
    parser.add_argument("--long", type=int, default=200)
    parser.add_argument("--extra-long", type=int, default=300)
    parser.add_argument("--work", help="data folder to reuse (a run that was stopped)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--corpus-limit", type=int, default=0,
                        help="a quick trial: at most this many STSb sentences besides the queries'")
    parser.add_argument("--parts", default="stsb,long", type=lambda v: v.split(","))
    parser.add_argument("--windows", default="254,127",
                        type=lambda v: [int(x) for x in v.split(",")],
                        help="passage windows (tokens) for the long set")
    parser.add_argument("--out", default=str(RESULTS / "retrieval_quality.json"))
    args = parser.parse_args()

    work = Path(args.work or tempfile.mkdtemp(prefix="retrieval-"))
    os.environ["SEARCHAPP_DATA_DIR"] = str(work)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch: busy machines
    from searchapp.context import App
    from searchapp.vectors.handle import open_corpus

    app = App()
    encoder = app.encoder("all-MiniLM-L6-v2")
    sets = build_sets(args.queries, args.codes, args.long, args.seed, args.corpus_limit)
    log(f"corpus {len(sets['stsb_texts']):,} STSb sentences; {len(sets['paraphrase'])} "
        f"paraphrase queries, {len(sets['keyword'])} codes")
    result = {"machine_load_at_start": os.getloadavg(), "seed": args.seed,
              "speed_path": getattr(encoder, "speed_path", "")}
    if "stsb" in args.parts:
        ingest(app, "stsb", sets["stsb_texts"])
        stsb = open_corpus(app, "stsb")
        result["paraphrase"] = evaluate_set(app, stsb, sets["paraphrase"], "paraphrase")
        result["keyword"] = evaluate_set(app, stsb, sets["keyword"], "keyword")
    if "long" in args.parts:
        result["long"] = long_part(app, encoder, sets, args)
    result["machine_load_at_end"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
