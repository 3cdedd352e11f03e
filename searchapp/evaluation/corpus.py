"""How good search and duplicate detection are on a corpus, measured on judged items.

For judged queries each search mode (semantic, lexical, hybrid) ranks the whole
corpus as the app's own search function does, 100 deep (each query searched once,
every mode ranked from its two candidate lists: ``candidates``; hybrid with the
corpus' fusion, ``search.fusion``, named in the report), and each query gets
nDCG@10, MRR@10, Recall@10 and Recall@100 (``ranking``). For judged pairs the
two documents' vectors give a cosine (the document vectors duplicate mining
uses), and the pairs give AP, the best F1 and its threshold. Every number
comes with its bootstrap 95% interval and the number of items behind it
(``bootstrap``), seeded: the same judgements give the same report.

``compare`` puts two models' evaluations on the same items side by side, each
difference with its paired-bootstrap interval and a verdict: "better",
"worse" or "not distinguishable". The headline verdict rests on the primary
metrics: nDCG@10 of hybrid search (the default mode) for judged queries and AP
for judged pairs, each only when there are enough items to decide on
(``MIN_QUERIES`` queries, ``MIN_PAIRS_PER_ANSWER`` pairs of each answer).

Example:
    >>> report = evaluate(app, "faq", items)                     # doctest: +SKIP
    >>> report.as_dict()["queries"]["modes"]["hybrid"]["ndcg@10"]  # doctest: +SKIP
    {'value': 71.3, 'low': 62.0, 'high': 79.9, 'n': 40}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from searchapp.context import App
from searchapp.errors import InvalidParameterError
from searchapp.evaluation import bootstrap
from searchapp.evaluation.candidates import candidate_lists, ranking
from searchapp.evaluation.enough import (  # noqa: F401  (MIN_*: the rule, named here too)
    MIN_PAIRS_PER_ANSWER,
    MIN_QUERIES,
    pair_shortfall,
    query_shortfall,
)
from searchapp.evaluation.judged import Items, JudgedPair
from searchapp.evaluation.metrics import average_precision, pair_metrics
from searchapp.evaluation.ranking import DEPTH, METRICS, metrics_table
from searchapp.search.fusion import fusion_for, stored_entry
from searchapp.search.service import MODES
from searchapp.store import repo
from searchapp.vectors.handle import CorpusHandle

PRIMARY = {"queries": ("hybrid", "ndcg@10"), "pairs": "ap"}
# Below these a primary metric gives no verdict: with few items of an answer the bootstrap
# can only redraw those same items, and its interval is far too narrow. In the learning
# benchmark (benchmarks/learning_loop.py), held-out proposals with 3 and with 6 non-duplicates
# read "worse" (AP -9.5 and -5.9, intervals just below 0) for models that were 1.3 and 3.3
# AP better on 465 fixed test pairs; with 15 and more the verdicts agreed with the test set.
PAIR_METRICS = ("ap", "f1", "threshold")
MAX_QUERY_CHARS = 10_000
Progress = Callable[[int, int, str], None]


@dataclass
class PairScores:
    """The judged pairs the model could score: cosines and labels, item by item."""

    cosines: np.ndarray  # (n,)
    labels: np.ndarray  # (n,) 0/1
    keys: list[tuple[str, str]]  # (a, b) per item, to line two models up

    def statistic(self, name: str) -> bootstrap.Statistic:
        """The metric on a draw of item indices (AP and F1 as fractions, the threshold as is)."""
        def stat(idx: np.ndarray) -> float:
            sims, labels = self.cosines[idx], self.labels[idx]
            if name == "ap":
                return average_precision(sims, labels) / 100
            m = pair_metrics(sims, labels)
            return m["f1"] / 100 if name == "f1" else m["threshold"]
        return stat


@dataclass
class Evaluation:
    """One model on one corpus' items: per-item values kept for intervals and comparisons."""

    corpus: str
    model: str
    queries: list[str] = field(default_factory=list)  # query texts, in the order of the values
    per_query: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # mode → metric →
    pairs: PairScores | None = None
    skipped_queries: int = 0
    missing_documents: int = 0  # judged documents no longer in the corpus (left out)
    judged_documents: int = 0  # query judgements behind the query metrics
    seconds: float = 0.0
    fusion: dict | None = None  # the hybrid fusion ranked with (search.fusion.Fusion.as_dict)
    fusion_gain: dict | None = None  # a fitted fusion's held-out nDCG@10 gain when it was fitted
    rounds: int = bootstrap.ROUNDS
    seed: int = bootstrap.SEED

    @property
    def judgements(self) -> int:
        """The judgements the numbers rest on."""
        return self.judged_documents + (len(self.pairs.labels) if self.pairs else 0)

    def as_dict(self) -> dict:
        """The report: each metric ×100 with its interval and n, for JSON and the pages."""
        out: dict = {"corpus": self.corpus, "model": self.model, "judgements": self.judgements,
                     "queries": None, "pairs": None,
                     "missing_documents": self.missing_documents,
                     "seconds": round(self.seconds, 2), "fusion": self.fusion,
                     "fusion_gain": self.fusion_gain}
        if self.per_query:
            modes = {mode: {m: bootstrap.mean_interval(values[m], self.rounds, self.seed)
                            .scaled() for m in METRICS} for mode, values in self.per_query.items()}
            out["queries"] = {"n": len(self.queries), "skipped": self.skipped_queries,
                              "modes": modes}
        if self.pairs is not None:
            p = self.pairs
            strata = p.labels
            est = {name: bootstrap.interval(p.statistic(name), len(p.labels), self.rounds,
                                            self.seed, strata) for name in PAIR_METRICS}
            out["pairs"] = {"n": len(p.labels), "positives": int(p.labels.sum()),
                            **{k: est[k].scaled() for k in ("ap", "f1")},
                            "threshold": est["threshold"].scaled(1.0, 4)}
        return out


def check_items(items: Items) -> None:
    """Refuse items with nothing to measure, saying what to judge."""
    if not items.queries and not items.pairs:
        raise InvalidParameterError(
            "Nothing to evaluate: no query with a document judged relevant and no judged pair. "
            "Judge some search results or pairs first (searchapp judge add, or the Label page).")
    if items.pairs:
        labels = {p.label for p in items.pairs}
        if labels != {0, 1}:
            raise InvalidParameterError(
                "Pair judgements need both answers to measure AP and F1: some pairs judged "
                f"duplicate and some not; all {len(items.pairs)} are "
                f"{'duplicate' if 1 in labels else 'not duplicate'}.")


def evaluate(app: App, handle: CorpusHandle, items: Items, progress: Progress | None = None,
             rounds: int = bootstrap.ROUNDS, seed: int = bootstrap.SEED,
             modes: tuple[str, ...] = MODES) -> Evaluation:
    """Score ``handle``'s model on the judged queries (every mode) and pairs of ``items``.

    ``handle`` is the corpus opened with the model (``encoded.handle_for``).
    Judged documents that are no longer in the corpus are left out and counted.
    """
    check_items(items)
    report = progress or (lambda done, total, message: None)
    started = time.monotonic()
    with app.db.session() as s:
        known = {ext: pk for pk, (ext, _) in repo.document_texts(s, handle.corpus_id).items()}
    result = Evaluation(handle.name, handle.model.name, skipped_queries=items.skipped_queries,
                        rounds=rounds, seed=seed)
    missing: set[str] = set()
    queries = []
    for q in items.queries:
        grades = {d: g for d, g in q.grades.items() if d in known}
        missing.update(d for d in q.grades if d not in known)
        if any(g >= 1 for g in grades.values()):
            queries.append((q.query[:MAX_QUERY_CHARS], grades))
        else:
            result.skipped_queries += 1
    if queries:
        fusion = fusion_for(app, handle.corpus_id, handle.model.name)
        lists = candidate_lists(app, handle, [t for t, _ in queries], DEPTH,
                                semantic=set(modes) != {"lexical"},
                                lexical=set(modes) != {"semantic"}, progress=report)
        external = {pk: ext for ext, pk in known.items()}
        for mode in modes:
            rankings = [[external[d] for d in ranking(q, mode, fusion, DEPTH).tolist()
                         if d in external] for q in lists]
            result.per_query[mode] = metrics_table(rankings, [g for _, g in queries])
        result.fusion = fusion.as_dict()
        entry = stored_entry(app, handle.corpus_id, handle.model.name) or {}
        result.fusion_gain = entry.get("gain") if fusion.source == "fitted" else None
    result.queries = [t for t, _ in queries]
    result.judged_documents = sum(len(g) for _, g in queries)
    pairs = [p for p in items.pairs if p.a in known and p.b in known]
    missing.update(d for p in items.pairs for d in (p.a, p.b) if d not in known)
    if pairs and len({p.label for p in pairs}) == 2:
        result.pairs = pair_scores(handle, pairs, known)
    result.missing_documents = len(missing)
    result.seconds = time.monotonic() - started
    return result


def pair_scores(handle: CorpusHandle, pairs: list[JudgedPair], known: dict[str, int]
                ) -> PairScores:
    """Cosines of the judged pairs from the handle's document vectors, (n,)."""
    docs = sorted({known[d] for p in pairs for d in (p.a, p.b)})
    labels, matrix = handle.index.vectors_of(docs)
    row = {int(label): i for i, label in enumerate(labels.tolist())}
    usable = [p for p in pairs if known[p.a] in row and known[p.b] in row]  # embedded ones
    a = matrix[[row[known[p.a]] for p in usable]]
    b = matrix[[row[known[p.b]] for p in usable]]
    return PairScores(np.einsum("ij,ij->i", a, b).astype(float),
                      np.array([p.label for p in usable], dtype=int),
                      [(p.a, p.b) for p in usable])


# ---- two models side by side ---------------------------------------------------------------
@dataclass
class Comparison:
    """Model B (new) against model A (current) on the same items."""

    a: str
    b: str
    queries: dict[str, dict[str, bootstrap.Difference]]  # mode → metric → difference
    pairs: dict[str, bootstrap.Difference]  # "ap", "f1"
    verdict: str  # better | worse | not distinguishable (B against A, on the primary metrics)
    primary: list[str]  # the primary metrics, e.g. ["hybrid nDCG@10", "pair AP"]
    too_few: list[str] = field(default_factory=list)  # primary metrics with too few items

    def as_dict(self) -> dict:
        return {"current": self.a, "candidate": self.b, "verdict": self.verdict,
                "primary": self.primary, "too_few": self.too_few,
                "queries": {mode: {m: d.scaled() for m, d in ms.items()}
                            for mode, ms in self.queries.items()},
                "pairs": {m: d.scaled() for m, d in self.pairs.items()}}

    def sentence(self) -> str:
        """The verdict in one plain sentence for the CLI and the page."""
        parts = []
        for name in self.primary:
            d = self._difference(name)
            parts.append(f"{name} {100 * d.a.value:.2f} → {100 * d.b.value:.2f} "
                         f"(difference {100 * d.delta:+.2f}, 95% interval "
                         f"{100 * d.low:+.2f} to {100 * d.high:+.2f})")
        head = {"better": f"{self.b} is better than {self.a}",
                "worse": f"{self.b} is worse than {self.a}",
                "not distinguishable": f"{self.b} and {self.a} are not distinguishable"}
        text = f"{head[self.verdict]} on the held-out judgements: " + "; ".join(parts) + "."
        if self.too_few:
            text += " Too few to decide on: " + "; ".join(self.too_few) + "."
        return text

    def _difference(self, name: str) -> bootstrap.Difference:
        if name == "pair AP":
            return self.pairs["ap"]
        mode, _, metric = name.partition(" ")
        return self.queries[mode][metric.replace("nDCG", "ndcg")]


def compare(a: Evaluation, b: Evaluation) -> Comparison:
    """B against A, metric by metric with paired-bootstrap intervals, and the verdict."""
    if a.queries != b.queries or (a.pairs is None) != (b.pairs is None) or (
            a.pairs is not None and a.pairs.keys != b.pairs.keys):
        raise InvalidParameterError("Two models can only be compared on the same judged items.")
    queries = {mode: {m: bootstrap.paired_mean_difference(a.per_query[mode][m],
                                                          b.per_query[mode][m],
                                                          a.rounds, a.seed)
                      for m in METRICS} for mode in a.per_query if mode in b.per_query}
    pairs: dict[str, bootstrap.Difference] = {}
    if a.pairs is not None and b.pairs is not None:
        for name in ("ap", "f1"):
            pairs[name] = bootstrap.paired_difference(
                a.pairs.statistic(name), b.pairs.statistic(name), len(a.pairs.labels),
                a.rounds, a.seed, strata=a.pairs.labels)
    decided, primary, too_few = [], [], []
    mode, metric = PRIMARY["queries"]
    if mode in queries:
        primary.append(f"{mode} nDCG@10")
        if (short := query_shortfall(len(a.queries))) is None:
            decided.append(queries[mode][metric].verdict)
        else:
            too_few.append(short)
    if pairs:
        primary.append("pair AP")
        counts = np.bincount(a.pairs.labels, minlength=2)
        if (short := pair_shortfall(int(counts[1]), int(counts[0]))) is None:
            decided.append(pairs[PRIMARY["pairs"]].verdict)
        else:
            too_few.append(short)
    return Comparison(a.model, b.model, queries, pairs, _overall(decided), primary, too_few)


def _overall(verdicts: list[str]) -> str:
    """Better when some primary metric is better and none worse; worse the other way round."""
    if "better" in verdicts and "worse" not in verdicts:
        return "better"
    if "worse" in verdicts and "better" not in verdicts:
        return "worse"
    return "not distinguishable"
