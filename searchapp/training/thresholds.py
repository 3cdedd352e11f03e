"""The duplicate threshold follows the model: a new encoder moves the cosine scale.

Fine-tuned on 2,000 Quora pairs, a model scored better on held-out pairs, but
at the old default 0.80 the corpus' pairs went from 19,992 to 33,424 and
unrelated questions merged into one group: its cosines had moved up. So when
a corpus may switch model, the new model gets a threshold of its own that
means what the old one meant, in one of two ways:

- **same precision** (``by_precision``), when judged pairs are there to
  measure it: the lowest threshold at which the new model's precision on those
  pairs is at least what the old model's threshold achieved on them;
- **same number of pairs** (``by_count``), otherwise: the threshold at which
  the new model finds as many pairs in the corpus as the old one finds at its
  threshold. The count is estimated from a seeded sample of documents, each
  compared with every document of the corpus (``expected_pairs``): the pairs
  above t in the sample, scaled by corpus / sample size and halved (each pair
  is seen from both ends).

Example:
    >>> rng = np.random.default_rng(0)
    >>> old = rng.normal(size=(300, 8)); old /= np.linalg.norm(old, axis=1, keepdims=True)
    >>> new = old * 0.5 + 0.5 * old.mean(0); new /= np.linalg.norm(new, axis=1, keepdims=True)
    >>> t, counts = by_count(old, new, 0.8, sample=300)   # new squeezes cosines upwards
    >>> t > 0.8, counts["old"] == counts["new"]
    (True, True)
"""

from __future__ import annotations

import numpy as np

from searchapp.evaluation.metrics import precision_recall_curve

SAMPLE = 2_000
FLOOR = -1.0
CHUNK = 256  # sample rows multiplied at a time: (CHUNK, n) floats in memory


def _sample_rows(n: int, sample: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))


def _sample_similarities(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Every cosine between a sampled document and another document, flattened, descending."""
    out = []
    for start in range(0, len(rows), CHUNK):
        part = rows[start:start + CHUNK]
        sims = matrix[part] @ matrix.T  # (chunk, n)
        sims[np.arange(len(part)), part] = -np.inf  # not itself
        out.append(sims[sims > FLOOR])
    return np.sort(np.concatenate(out))[::-1] if out else np.zeros(0)


def expected_pairs(matrix: np.ndarray, threshold: float | np.ndarray, sample: int = SAMPLE,
                   seed: int = 0) -> np.ndarray | float:
    """Estimated number of document pairs of the corpus at or above ``threshold``.

    ``matrix``: the corpus' unit vectors (n, dim) under one model.

    Example:
        >>> m = np.eye(3, dtype=np.float32); m[1] = m[0]          # documents 0 and 1 are alike
        >>> float(expected_pairs(m, 0.9))
        1.0
    """
    n = len(matrix)
    rows = _sample_rows(n, sample, seed)
    sims = _sample_similarities(matrix, rows)[::-1]  # ascending
    above = len(sims) - np.searchsorted(sims, np.asarray(threshold), side="left")
    estimate = above * (n / max(len(rows), 1)) / 2
    return float(estimate) if np.ndim(estimate) == 0 else estimate


def by_count(old: np.ndarray, new: np.ndarray, threshold: float, sample: int = SAMPLE,
             seed: int = 0) -> tuple[float, dict]:
    """The new model's threshold that keeps the corpus' expected number of pairs.

    ``old`` and ``new``: the same documents' vectors (n, dim) under each model.
    Returns the threshold and {"old", "new"}: expected pairs at each model's threshold.
    """
    rows = _sample_rows(len(old), sample, seed)
    old_sims = _sample_similarities(old, rows)
    new_sims = _sample_similarities(new, rows)
    keep = int(np.sum(old_sims >= threshold))  # pairs (seen from both ends) in the sample
    if keep == 0:
        carried = float(new_sims[0]) + 1e-6 if len(new_sims) else threshold
    else:  # midway between the keep-th highest new cosine and the next one
        below = new_sims[keep] if keep < len(new_sims) else new_sims[keep - 1] - 1e-3
        carried = float((new_sims[keep - 1] + below) / 2)
    scale = len(old) / max(len(rows), 1) / 2
    return round(min(carried, 1.0), 4), {
        "old": round(keep * scale), "new": round(int(np.sum(new_sims >= carried)) * scale)}


def by_precision(old_scores: np.ndarray, new_scores: np.ndarray, labels: np.ndarray,
                 threshold: float) -> float | None:
    """The lowest new-model threshold whose precision on the judged pairs reaches the old one's.

    None when the old threshold predicts no pair duplicate (no precision to match)
    or the new model never reaches that precision.

    Example:
        >>> labels = np.array([1, 1, 0, 0])
        >>> by_precision(np.array([.9, .85, .7, .6]), np.array([.95, .93, .91, .5]), labels, 0.8)
        0.93
    """
    predicted = np.asarray(old_scores) >= threshold
    if not predicted.any():
        return None
    target = float(np.asarray(labels)[predicted].mean())
    precision, _recall, thresholds = precision_recall_curve(new_scores, labels)
    ok = np.flatnonzero(precision >= target - 1e-12)
    if len(ok) == 0:
        return None
    return round(float(thresholds[ok[-1]]), 4)  # the lowest such threshold: the most recall
