"""Bootstrap 95% intervals for a metric, and the paired comparison of two models.

A metric measured on 40 judged queries is an estimate: another 40 queries of
the same kind would give another number. The percentile bootstrap (Efron 1979)
puts a range on it without assuming a distribution: draw the judged items
(queries, or pairs) with replacement as many times as there are items,
recompute the metric, ``ROUNDS`` times; the middle 95% of those values is the
interval. Draws come from a seeded generator, so the same judgements always
give the same interval.

Two models judged on the same items are compared *paired*: each round draws
one set of items and scores both models on it, so what the items have in
common (an easy query is easy for both) cancels out, and the interval of the
difference is much narrower than the two intervals side by side suggest. The
verdict is "better" when that interval lies above 0, "worse" when below, and
"not distinguishable" otherwise (Koehn 2004 uses the same test for MT metrics).

Pairs labelled duplicate / not duplicate are drawn within each label
(stratified), so no round lacks either label and AP is always defined.

Example:
    >>> est = mean_interval(np.array([0.0, 1.0, 1.0, 0.5]), seed=1)
    >>> est.value, est.n, 0.0 <= est.low <= est.value <= est.high <= 1.0
    (0.625, 4, True)
    >>> diff = paired_mean_difference(np.zeros(30), np.full(30, 0.2), seed=1)
    >>> diff.verdict, round(diff.delta, 2)
    ('better', 0.2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from math import comb

import numpy as np

from searchapp.errors import InvalidParameterError

ROUNDS = 1000
LEVEL = 0.95
SEED = 20231123
VERDICTS = ("better", "worse", "not distinguishable")
EXACT_UP_TO = 16  # items: the sign-flip test enumerates all 2**n signs up to here
Statistic = Callable[[np.ndarray], float]  # item indices (n,) → the metric on those items


@dataclass(frozen=True)
class Estimate:
    """A metric on all the items, its bootstrap interval and the number of items."""

    value: float
    low: float
    high: float
    n: int

    def scaled(self, factor: float = 100.0, digits: int = 2) -> dict:
        """``{"value", "low", "high", "n"}`` with the numbers × ``factor``, rounded (for JSON)."""
        return {"value": round(self.value * factor, digits),
                "low": round(self.low * factor, digits),
                "high": round(self.high * factor, digits), "n": self.n}


@dataclass(frozen=True)
class Difference:
    """Model B minus model A on the same items: the difference, its interval, the verdict."""

    a: Estimate
    b: Estimate
    delta: float
    low: float
    high: float
    verdict: str  # one of VERDICTS, B measured against A

    def scaled(self, factor: float = 100.0, digits: int = 2) -> dict:
        out = asdict(self)
        out["a"], out["b"] = self.a.scaled(factor, digits), self.b.scaled(factor, digits)
        for key in ("delta", "low", "high"):
            out[key] = round(out[key] * factor, digits)
        return out


def resamples(n: int, rounds: int = ROUNDS, seed: int = SEED,
              strata: np.ndarray | None = None) -> np.ndarray:
    """Item indices (rounds, n), drawn with replacement; within each stratum when given.

    Example:
        >>> draws = resamples(4, rounds=3, seed=0, strata=np.array([1, 1, 0, 0]))
        >>> draws.shape, bool(np.isin(draws[:, :2], [2, 3]).all())   # label 0 first, then 1
        ((3, 4), True)
    """
    if n < 1:
        raise InvalidParameterError("A bootstrap needs at least one judged item.")
    rng = np.random.default_rng(seed)
    if strata is None:
        return rng.integers(0, n, size=(rounds, n))
    strata = np.asarray(strata)
    if len(strata) != n:
        raise InvalidParameterError(f"{len(strata)} strata labels for {n} items.")
    parts = [rng.choice(np.flatnonzero(strata == s), size=(rounds, int((strata == s).sum())))
             for s in np.unique(strata)]
    return np.concatenate(parts, axis=1)


def _bounds(values: np.ndarray) -> tuple[float, float]:
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def interval(statistic: Statistic, n: int, rounds: int = ROUNDS, seed: int = SEED,
             strata: np.ndarray | None = None) -> Estimate:
    """The statistic on all ``n`` items, and its percentile bootstrap interval.

    Example:
        >>> values = np.array([1.0, 2.0, 3.0])
        >>> interval(lambda idx: float(values[idx].max()), 3, seed=0).value
        3.0
    """
    draws = resamples(n, rounds, seed, strata)
    replicated = np.array([statistic(idx) for idx in draws])
    low, high = _bounds(replicated)
    return Estimate(float(statistic(np.arange(n))), low, high, n)


def mean_interval(values: np.ndarray, rounds: int = ROUNDS, seed: int = SEED) -> Estimate:
    """The mean of per-item values (per-query nDCG, ...) with its interval; vectorised."""
    values = np.asarray(values, dtype=float)
    draws = resamples(len(values), rounds, seed)
    low, high = _bounds(values[draws].mean(axis=1))
    return Estimate(float(values.mean()), low, high, len(values))


def verdict(low: float, high: float) -> str:
    """"better" when the interval of B − A lies above 0, "worse" below, else undecided.

    Example:
        >>> verdict(0.01, 0.05), verdict(-0.02, 0.03), verdict(-0.05, -0.001)
        ('better', 'not distinguishable', 'worse')
    """
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "not distinguishable"


def paired_difference(stat_a: Statistic, stat_b: Statistic, n: int, rounds: int = ROUNDS,
                      seed: int = SEED, strata: np.ndarray | None = None) -> Difference:
    """B − A on the same draws of the ``n`` items: the difference, its interval, the verdict."""
    draws = resamples(n, rounds, seed, strata)
    a = np.array([stat_a(idx) for idx in draws])
    b = np.array([stat_b(idx) for idx in draws])
    full = np.arange(n)
    value_a, value_b = float(stat_a(full)), float(stat_b(full))
    low, high = _bounds(b - a)
    return Difference(Estimate(value_a, *_bounds(a), n), Estimate(value_b, *_bounds(b), n),
                      value_b - value_a, low, high, verdict(low, high))


def paired_mean_difference(values_a: np.ndarray, values_b: np.ndarray, rounds: int = ROUNDS,
                           seed: int = SEED) -> Difference:
    """``paired_difference`` of two per-item value arrays' means; vectorised."""
    values_a, values_b = np.asarray(values_a, float), np.asarray(values_b, float)
    if values_a.shape != values_b.shape:
        raise InvalidParameterError("Both models must be scored on the same items.")
    draws = resamples(len(values_a), rounds, seed)
    a, b = values_a[draws].mean(axis=1), values_b[draws].mean(axis=1)
    low, high = _bounds(b - a)
    n = len(values_a)
    return Difference(Estimate(float(values_a.mean()), *_bounds(a), n),
                      Estimate(float(values_b.mean()), *_bounds(b), n),
                      float(values_b.mean() - values_a.mean()), low, high, verdict(low, high))


def sign_flip_p(differences: np.ndarray, rounds: int = 20_000, seed: int = SEED) -> float:
    """One-sided p-value that the mean of paired ``differences`` (B − A) is above 0.

    The paired randomization (sign-flip) test: under "no difference" each item's
    difference is as likely to have either sign, so the observed mean is compared
    with the means of every sign assignment (all 2**n of them up to ``EXACT_UP_TO``
    items, else ``rounds`` seeded draws). Unlike a bootstrap interval it stays honest
    with a handful of items: with 5 the smallest p-value there is is 1/32, reached
    only when all 5 improve.

    Example:
        >>> sign_flip_p(np.array([0.1, 0.2, 0.1, 0.3, 0.2]))       # all 5 better: 1 of 32
        0.03125
        >>> sign_flip_p(np.array([0.1, 0.2, -0.1, 0.3, 0.2])) > 0.05
        True
        >>> sign_flip_p(np.zeros(4))                                # nothing moved
        1.0
    """
    d = np.asarray(differences, dtype=float)
    if d.size == 0:
        return 1.0
    observed = d.mean()
    if d.size <= EXACT_UP_TO:
        signs = 1 - 2 * ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1)
    else:
        signs = np.random.default_rng(seed).choice([-1, 1], size=(rounds, d.size))
    means = (signs * d).mean(axis=1)
    return float(np.mean(means >= observed - 1e-12))


def sign_test_needs(n: int, alpha: float = 0.05) -> int | None:
    """How many of ``n`` items must improve (the others worse by as much) for
    ``sign_flip_p`` to fall under ``alpha``; None when even all ``n`` are not enough.

    Example:
        >>> sign_test_needs(4), sign_test_needs(5), sign_test_needs(10), sign_test_needs(20)
        (None, 5, 9, 15)
    """
    for k in range(n + 1):
        if sum(comb(n, j) for j in range(k, n + 1)) / 2 ** n < alpha:
            return k
    return None
