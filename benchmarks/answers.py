"""Answers: the sentence that answers a question, against three baselines, on two real FAQs.

Collections (``benchmarks/answers_collections.py`` says the rules): the Debian FAQ
(``debian-faq``; questions: numbered section headings holding a "?") and Git's FAQ
(``gitfaq`` in ``git-doc``; questions: its definition-list terms). Each question's gold
answer is the text under its heading up to the next heading. The pages indexed are
copies with every question heading's text replaced by its number (or emptied), and
links to questions reduced to their numbers, so that no answer is found by matching
the question's own words; the questions are asked as written.

Each collection is one corpus, ingested the app's own way in a fresh
``SEARCHAPP_DATA_DIR`` (SQLite + hnswlib, the bundled model): ``request_ingest`` of
the copies, the ``ingest`` job, then its ``embed`` job. ``--work DIR`` keeps the data
folder, the copies and the sentence vectors there and reuses them while the copies
are unchanged.

Sentences are those of the stored documents' text (``sentence_spans``). Systems,
each a ranked list of sentences (document id, start, end):

- **ours**: the app's answer finder (``searchapp.answers``: the stored sentences of the
  hybrid search's top passages, scored by the corpus' model; every candidate it scored,
  best first, and whether it answered at the default threshold);
- **top_hit_first**: for each of the hybrid search's top 3 hits, in order, its first
  sentence starting inside the hit's matched passage, else the document's first;
- **bm25_sentence**: the corpus' sentences ranked by Okapi BM25 with sentences as
  the documents (k1 1.2, b 0.75, Lucene's idf, ``\\w+`` lower-case, no stemming);
- **cosine_sentence**: the corpus' sentences ranked by the bundled model's cosine to
  the question (every sentence encoded once; brute force).

A sentence answers (the hit rule) when it stands in the question's own page and its
words (``\\w+`` lower-case, in order) are a run of the gold answer's words: robust to
the reader's line breaks, table cells and quotes, and never true of the question's
heading line, which is not part of its answer. hit@1: the first sentence answers;
hit@3: one of the first three does. For ours also: the share of questions answered
(not silent at its default threshold) and hit@1 among those (precision), the same at
other thresholds (``threshold_sweep``), and the share of 100 questions the collection does
not answer (TREC's, ``../shared/data/trec-qc``) that it answers anyway. Percentile
bootstrap 95% intervals over questions (1,000 resamples, the same resamples for
every system, so differences are paired), per collection and over both; every
system minus the best baseline (by hit@1, then hit@3).

Run:  PYTHONPATH=. .venv/bin/python benchmarks/answers.py [--work /tmp/answers-work]
      ... --quick   (the Debian FAQ's first two chapters, 5 questions per collection)
Writes benchmarks/results/answers.json (``answers_quick.json`` with --quick).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.answers_collections import Collection, collections, words  # noqa: E402
from benchmarks.retrieval_documents import (  # noqa: E402
    BM25,
    K1,
    B,
    _package_version,
    commit,
    difference,
    interval,
    log,
    machine,
)

RESULTS = ROOT / "benchmarks" / "results"
ROUNDS, SEED = 1000, 20240601
TOP = 3
QUICK_QUESTIONS = 5
ENDS = 8  # words at each end that place an answer the reader did not keep whole
SLACK = 1.5
TARGET_POINTS, TARGET_ANSWERED = 5.0, 60.0  # issue 46's acceptance
WORD = re.compile(r"\w+")
BASELINES = ("top_hit_first", "bm25_sentence", "cosine_sentence")
SYSTEMS = ("ours", *BASELINES)


# ---- sentences: the app's own splitter, for the baselines as for ours -----------------------
from searchapp.embedding.sentences import sentence_spans  # noqa: E402

SPLITTER = "searchapp.embedding.sentences"


Sentence = tuple[str, int, int]  # (document id, start, end)


def ours(app, handle, question: str) -> tuple[list[Sentence], bool, float | None]:
    """The app's answer sentences for ``question`` (best first: every candidate the finder
    scored, so hit@3 reads past the 1-3 it shows) and whether it answers (False: silent at
    the corpus' threshold, the default here: nothing is judged), and the first one's score."""
    from searchapp.answers.service import search_with_answers

    _, result = search_with_answers(app, handle, question, answer=True)
    first = result.candidates[0].score if result.candidates else None
    return [(a.doc_id, a.start, a.end) for a in result.candidates], bool(result.answers), first


# ---- corpora -------------------------------------------------------------------------------------
@dataclass
class Corpus:
    """One collection as ingested: its corpus, stored texts and sentences."""

    collection: Collection
    name: str
    texts: dict  # document id -> stored text
    sentences: list  # [(doc id, start, end)], every sentence of the corpus
    ingest: dict


def corpus_name(c: Collection, quick: bool) -> str:
    return f"faq-{c.name}" + ("-quick" if quick else "")


def pages_digest(c: Collection) -> str:
    h = hashlib.sha256()
    for p in sorted(c.pages):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def ingest(app, corpus: str, pages: list[Path]) -> dict:
    """The copies through the app's way in: the ``ingest`` job, then its ``embed`` job."""
    from searchapp.intake.files_job import request_ingest
    from searchapp.jobs.worker import run_until_done

    started = time.perf_counter()
    job = run_until_done(app, request_ingest(app, corpus, pages))
    if job.status != "succeeded":
        raise SystemExit(f"ingest job failed: {job.error}")
    report, embed = job.result, {}
    if report.get("failed") or report.get("skipped"):
        raise SystemExit(f"ingest problems: {report.get('problems')}")
    read_s = time.perf_counter() - started
    if report.get("embed_job") is not None:
        ejob = run_until_done(app, report["embed_job"])
        if ejob.status != "succeeded":
            raise SystemExit(f"embed job failed: {ejob.error}")
        embed = ejob.result
    out = {"files": len(pages), "documents": report.get("documents"),
           "embed_job": {k: embed[k] for k in ("passages", "split") if k in embed},
           "ingest_job_s": round(read_s, 1),
           "embed_job_s": round(time.perf_counter() - started - read_s, 1)}
    log(f"ingested {corpus}: {out}")
    return out


def prepare(app, c: Collection, quick: bool, manifest: dict) -> Corpus:
    """The collection's corpus: reused when its copies are unchanged, else (re)ingested."""
    from searchapp.corpora import service
    from searchapp.corpora.documents import get_many
    from searchapp.store import repo

    name, digest = corpus_name(c, quick), pages_digest(c)
    with app.db.session() as s:
        exists = repo.find_corpus(s, name) is not None
    kept = manifest.get(name, {})
    if exists and kept.get("pages_sha256") == digest:
        report = {**kept["ingest"], "reused": True}
        log(f"reusing {name}")
    else:
        if exists:
            service.delete(app, name)
        report = ingest(app, name, c.pages)
        manifest[name] = {"pages_sha256": digest, "ingest": report}
    ids = [p.name for p in c.pages]
    found, missing = get_many(app, name, ids)
    if missing:
        raise SystemExit(f"{name}: no stored document named {missing[:3]}: the ids changed?")
    texts = {d.id: d.text for d in found}
    sentences = [(i, a, b) for i, t in texts.items() for a, b in sentence_spans(t)]
    return Corpus(c, name, texts, sentences, report)


# ---- the systems ---------------------------------------------------------------------------------
def top_hit_first(app, handle, corpus: Corpus, question: str) -> list[Sentence]:
    """Each of the top hybrid hits' first sentence in its matched passage (else its first)."""
    from searchapp.search.service import search

    out = []
    for hit in search(app, handle, question, k=TOP, mode="hybrid"):
        spans = sentence_spans(corpus.texts.get(hit.id, hit.text))
        lo, hi = hit.span or (0, len(hit.text))
        first = next(((a, b) for a, b in spans if lo <= a < hi), spans[0] if spans else None)
        if first is not None:
            out.append((hit.id, *first))
    return out


def best_of(scores: np.ndarray, sentences: list[Sentence]) -> list[Sentence]:
    """The TOP sentences by score, ties in corpus order."""
    order = np.argsort(-scores, kind="stable")[:TOP]
    return [sentences[i] for i in order]


class SentenceRankers:
    """BM25 and cosine over every sentence of one corpus, built once."""

    def __init__(self, app, corpus: Corpus, model: str, cache: Path | None):
        texts = [corpus.texts[d][a:b] for d, a, b in corpus.sentences]
        t0 = time.perf_counter()
        self.bm25 = BM25(texts)
        self.bm25_build_s = time.perf_counter() - t0
        self.encoder = app.encoder(model)
        t0 = time.perf_counter()
        self.vectors = _sentence_vectors(self.encoder, texts, model, cache)
        self.encode_s = time.perf_counter() - t0
        self.sentences = corpus.sentences

    def bm25_sentence(self, question: str) -> list[Sentence]:
        return best_of(self.bm25.scores(question), self.sentences)

    def cosine_sentence(self, question: str) -> list[Sentence]:
        # the app's query path, uncached: the hybrid search encoded the question already
        v = np.asarray(self.encoder.encode_query(question, use_cache=False))
        return best_of(self.vectors @ (v / np.linalg.norm(v)), self.sentences)


def _sentence_vectors(encoder, texts: list[str], model: str, cache: Path | None) -> np.ndarray:
    """Unit vectors of ``texts``; kept in ``cache`` (a .npy named by a hash of both)."""
    key = hashlib.sha256(json.dumps([model, texts]).encode()).hexdigest()[:16]
    path = cache / f"sentences-{key}.npy" if cache else None
    if path is not None and path.exists():
        return np.load(path)
    vecs = np.asarray(encoder.encode(texts), dtype=np.float32)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
    return vecs


# ---- the hit rule --------------------------------------------------------------------------------
def word_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, lower-cased word) of every \\w+ token of ``text``."""
    return [(m.start(), m.end(), m.group().lower()) for m in WORD.finditer(text)]


def locate(text: str, answer: str, ends: int = ENDS) -> tuple[tuple[int, int] | None, str]:
    """The gold answer's character span in the stored ``text`` and how it was found.

    ``exact``: its words, in order, are a run of the text's words (the first such run);
    ``ends``: its first and last ``ends`` words are (a block the reader left out inside
    the answer), the run at most ``SLACK`` times the answer's length; else (None, ``missing``).
    """
    doc = word_spans(text)
    gold = words(answer).split()
    if not gold:
        return None, "missing"
    tokens = [w for _, _, w in doc]
    hit = _run(tokens, gold)
    if hit is not None:
        return (doc[hit][0], doc[hit + len(gold) - 1][1]), "exact"
    head, tail = gold[:ends], gold[-ends:]
    start = _run(tokens, head)
    if start is not None:
        end = _run(tokens, tail, start + len(head))
        if end is not None and end + len(tail) - start <= SLACK * len(gold):
            return (doc[start][0], doc[end + len(tail) - 1][1]), "ends"
    return None, "missing"


def _run(tokens: list[str], part: list[str], after: int = 0) -> int | None:
    """The first index ≥ ``after`` where ``part`` stands in ``tokens``, or None."""
    first, n = part[0], len(part)
    for i in range(after, len(tokens) - n + 1):
        if tokens[i] == first and tokens[i:i + n] == part:
            return i
    return None


def answers(sentence: Sentence, corpus: Corpus, page: str, gold: tuple[int, int]) -> bool:
    """The hit rule: the sentence stands in the question's page and its words (from its
    first \\w+ token to its last) lie inside the gold answer's span there."""
    doc, a, b = sentence
    if doc != page:
        return False
    said = word_spans(corpus.texts[doc][a:b])
    return bool(said) and gold[0] <= a + said[0][0] and a + said[-1][1] <= gold[1]


# ---- running -------------------------------------------------------------------------------------
def run_collection(app, corpus: Corpus, cache: Path | None, quick: bool) -> tuple[list, dict]:
    """Per question: each system's top 3 with hits, ours' answered flag; ms per query."""
    from searchapp.search.service import open_corpus, search

    handle = open_corpus(app, corpus.name)
    search(app, handle, "warm up the encoder and the indexes", k=TOP, mode="hybrid")
    rankers = SentenceRankers(app, corpus, handle.model.name, cache)
    systems = {"top_hit_first": lambda q: top_hit_first(app, handle, corpus, q),
               "bm25_sentence": rankers.bm25_sentence,
               "cosine_sentence": rankers.cosine_sentence}
    questions, gold = placed(corpus)
    if quick:
        questions = questions[:QUICK_QUESTIONS]
    rows = [{"collection": corpus.collection.name, "qid": q.qid, "question": q.text,
             "page": q.page, "gold_answer": q.answer, "gold_span": gold[q.qid][0],
             "gold_found": gold[q.qid][1], "systems": {}} for q in questions]
    ms = {}
    ours_note = _run_ours(app, handle, corpus, questions, gold, rows, ms)
    for name, system in systems.items():
        t0 = time.perf_counter()
        ranked = [system(q.text) for q in questions]
        ms[name] = round(1000 * (time.perf_counter() - t0) / max(1, len(questions)), 1)
        for row, q, r in zip(rows, questions, ranked, strict=True):
            row["systems"][name] = {"top": _described(r, corpus, q, gold[q.qid][0])}
    counts = handle.passages.passage_counts if handle.passages is not None else {}
    corpus.ingest["passages_indexed"] = sum(counts.values())
    timings = {"ms_per_query": ms, "bm25_build_s": round(rankers.bm25_build_s, 1),
               "sentences_encode_s": round(rankers.encode_s, 1), "ours": ours_note,
               "unrelated_questions": None if quick else unrelated_answered(app, handle)}
    return rows, timings


UNRELATED = 100  # TREC questions (../shared/data/trec-qc) asked of each corpus


def unrelated_answered(app, handle) -> dict:
    """Questions the collection does not answer (TREC's, about films, people, places): the
    share ours answers anyway (false answers) and the best scores they got. The first
    ``UNRELATED`` of TREC's training questions from number 1,000 on."""
    import csv
    import gzip

    from searchapp.answers.service import search_with_answers

    path = ROOT.parent / "shared" / "data" / "trec-qc" / "trec-train.tsv.gz"
    if not path.is_file():
        return {"skipped": f"{path} not found"}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        asked = [r["text"] for r in csv.DictReader(f, delimiter="\t")][1000:1000 + UNRELATED]
    best, answered = [], 0
    for q in asked:
        _, result = search_with_answers(app, handle, q, answer=True)
        best.append(result.candidates[0].score if result.candidates else 0.0)
        answered += bool(result.answers)
    return {"questions": len(asked), "answered_percent": round(100 * answered / len(asked), 1),
            "best_score_p50": round(float(np.median(best)), 3),
            "best_score_p90": round(float(np.percentile(best, 90)), 3)}


def _run_ours(app, handle, corpus: Corpus, questions, gold: dict, rows, ms) -> str:
    """Ours into ``rows`` ("answered" per question)."""
    t0 = time.perf_counter()
    got = [ours(app, handle, q.text) for q in questions]
    ms["ours"] = round(1000 * (time.perf_counter() - t0) / max(1, len(questions)), 1)
    for row, q, (ranked, answered, score) in zip(rows, questions, got, strict=True):
        row["systems"]["ours"] = {"top": _described(ranked, corpus, q, gold[q.qid][0]),
                                  "answered": bool(answered), "score": score}
    return "run"


def _described(ranked: list[Sentence], corpus: Corpus, q, gold: tuple[int, int]) -> list[dict]:
    return [{"doc": d, "start": a, "end": b, "text": corpus.texts[d][a:b],
             "answers": answers((d, a, b), corpus, q.page, gold)} for d, a, b in ranked[:TOP]]


def placed(corpus: Corpus) -> tuple[list, dict]:
    """(the questions whose gold answer was found in the stored text, {qid: (span, how)})."""
    gold = {q.qid: locate(corpus.texts[q.page], q.answer) for q in corpus.collection.questions}
    return [q for q in corpus.collection.questions if gold[q.qid][0] is not None], gold


# ---- metrics -------------------------------------------------------------------------------------
def per_system(rows: list[dict], name: str) -> dict[str, np.ndarray]:
    top = [r["systems"][name]["top"] for r in rows]
    out = {"hit@1": np.array([1.0 if t and t[0]["answers"] else 0.0 for t in top]),
           "hit@3": np.array([1.0 if any(s["answers"] for s in t[:TOP]) else 0.0
                              for t in top])}
    if name == "ours":
        out["answered"] = np.array([1.0 if r["systems"]["ours"]["answered"] else 0.0
                                    for r in rows])
    return out


def ratio_interval(hits: np.ndarray, answered: np.ndarray, draws: np.ndarray) -> dict:
    """Precision among the answered: Σ hit·answered / Σ answered, per resample."""
    num, den = (hits * answered)[draws].sum(axis=1), answered[draws].sum(axis=1)
    means = num[den > 0] / den[den > 0]
    value = float((hits * answered).sum() / answered.sum()) if answered.sum() else 0.0
    lo, hi = np.percentile(means, [2.5, 97.5]) if len(means) else (0.0, 0.0)
    return {"value": round(100 * value, 1), "low": round(100 * float(lo), 1),
            "high": round(100 * float(hi), 1)}


def metrics(rows: list[dict], seed: int = SEED) -> dict:
    """hit@1 and hit@3 with intervals per system, ours' answered share and precision, and
    every system minus the best baseline (by hit@1, then hit@3), paired."""
    ran = [s for s in SYSTEMS if rows and s in rows[0]["systems"]]
    n = len(rows)
    draws = np.random.default_rng(seed).integers(0, n, size=(ROUNDS, n))
    values = {s: per_system(rows, s) for s in ran}
    table = {s: {m: interval(v, draws) for m, v in values[s].items()} for s in ran}
    if "ours" in values:
        table["ours"]["precision_answered"] = ratio_interval(
            values["ours"]["hit@1"], values["ours"]["answered"], draws)
    best = max(BASELINES, key=lambda b: (values[b]["hit@1"].mean(), values[b]["hit@3"].mean()))
    diffs = {f"{s} - {best}": {m: difference(values[s][m], values[best][m], draws)
                               for m in ("hit@1", "hit@3")} for s in ran if s != best}
    return {"questions": n, "systems": table, "best_baseline": best, "differences": diffs}


SWEEP = [round(0.30 + 0.025 * i, 3) for i in range(17)]  # 0.30 ... 0.70


def threshold_sweep(rows: list[dict]) -> list[dict]:
    """Ours at other thresholds: the share answered and the precision among them (the
    first sentence scored at or above the threshold, and right), per threshold."""
    out = []
    for t in SWEEP:
        shown = [r for r in rows if (r["systems"]["ours"].get("score") or -9) >= t]
        right = sum(bool(r["systems"]["ours"]["top"] and r["systems"]["ours"]["top"][0]
                         ["answers"]) for r in shown)
        out.append({"threshold": t, "answered": round(100 * len(shown) / max(1, len(rows)), 1),
                    "precision": round(100 * right / len(shown), 1) if shown else None})
    return out


def target_met(m: dict) -> bool | None:
    """The issue's target over both collections (None while ours has not run)."""
    ours_row = m["systems"].get("ours")
    if ours_row is None:
        return None
    ahead = m["differences"][f"ours - {m['best_baseline']}"]["hit@1"]["value"]
    return ahead >= TARGET_POINTS and ours_row["answered"]["value"] >= TARGET_ANSWERED


# ---- printing ------------------------------------------------------------------------------------
def _ci(d: dict) -> str:
    return f"{d['value']:5.1f} [{d['low']:5.1f}, {d['high']:5.1f}]"


def print_table(label: str, m: dict) -> None:
    print(f"\n{label}: {m['questions']} questions; best baseline {m['best_baseline']}")
    print(f"  {'system':<18} {'hit@1 [95% CI]':>22} {'hit@3 [95% CI]':>22}")
    for s, t in m["systems"].items():
        extra = ""
        if "answered" in t:
            extra = (f"  answered {_ci(t['answered'])}  precision "
                     f"{_ci(t['precision_answered'])}")
        print(f"  {s:<18} {_ci(t['hit@1']):>22} {_ci(t['hit@3']):>22}{extra}")
    for label2, d in m["differences"].items():
        print(f"  {label2:<36} hit@1 {d['hit@1']['value']:+5.1f} [{d['hit@1']['low']:+5.1f}, "
              f"{d['hit@1']['high']:+5.1f}] {d['hit@1']['verdict']}; hit@3 "
              f"{d['hit@3']['value']:+5.1f} [{d['hit@3']['low']:+5.1f}, "
              f"{d['hit@3']['high']:+5.1f}]")


# ---- main ----------------------------------------------------------------------------------------
def open_work(work: Path | None) -> tuple[Path, bool]:
    """(the work folder, whether it is kept): ``--work`` or a temporary one."""
    if work is None:
        return Path(tempfile.mkdtemp(prefix="bench-answers-")), False
    work.mkdir(parents=True, exist_ok=True)
    return work.resolve(), True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, help="keep the copies, the data folder and the "
                        "sentence vectors here, and reuse them while the copies are unchanged")
    parser.add_argument("--quick", action="store_true", help="a smoke run: the Debian FAQ's "
                        f"first two chapters, {QUICK_QUESTIONS} questions per collection")
    parser.add_argument("--out", type=Path, help="write the result here instead")
    args = parser.parse_args()

    started, at_start, head = time.perf_counter(), machine(), commit()
    work, kept = open_work(args.work)
    os.environ["SEARCHAPP_DATA_DIR"] = str(work / "data")
    os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")
    from searchapp.context import App

    made = collections(work / "pages", quick=args.quick)
    manifest_path = work / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    app = App()
    try:
        rows, per, timings, corpora = [], {}, {}, {}
        for c in made:
            corpus = prepare(app, c, args.quick, manifest)
            manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
            got, timings[c.name] = run_collection(app, corpus, work / "vectors", args.quick)
            rows += got
            per[c.name] = metrics(got)
            per[c.name]["threshold_sweep"] = threshold_sweep(got)
            corpora[c.name] = _corpus_summary(corpus, got)
            log(f"{c.name}: {len(got)} questions done")
        overall = metrics(rows)
        overall["threshold_sweep"] = threshold_sweep(rows)
        for name, m in per.items():
            print_table(name, m)
        print_table("both", overall)
        for name, m in [*per.items(), ("both", overall)]:
            print(f"{name} threshold → answered % / precision %: " + ", ".join(
                f"{x['threshold']:.3f} → {x['answered']}/{x['precision']}"
                for x in m["threshold_sweep"]))
        run_s = round(time.perf_counter() - started, 1)
        target = target_met(overall)
        for name, t in timings.items():
            print(f"{name}: unrelated questions (TREC) answered anyway: "
                  f"{t['unrelated_questions']}")
        print(f"\nrun time {run_s} s; sentences by {SPLITTER}; ours: "
              f"{ {k: t['ours'] for k, t in timings.items()} }; target: {target}")
        result = {
            "benchmark": "answers", "quick": args.quick, "commit": head,
            "commit_at_end": commit(), "machine_at_start": at_start,
            "machine_at_end": machine(), "run_s": run_s, "splitter": SPLITTER,
            "collections": corpora, "metrics": {**per, "both": overall},
            "hit_rule": "the sentence is in the question's page and its lower-cased \\w+ words "
                        "are a run of the gold answer's",
            "target": {"rule": f"ours' hit@1 ahead of the best baseline by at least "
                                f"{TARGET_POINTS} points, at least {TARGET_ANSWERED}% of "
                                "questions answered (over both collections)",
                       "met": target},
            "bootstrap": {"rounds": ROUNDS, "seed": SEED, "paired": True},
            "baseline_settings": {"top_hit_first": {"mode": "hybrid", "hits": TOP},
                                  "bm25": {"k1": K1, "b": B, "tokens": r"\w+ lower-case",
                                           "documents": "sentences"},
                                  "cosine": {"model": app.settings.model,
                                             "search": "brute force"}},
            "timings": timings, "per_question": rows}
        out = args.out or RESULTS / ("answers_quick.json" if args.quick else "answers.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        log(f"wrote {out}")
    finally:
        close = getattr(app, "close", None)
        if callable(close):
            close()
        if kept:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _corpus_summary(corpus: Corpus, rows: list[dict]) -> dict:
    c = corpus.collection
    return {"corpus": corpus.name, "source": c.source, "package": c.package,
            "package_version": _package_version(c.package), "rule": c.rule,
            "pages": len(c.pages), "questions": len(c.questions), "asked": len(rows),
            "left_out": c.left_out, "sentences": len(corpus.sentences),
            "characters": sum(len(t) for t in corpus.texts.values()), "ingest": corpus.ingest,
            "question_words_left_in_index": _question_words_left(corpus),
            "gold_found": _gold_found(corpus)}


def _gold_found(corpus: Corpus) -> dict:
    """How the gold answers were placed in the stored text (exact, by their ends, missing),
    and the questions left out for want of one."""
    _, gold = placed(corpus)
    hows = [how for _, how in gold.values()]
    return {"exact": hows.count("exact"), "ends": hows.count("ends"),
            "missing": [qid for qid, (_, how) in gold.items() if how == "missing"]}


def _question_words_left(corpus: Corpus) -> list[str]:
    """Questions whose words, in order, still stand in some stored text (should be none)."""
    stored = " " + " ".join(words(t) for t in corpus.texts.values()) + " "
    return [q.qid for q in corpus.collection.questions if f" {words(q.text)} " in stored]


if __name__ == "__main__":
    main()
