"""What an answer adds to a hybrid search: p50/p95 at 10,000 and 1,000,000 passages.

The corpus (stored through our store, indexed through the App's caches as a first open
does): documents of ``--per-doc`` passages, each passage three real sentences (the NLI
pairs' premises and hypotheses in ``../shared/data/nli``, reused round-robin), so
the full-text side searches real words. Vectors are clustered synthetic unit vectors
(``benchmarks/synthetic.py``): a passage's own, its document's the normalised mean, each
sentence its passage's plus noise; the sentence rows (spans, float16 vectors) are what the
embed job stores (``store/sentences.py``). No encoding of the corpus is involved: what is
measured is the query path.

Queries: real questions (TREC's, ``../shared/data/trec-qc``), encoded by the bundled model
on the app's query path. Per query, in alternating order so load bursts hit both alike:

- **peer**: ``search`` (hybrid, k=10), as the Search page ran before answers;
- **ours**: ``search_with_answers(answer=True)`` (hybrid, k=10, the answer sought for every
  query): the same search plus the answer's stage (the passages' cosines, the sentence rows
  by primary key, scoring, de-duplication, the threshold).

Reports p50/p95 of both, their difference (what the answer adds) and the answer stage's own
time (``StageTimes``' "answers"), and writes benchmarks/results/answers_latency_{N}.json.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/answers_latency.py --passages 10000
      PYTHONPATH=. .venv/bin/python benchmarks/answers_latency.py --passages 1000000 --work DIR
(``--work`` keeps the stored corpus and its indexes: a second run measures only.)
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sentence_cache import data_dir as shared_data  # noqa: E402
from synthetic import MODEL, clustered_vectors  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
BATCH_DOCS = 2_000
SENTENCES_PER_PASSAGE = 3
NOISE = 0.35  # a sentence's vector: its passage's plus this much Gaussian noise, normalised


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sentence_pool() -> list[str]:
    """Real sentences: the NLI files' premises and hypotheses, unique, in file order."""
    seen: dict[str, None] = {}
    for name in ("nli-train-small.tsv.gz", "nli-dev.tsv.gz"):
        with gzip.open(shared_data() / "nli" / name, "rt", encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                for text in (row["premise"], row["hypothesis"]):
                    text = " ".join(text.split())
                    if 20 <= len(text) <= 200:
                        seen.setdefault(text if text[-1] in ".!?" else text + ".", None)
    return list(seen)


def questions(n: int) -> list[str]:
    with gzip.open(shared_data() / "trec-qc" / "trec-train.tsv.gz", "rt", encoding="utf-8") as f:
        rows = [" ".join(r["text"].split()) for r in csv.DictReader(f, delimiter="\t")]
    return rows[:n]


def document(pool: list[str], start: int, per_doc: int) -> tuple[str, list, list]:
    """A document's text, its passages' spans and each passage's sentence spans."""
    text, passages, sentences = "", [], []
    for p in range(per_doc):
        begin, spans = len(text), []
        for s in range(SENTENCES_PER_PASSAGE):
            sentence = pool[(start + p * SENTENCES_PER_PASSAGE + s) % len(pool)]
            spans.append((len(text), len(text) + len(sentence)))
            text += sentence + " "
        passages.append((begin, len(text) - 1))
        sentences.append(spans)
        text = text[:-1] + "\n\n"
    return text.rstrip(), passages, sentences


def store(app, name: str, n_passages: int, per_doc: int, seed: int) -> dict:
    """Documents, vectors, passages and sentences stored as the embed job stores them."""
    from searchapp.store import repo

    model = app.model_ref(MODEL)
    docs = n_passages // per_doc
    pool = sentence_pool()
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, MODEL)
        corpus_id = corpus.id
    layout: dict[str, tuple[list, list]] = {}
    for first in range(0, docs, BATCH_DOCS):
        batch = range(first, min(first + BATCH_DOCS, docs))
        made = {f"{name}-{d}": document(pool, d * per_doc * SENTENCES_PER_PASSAGE, per_doc)
                for d in batch}
        with app.db.session() as s:
            corpus = repo.get_or_create_corpus(s, name, MODEL)
            repo.add_documents(s, corpus, [repo.NewDocument(ext, text)
                                           for ext, (text, _, _) in made.items()])
        layout.update({ext: (p, sent) for ext, (_, p, sent) in made.items()})
        if first % (50 * BATCH_DOCS) == 0:
            log(f"{first + len(batch):,} of {docs:,} documents stored")
    documents_s = time.perf_counter() - started
    started = time.perf_counter()
    with app.db.session() as s:
        by_id = repo.external_ids(s, corpus_id)  # {row id: external id}
    ids = sorted(by_id)
    for first in range(0, len(ids), BATCH_DOCS):
        batch = ids[first:first + BATCH_DOCS]
        passage_vectors = clustered_vectors(len(batch) * per_doc, seed=seed + first)
        passage_vectors = passage_vectors.reshape(len(batch), per_doc, -1)
        means = passage_vectors.mean(axis=1)
        means /= np.linalg.norm(means, axis=1, keepdims=True)
        passages, sentences = {}, {}
        for row, doc in enumerate(batch):
            spans, sentence_spans = layout[by_id[doc]]
            passages[row] = (passage_vectors[row], np.asarray(spans, np.int32))
            sentences[row] = []
            for number, own in enumerate(sentence_spans):
                noisy = passage_vectors[row, number] + NOISE * rng.standard_normal(
                    (len(own), passage_vectors.shape[2])).astype(np.float32) / 20
                noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
                sentences[row].append((number, np.asarray(own, np.int32), noisy))
        with app.db.session() as s:
            repo.save_embeddings(s, corpus_id, model.id, batch, means, passages, sentences)
        if first % (50 * BATCH_DOCS) == 0:
            log(f"{first + len(batch):,} of {len(ids):,} documents' vectors stored")
    return {"documents": docs, "store_documents_s": round(documents_s, 1),
            "store_vectors_s": round(time.perf_counter() - started, 1)}


def percentiles(ms: list[float]) -> dict:
    return {"p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(float(np.percentile(ms, 95)), 2),
            "mean_ms": round(statistics.fmean(ms), 2)}


def measure(app, handle, texts: list[str], rounds: int) -> dict:
    """Peer and ours per query, alternating which goes first."""
    from searchapp.answers.service import search_with_answers
    from searchapp.base.timing import StageTimes
    from searchapp.search.service import search

    for text in texts[:5]:  # warm: the query path built, the caches of the first pages
        search_with_answers(app, handle, text, answer=True)
    peer, ours, stage, answered = [], [], [], 0
    for r in range(rounds):
        for i, text in enumerate(texts):
            order = ("peer", "ours") if (i + r) % 2 == 0 else ("ours", "peer")
            for who in order:
                started = time.perf_counter()
                if who == "peer":
                    search(app, handle, text, k=10)
                    peer.append(1000 * (time.perf_counter() - started))
                else:
                    times = StageTimes()
                    _, result = search_with_answers(app, handle, text, answer=True, k=10,
                                                    times=times)
                    ours.append(1000 * (time.perf_counter() - started))
                    stage.append(times.ms().get("answers", 0.0))
                    answered += bool(result.answers)
    out = {"queries": len(texts), "rounds": rounds, "peer_hybrid": percentiles(peer),
           "ours_hybrid_with_answers": percentiles(ours),
           "answer_stage": percentiles(stage),
           "added_p50_ms": round(statistics.median(ours) - statistics.median(peer), 2),
           "added_p95_ms": round(float(np.percentile(ours, 95) - np.percentile(peer, 95)), 2),
           "ours_over_peer_p50": round(statistics.median(ours) / statistics.median(peer), 3),
           "answered_share": round(answered / len(ours), 3)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--per-doc", type=int, default=10)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--work", help="keep the corpus here (reused by a later run)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")
    data = Path(args.work or tempfile.mkdtemp(prefix="answers-latency-")) / "data"
    os.environ["SEARCHAPP_DATA_DIR"] = str(data)
    from searchapp.context import App
    from searchapp.vectors.handle import open_corpus

    reused = (data / "searchapp.db").is_file()  # before App() creates it
    app, name = App(), "answers"
    stored = {"reused": True} if reused else store(app, name, args.passages, args.per_doc,
                                                   args.seed)
    log(f"stored: {stored}")
    started = time.perf_counter()
    handle = open_corpus(app, name)
    build_s = round(time.perf_counter() - started, 1)
    app.indexes.save(handle.corpus_id, handle.model)
    app.passage_indexes.save(handle.corpus_id, handle.model)
    log(f"indexes: {handle.index.count:,} documents, {handle.passages.count:,} passages, "
        f"opened in {build_s} s")
    result = {"benchmark": "answers_latency", "passages": handle.passages.count,
              "documents": handle.index.count, "per_doc": args.per_doc, **stored,
              "index_open_or_build_s": build_s,
              "machine": {"cpu": _cpu(), "cores": os.cpu_count(),
                          "load_1_5_15": list(os.getloadavg())},
              **measure(app, handle, questions(args.queries), args.rounds)}
    result["machine_at_end_load"] = list(os.getloadavg())
    print(json.dumps(result, indent=1))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"answers_latency_{args.passages}.json").write_text(json.dumps(result, indent=1))
    return 0


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
