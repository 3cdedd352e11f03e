"""The duplicate threshold from the corpus' own judgements, for a precision the user chooses.

A threshold picked for the best F1 on an uploaded file assumes duplicates are as
common among the pairs it decides as in the file. In a corpus they usually are
not (a balanced 50/50 file put one corpus' threshold at 0.690 and took it from
19,992 pairs to 45,292, most of them wrong). So here:

1. The judged pairs (Label page, review queue, marks) give P(duplicate | cosine):
   a logistic curve fitted on their cosines. Proposals choose pairs *by*
   cosine, which leaves this conditional probability unbiased even though the
   judged sample is not a random one.
2. The corpus' own mined pairs (the stored duplicates result with the lowest
   floor) say how many pairs lie at each cosine. Their sum of P(duplicate)
   above a threshold is the expected number of true duplicates there, and its
   share of the pairs is the expected precision; exact copies count as duplicates.
3. The threshold for a precision p is the lowest one whose expected precision
   is at least p (with the judged precision above it shown beside, and how
   many judged pairs that rests on).

The same fit estimates the corpus' share of duplicates among its candidate
pairs, which ``share_warning`` compares with an uploaded file's.

Example:
    >>> fit = fit_logistic(np.array([0.6, 0.7, 0.8, 0.9]), np.array([0, 0, 1, 1]))
    >>> bool(fit.p(np.array([0.95]))[0] > 0.5 > fit.p(np.array([0.55]))[0])
    True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from searchapp.duplicates.calibration import CURVE_POINTS, Calibration
from searchapp.duplicates.mining import Mined
from searchapp.duplicates.params import KIND
from searchapp.errors import InvalidParameterError, JudgementError, check_range
from searchapp.evaluation.metrics import pair_metrics, precision_recall_curve
from searchapp.judgements import service
from searchapp.judgements.estimate import pair_cosines
from searchapp.store import repo
from searchapp.vectors.handle import CorpusHandle, as_handle

if TYPE_CHECKING:
    from searchapp.context import App

MIN_JUDGED = 10  # pairs, with both answers among them, before a threshold is suggested
GRID_STEP = 0.01
SHARE_GAP = 0.15  # a file whose duplicate share differs more than this is warned about


def sigmoid(t: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-t)) without overflow for any t (a steep fit on separated judgements
    gives |t| in the thousands).

    Example:
        >>> sigmoid(np.array([-1e4, 0.0, 1e4])).tolist()
        [0.0, 0.5, 1.0]
    """
    t = np.asarray(t, np.float64)
    small = np.exp(-np.abs(t))  # in (0, 1]: never overflows
    return np.where(t >= 0, 1.0 / (1.0 + small), small / (1.0 + small))


@dataclass(frozen=True)
class Logistic:
    """P(duplicate | cosine) = 1 / (1 + exp(-(w·cosine + b)))."""

    w: float
    b: float

    def p(self, cosine: np.ndarray) -> np.ndarray:
        return sigmoid(self.w * np.asarray(cosine, np.float64) + self.b)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> Logistic:
    """A one-feature logistic regression by Newton's method, lightly regularised (so a
    perfectly separated sample, common with few judgements, still gives a finite slope).

    Example:
        >>> fit_logistic(np.array([0.5, 0.9]), np.array([0, 1])).w > 0
        True
    """
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    mean, scale = x.mean(), x.std() or 1.0
    z = (x - mean) / scale
    X = np.stack([np.ones_like(z), z], axis=1)  # (n, 2)
    theta = np.zeros(2)
    for _ in range(steps):
        p = sigmoid(X @ theta)
        grad = X.T @ (p - y) + l2 * np.r_[0.0, theta[1]]
        hess = (X * (p * (1 - p))[:, None]).T @ X + np.diag([1e-9, l2])
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    w = theta[1] / scale
    return Logistic(float(w), float(theta[0] - w * mean))


@dataclass(frozen=True)
class ThresholdRow:
    threshold: float
    pairs: int | None  # mined pairs at or above it (None: below the mined floor)
    precision: float | None  # expected precision over those pairs
    duplicates: float | None  # expected true duplicates among them
    judged: int  # judged pairs at or above it
    judged_precision: float | None  # the share of those judged duplicate


@dataclass(frozen=True)
class JudgedCalibration:
    corpus: str
    model: str
    judged: int  # judged pairs with vectors
    positives: int
    ap: float  # on the judged pairs (×100, as the file calibration)
    fit: Logistic
    floor: float | None  # the mined result's floor (None: never mined)
    share: float | None  # expected share of duplicates among mined pairs ≥ floor
    rows: list[ThresholdRow]

    def for_precision(self, precision: float) -> ThresholdRow | None:
        """The lowest threshold whose expected precision (judged precision where the corpus
        was not mined that low) reaches ``precision``; None when none does."""
        check_range("precision", precision, 0.0, 1.0)
        for row in self.rows:
            value = row.precision if row.precision is not None else row.judged_precision
            if value is not None and value >= precision:
                return row
        return None

    def row_at(self, threshold: float) -> ThresholdRow | None:
        return min(self.rows, key=lambda r: abs(r.threshold - threshold), default=None)

    def as_dict(self) -> dict:
        out = asdict(self)
        out["fit"] = {"w": self.fit.w, "b": self.fit.b}
        return out


def lowest_mined(app: App, handle: CorpusHandle) -> Mined | None:
    """The stored duplicates result of the corpus as it is now with the lowest floor."""
    with app.db.session() as s:
        rows = repo.current_analyses(s, handle.corpus_id, handle.model.id, KIND,
                                     handle.generation)
        if not rows:
            return None
        best = min(rows, key=lambda r: (r.params.get("floor", 2.0), -r.params.get("k", 0)))
        info, blob = best.result, best.arrays
    return Mined.from_stored(info, repo.unpack_arrays(blob))


def judged_pair_scores(app: App, handle: CorpusHandle) -> tuple[np.ndarray, np.ndarray]:
    """(cosines, labels) of the corpus' pair judgements that have vectors."""
    judged = service.list_judgements(app, handle.name, kind="pair")
    cos = pair_cosines(app, handle, [(j.a, j.b) for j in judged])
    labels = np.array([j.label for j in judged], np.int64)
    keep = ~np.isnan(cos)
    return cos[keep].astype(np.float64), labels[keep]


def calibrate_on_judgements(app: App, corpus: str | CorpusHandle, low: float = 0.5
                            ) -> JudgedCalibration:
    """Expected pairs and precision at each threshold from ``low`` to 1, on the corpus'
    judged pairs and its mined pairs (see the module's docstring).

    Example:
        >>> cal = calibrate_on_judgements(app, "faq")                  # doctest: +SKIP
        >>> cal.for_precision(0.9).threshold, cal.for_precision(0.9).pairs  # doctest: +SKIP
        (0.84, 15210)
    """
    handle = as_handle(app, corpus)
    cos, labels = judged_pair_scores(app, handle)
    positives = int(labels.sum())
    if len(labels) < MIN_JUDGED or positives == 0 or positives == len(labels):
        raise JudgementError(
            f"Corpus {handle.name!r} has {len(labels)} judged pairs ({positives} duplicates); "
            f"a threshold needs at least {MIN_JUDGED}, some duplicates and some not. The "
            "Label page and the review queue ask about the pairs that decide it.")
    fit = fit_logistic(cos, labels)
    mined = lowest_mined(app, handle)
    p_mined = None
    if mined is not None:
        p_mined = np.where(mined.exact, 1.0, fit.p(mined.score))  # (p,)
        order = np.argsort(-mined.score)
        sorted_scores = mined.score[order]
        cum_p = np.cumsum(p_mined[order])
    rows = []
    for t in np.round(np.arange(low, 1.0 + 1e-9, GRID_STEP), 4):
        above = cos >= t
        judged_precision = float(labels[above].mean()) if above.any() else None
        pairs = precision = duplicates = None
        if mined is not None and t >= mined.floor - 1e-9:
            n = int(np.searchsorted(-sorted_scores, -t, side="right"))  # scores ≥ t
            n_exact_below = int((mined.exact & (mined.score < t)).sum())  # kept at any t
            pairs = n + n_exact_below
            duplicates = float(cum_p[n - 1]) + n_exact_below if n else float(n_exact_below)
            precision = duplicates / pairs if pairs else None
        rows.append(ThresholdRow(float(t), pairs, precision, duplicates, int(above.sum()),
                                 judged_precision))
    share = float(p_mined.mean()) if p_mined is not None and len(p_mined) else None
    return JudgedCalibration(handle.name, handle.model.name, len(labels), positives,
                             pair_metrics(cos, labels)["ap"], fit,
                             mined.floor if mined is not None else None, share, rows)


def share_warning(file_share: float, calibration: JudgedCalibration | None,
                  file_threshold: float | None = None) -> str | None:
    """A sentence when a labelled file's share of duplicates is far from the corpus' own.

    Example:
        >>> share_warning(0.5, None) is None
        True
    """
    if calibration is None:
        return None
    if not 0.0 <= file_share <= 1.0:
        raise InvalidParameterError(f"A share is between 0 and 1; got {file_share}.")
    corpus_share = calibration.share
    where = (f"among this corpus' candidate pairs (cosine ≥ {calibration.floor:.2f})"
             if corpus_share is not None else "among this corpus' judged pairs")
    if corpus_share is None:
        corpus_share = calibration.positives / calibration.judged
    if abs(file_share - corpus_share) <= SHARE_GAP:
        return None
    text = (f"The file is {file_share:.0%} duplicates; {where} about {corpus_share:.0%} are "
            f"(estimated from {calibration.judged} judged pairs). A threshold chosen for the "
            "best F1 on the file assumes duplicates are as common as there")
    row = calibration.row_at(file_threshold) if file_threshold is not None else None
    if row is not None and abs(row.threshold - file_threshold) <= GRID_STEP / 2 and \
            row.pairs is not None and row.precision is not None:
        text += (f": at {file_threshold:.3f} this corpus would have {row.pairs:,} pairs, "
                 f"an estimated {row.precision:.0%} of them duplicates")
    elif file_threshold is not None and calibration.floor is not None and \
            file_threshold < calibration.floor:
        lowest = calibration.row_at(calibration.floor)
        text += (f": at {file_threshold:.3f} this corpus would have more pairs than the "
                 f"{lowest.pairs:,} it has down to cosine {calibration.floor:.2f}")
    return text + ". Calibrate on this corpus' judgements for the precision you want instead."


def as_calibration(app: App, result: JudgedCalibration, row: ThresholdRow) -> Calibration:
    """The chosen row as the model's Calibration (what ``save_threshold`` stores): its F1,
    precision and recall on the judged pairs, and their precision-recall curve (×100)."""
    handle = as_handle(app, result.corpus)
    cos, labels = judged_pair_scores(app, handle)
    kept = cos >= row.threshold
    tp = int((kept & (labels == 1)).sum())
    precision = tp / max(1, int(kept.sum()))
    recall = tp / max(1, int(labels.sum()))
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    p, r, t = precision_recall_curve(cos, labels)
    step = max(1, len(t) // CURVE_POINTS)
    keep = np.r_[np.arange(0, len(t), step), len(t) - 1] if len(t) else np.zeros(0, int)
    curve = {"precision": np.round(p[keep], 4).tolist(), "recall": np.round(r[keep], 4).tolist(),
             "threshold": np.round(t[keep], 4).tolist()}
    return Calibration(result.model, row.threshold, result.ap, round(100 * f1, 2),
                       round(100 * precision, 2), round(100 * recall, 2), result.judged,
                       result.positives, curve, f"judgements of corpus {result.corpus}")
