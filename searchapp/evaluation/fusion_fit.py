"""Fit hybrid search's fusion to a corpus' own judged queries; keep it only if it measurably helps.

Hybrid search fuses the semantic and the lexical list by weighted reciprocal
rank (``searchapp.search.fusion``); its defaults were chosen on other data. Here
each judged query is searched once, both lists ``MAX_DEPTH`` deep
(``candidates``), and every fusion of a grid (semantic weight, its value for
queries with a digit, the RRF constant, the depth) is scored by re-fusing those
cached lists in numpy: nDCG@10 per query per grid point, no search re-run.

Which fusion wins is judged on queries it was not fitted on. Each query falls in
one of ``FOLDS`` parts by a hash of its text (stable as judgements grow, as in
``training/holdout.py``); the fusion fitted on the other parts scores it. With
fewer than ``enough.LEAVE_ONE_OUT_BELOW`` judged queries each query is its own
part (leave-one-query-out), so 5 judged queries are enough to try. Those
held-out scores against the fusion in use now give the verdict: the paired
bootstrap (``bootstrap.paired_mean_difference``) and the exact sign-flip test
(``bootstrap.sign_flip_p``; a bootstrap of 5 items is too sure of itself). The
fusion fitted on all the queries is stored for the corpus only when both say
"better" (the interval above 0, p < ``enough.ALPHA``). Fewer than
``enough.MIN_FIT_QUERIES`` judged queries, or no shown gain: the fusion in use
stays, and the sentence says what was measured and how sure it is.

Example:
    >>> fit = fit_fusion(app, "pg")                                  # doctest: +SKIP
    >>> fit.kept, fit.fusion.describe()                              # doctest: +SKIP
    (True, 'fitted: semantic weight 1 (6 with a digit), RRF k 3, depth 50')
    >>> fit.sentence()                                               # doctest: +SKIP
    'Fitted fusion kept (fitted: ...): held-out hybrid nDCG@10 68.43 → 70.15 (+1.72, 95% ...'
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from searchapp.context import App
from searchapp.evaluation import bootstrap
from searchapp.evaluation.candidates import QueryLists, candidate_lists, rank_table
from searchapp.evaluation.encoded import handle_for
from searchapp.evaluation.enough import ALPHA, LEAVE_ONE_OUT_BELOW, fit_shortfall
from searchapp.evaluation.job_payloads import FitFusionPayload
from searchapp.evaluation.judged import Items
from searchapp.evaluation.service import judgement_items
from searchapp.jobs.kinds import submit
from searchapp.search.fusion import MAX_DEPTH, Fusion, fusion_for, save_fusion
from searchapp.store import repo
from searchapp.vectors.handle import CorpusHandle

WEIGHTS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)  # semantic weight (lexical: 1)
RRF_KS = (1, 3, 5, 10, 20, 40, 60)
DEPTHS = (10, 20, 30, 50, 75, 100)
FOLDS = 5
FOLD_SEED = "searchapp-fusion-v1"
KIND = "fit-fusion"  # the job (searchapp.jobs.tasks)
Progress = Callable[[int, int, str], None]


@dataclass
class FusionFit:
    """What a fit found, what it was measured against and whether it was kept."""

    corpus: str
    model: str
    queries: int  # judged queries the fit used
    kept: bool
    fusion: Fusion  # the fusion hybrid search uses from now on
    candidate: Fusion | None = None  # the fusion fitted on all queries (kept or not)
    previous: Fusion | None = None  # the fusion in use before
    gain: dict | None = None  # bootstrap.Difference.scaled(): held-out nDCG@10 before → after
    reason: str = ""
    seconds: float = 0.0
    timings: dict = field(default_factory=dict)  # seconds: search, grid
    corpus_id: int = 0

    def store(self, app: App) -> bool:
        """Store the fusion for the corpus and model when the fit was kept; whether it was."""
        if self.kept:
            save_fusion(app, self.corpus_id, self.model, self.fusion,
                        {"gain": self.gain, "queries": self.queries})
        return self.kept

    def as_dict(self) -> dict:
        """For JSON: the CLI's ``--json``, the learning job's result, the stored record."""
        return {"corpus": self.corpus, "model": self.model, "queries": self.queries,
                "kept": self.kept, "fusion": self.fusion.as_dict(),
                "candidate": self.candidate and self.candidate.as_dict(),
                "previous": self.previous and self.previous.as_dict(),
                "gain": self.gain, "reason": self.reason, "sentence": self.sentence(),
                "verdict": self.verdict(),
                "seconds": round(self.seconds, 2), "timings": self.timings}

    def verdict(self) -> str:
        """"better" (kept), "worse", "not distinguishable" or "not measured" (too few)."""
        if self.gain is None:
            return "not measured"
        return "better" if self.kept else \
            "worse" if self.gain["high"] < 0 else "not distinguishable"

    def sentence(self) -> str:
        """The outcome in one plain sentence."""
        if self.gain is None:
            return f"Fusion unchanged ({self.fusion.describe()}): {self.reason}"
        g = self.gain
        measured = (f"held-out hybrid nDCG@10 {g['a']['value']:.2f} → {g['b']['value']:.2f} "
                    f"({g['delta']:+.2f}, 95% interval {g['low']:+.2f} to {g['high']:+.2f}, "
                    f"{g.get('improved', '?')} of {self.queries} judged queries better, "
                    f"{g.get('worse', '?')} worse, sign-flip p = {g.get('p', float('nan')):.3f};"
                    f" {g.get('held_out', 'folds')})")
        if self.kept:
            return f"Fitted fusion kept ({self.fusion.describe()}): {measured}."
        return f"Fusion unchanged ({self.fusion.describe()}): {self.reason}; {measured}."


def fold_of(query: str, folds: int = FOLDS) -> int:
    """The part a judged query belongs to, by a hash of its text: the same every time.

    Example:
        >>> fold_of("vacuum full") == fold_of("vacuum full"), 0 <= fold_of("x") < FOLDS
        (True, True)
    """
    digest = hashlib.sha256(f"{FOLD_SEED}:{query}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % folds


def fit_fusion(app: App, corpus: str, model: str | None = None, items: Items | None = None,
               save: bool = True, progress: Progress | None = None,
               handle: CorpusHandle | None = None) -> FusionFit:
    """Fit the hybrid fusion of ``corpus`` (with ``model``, default its own) to judged queries.

    ``items``: the judged queries (default: the corpus' judgements). The fitted
    fusion replaces the one in use (stored per corpus and model) only when it is
    better on held-out queries and ``save`` is true; otherwise nothing changes
    (``fit.store(app)`` stores a kept fit later, e.g. once its model is adopted).
    ``handle``: the corpus already opened with the model (a learning job's
    candidate encoded in memory, ``encoded.encode_corpus``), so nothing is encoded
    again. Costs one search per judged query (900 queries: 19 s on 2 busy cores,
    ``benchmarks/fusion_fit.py``) plus about a second of numpy.

    Example:
        >>> fit = fit_fusion(app, "pg")                                # doctest: +SKIP
        >>> fit.kept, fit.gain["delta"]                                # doctest: +SKIP
        (True, 1.72)
        >>> fit = fit_fusion(app, "pg", model="pg-v2", handle=candidate, save=False)
        ... # doctest: +SKIP
        >>> fit.store(app)          # later, once pg-v2 is adopted     # doctest: +SKIP
        True
    """
    started = time.monotonic()
    handle = handle or handle_for(app, corpus, model)
    items = judgement_items(app, handle.name) if items is None else items
    queries, grades = _judged(app, handle.corpus_id, items)
    previous = fusion_for(app, handle.corpus_id, handle.model.name)
    fit = FusionFit(handle.name, handle.model.name, len(queries), False, previous,
                    previous=previous, corpus_id=handle.corpus_id)
    short = fit_shortfall(len(queries))
    if short:
        fit.reason = (f"{short}. Judge more search results (Search or Label page, or "
                      "`searchapp judge import`).")
        return _done(fit, started)
    lists = candidate_lists(app, handle, queries, MAX_DEPTH, progress=progress)
    fit.timings["search"] = round(time.monotonic() - started, 2)
    grid = Grid.score(lists, grades)
    fit.timings["grid"] = round(time.monotonic() - started - fit.timings["search"], 2)
    _decide(fit, grid, lists, grades)
    if save:
        fit.store(app)
    return _done(fit, started)


def request_fusion_fit(app: App, corpus: str, model: str | None = None) -> int:
    """Queue a ``fit-fusion`` job for ``corpus`` (with ``model``, default its own); its id.

    Example:
        >>> job_id = request_fusion_fit(app, "manual")                  # doctest: +SKIP
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)  # an unknown corpus fails here, listing them
    return submit(app.db, FitFusionPayload(state.name, model or state.model_name))


def fit_fusion_task(ctx, payload: FitFusionPayload) -> dict:
    """The job: fit on the corpus' judgements, keep if better; the FusionFit as a dict."""
    def report(done: int, total: int, message: str) -> None:
        ctx.progress(done, total, message, force=done in (0, total))

    return fit_fusion(ctx.app, payload.corpus, payload.model,
                      progress=report).as_dict()


def _done(fit: FusionFit, started: float) -> FusionFit:
    fit.seconds = time.monotonic() - started
    return fit


def _judged(app: App, corpus_id: int, items: Items) -> tuple[list[str], list[dict[int, int]]]:
    """Query texts and their grades by document id, for queries with a relevant document."""
    with app.db.session() as s:
        known = {ext: pk for pk, (ext, _) in repo.document_texts(s, corpus_id).items()}
    queries, grades = [], []
    for q in items.queries:
        g = {known[d]: grade for d, grade in q.grades.items() if d in known}
        if any(v >= 1 for v in g.values()) and q.query.strip():
            queries.append(q.query)
            grades.append(g)
    return queries, grades


def _decide(fit: FusionFit, grid: Grid, lists: list[QueryLists],
            grades: list[dict[int, int]]) -> None:
    """Cross-fitted held-out scores against the fusion in use; keep the fit if better."""
    current = ndcg_at_10(lists, grades, fit.previous)
    decision = decide(grid, [q.query for q in lists], current)
    fit.candidate, fit.gain = decision.candidate, decision.gain
    if decision.better and fit.candidate != fit.previous:
        fit.kept, fit.fusion = True, fit.candidate
    else:
        fit.reason = decision.reason


@dataclass
class Decision:
    """The held-out comparison of a fit with the fusion in use (``decide``)."""

    candidate: Fusion  # fitted on every query
    held: np.ndarray  # each query's nDCG@10 under the fusion fitted without it (its fold)
    gain: dict  # bootstrap.Difference.scaled() and p, improved, worse, held_out
    better: bool
    reason: str


def decide(grid: Grid, queries: list[str], current: np.ndarray) -> Decision:
    """Each query scored by the fusion fitted on the other parts (leave-one-query-out
    below ``LEAVE_ONE_OUT_BELOW`` queries, else ``FOLDS`` hashed parts), against
    ``current`` (each query's nDCG@10 now): "better" only when the bootstrap interval
    lies above 0 and the sign-flip p-value is under ``ALPHA``.

    Example:
        >>> d = decide(grid, queries, ndcg_at_10(lists, grades, DEFAULT))   # doctest: +SKIP
        >>> d.better, d.gain["p"]                                           # doctest: +SKIP
        (False, 0.0625)
    """
    n = len(queries)
    loo = n < LEAVE_ONE_OUT_BELOW
    folds = np.arange(n) if loo else np.array([fold_of(q) for q in queries])
    held = np.zeros(n)
    for f in np.unique(folds):
        part = folds == f
        held[part] = grid.values(grid.best(~part))[part]
    diff = bootstrap.paired_mean_difference(current, held)
    p = bootstrap.sign_flip_p(held - current)
    gain = diff.scaled() | {
        "p": round(p, 5), "improved": int((held > current + 1e-9).sum()),
        "worse": int((held < current - 1e-9).sum()),
        "held_out": "each query judged by a fit on the others" if loo
        else f"{FOLDS} hashed parts"}
    better = diff.verdict == "better" and p < ALPHA
    if better:
        reason = ""
    elif diff.verdict == "worse":
        reason = "the fitted fusion is worse than the one in use on held-out queries"
    else:
        needs = bootstrap.sign_test_needs(n, ALPHA)
        reason = ("not enough evidence that the fitted fusion is better than the one in use on "
                  f"held-out queries (p = {p:.3f}; with {n} queries a gain is shown when "
                  + (f"at least {needs} of {n} improve)" if needs else "... never: too few)"))
    return Decision(grid.fusion(grid.best(np.ones(n, bool))), held, gain, better, reason)


def ndcg_at_10(lists: list[QueryLists], grades: list[dict[int, int]], fusion: Fusion
               ) -> np.ndarray:
    """Each query's nDCG@10 under ``fusion`` (hybrid, the first 10 as ``search(k=10)``)."""
    table = _Table.build(lists, grades)
    return table.ndcg(fusion.semantic_weight, fusion.digit_weight, fusion.rrf_k,
                      max(10, fusion.depth))


@dataclass
class Grid:
    """nDCG@10 per query for every (weight, RRF k, depth) of the grid: (W, K, D, Q)."""

    values_: np.ndarray  # (len(WEIGHTS), len(RRF_KS), len(DEPTHS), queries)
    digit: np.ndarray  # (queries,) bool: the query holds a digit (its weight is digit_weight)

    @classmethod
    def score(cls, lists: list[QueryLists], grades: list[dict[int, int]]) -> Grid:
        table = _Table.build(lists, grades)
        out = np.zeros((len(WEIGHTS), len(RRF_KS), len(DEPTHS), len(lists)))
        for (i, w), (j, k), (d, depth) in itertools.product(
                enumerate(WEIGHTS), enumerate(RRF_KS), enumerate(DEPTHS)):
            out[i, j, d] = table.ndcg(w, w, k, max(10, depth))
        return cls(out, table.digit)

    def best(self, use: np.ndarray) -> tuple[int, int, int, int]:
        """(weight index, digit weight index, k index, depth index) best on queries ``use``."""
        plain = self.values_[..., use & ~self.digit].sum(axis=-1)  # (W, K, D)
        digit = self.values_[..., use & self.digit].sum(axis=-1)
        total = plain.max(axis=0) + digit.max(axis=0)  # (K, D)
        j, d = np.unravel_index(int(np.argmax(total)), total.shape)
        return int(np.argmax(plain[:, j, d])), int(np.argmax(digit[:, j, d])), int(j), int(d)

    def values(self, at: tuple[int, int, int, int]) -> np.ndarray:
        """Each query's nDCG@10 under the fusion at grid point ``at``."""
        w, wd, j, d = at
        return np.where(self.digit, self.values_[wd, j, d], self.values_[w, j, d])

    @staticmethod
    def fusion(at: tuple[int, int, int, int]) -> Fusion:
        w, wd, j, d = at
        return Fusion(WEIGHTS[w], WEIGHTS[wd], RRF_KS[j], DEPTHS[d], source="fitted")


@dataclass
class _Table:
    """The queries' candidates side by side, padded: ranks, gains and ideal DCGs, (Q, U)."""

    sem: np.ndarray  # (Q, U) 1-based semantic rank, 0 where absent
    lex: np.ndarray  # (Q, U) 1-based lexical rank, 0 where absent
    gains: np.ndarray  # (Q, U) the judged grade of each candidate (0 if unjudged)
    ideal: np.ndarray  # (Q,) the ideal DCG@10 of each query
    digit: np.ndarray  # (Q,) bool

    @classmethod
    def build(cls, lists: list[QueryLists], grades: list[dict[int, int]]) -> _Table:
        tables = [rank_table(q, MAX_DEPTH) for q in lists]
        width = max([len(t[0]) for t in tables] + [1])
        sem, lex, gains = (np.zeros((len(lists), width)) for _ in range(3))
        for i, ((docs, s, x), g) in enumerate(zip(tables, grades, strict=True)):
            sem[i, :len(docs)], lex[i, :len(docs)] = s, x
            gains[i, :len(docs)] = [g.get(int(d), 0) for d in docs]
        ideal = np.array([_dcg(np.sort([v for v in g.values() if v >= 1])[::-1][:10])
                          for g in grades])
        digit = np.array([any(ch.isdigit() for ch in q.query) for q in lists], dtype=bool)
        return cls(sem, lex, gains, ideal, digit)

    def ndcg(self, weight: float, digit_weight: float, k: float, depth: int) -> np.ndarray:
        """nDCG@10 per query of the fusion (weight, digit weight, k, depth), (Q,)."""
        w = np.where(self.digit, digit_weight, weight)[:, None]
        with np.errstate(divide="ignore"):
            part_sem = np.where((self.sem >= 1) & (self.sem <= depth), w / (k + self.sem), 0)
            part_lex = np.where((self.lex >= 1) & (self.lex <= depth), 1.0 / (k + self.lex), 0)
        scores = part_sem + part_lex
        tie = np.where(self.sem >= 1, self.sem, 1e9)
        order = np.lexsort((tie, -scores), axis=-1)[:, :10]
        top = np.take_along_axis(self.gains * (scores > 0), order, axis=1)
        return _dcg(top) / self.ideal


def _dcg(gains: np.ndarray) -> np.ndarray | float:
    """DCG of gains in rank order along the last axis (linear gain, log2 discount)."""
    gains = np.asarray(gains, dtype=float)
    discounts = 1.0 / np.log2(np.arange(2, gains.shape[-1] + 2))
    return (gains * discounts).sum(axis=-1)
