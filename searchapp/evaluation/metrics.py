"""Evaluation: STS correlation, duplicate-pair detection, retrieval ranking.

All metrics are ×100, as in the Sentence-BERT paper.

- STS: Spearman (headline) and Pearson correlation of cosine with gold scores.
- Pairs with 0/1 labels: average precision, and the threshold with the best F1
  (with its precision and recall), or those at a given threshold.
- Retrieval: MRR@10, nDCG@10, recall@1 and recall@10.

Example:
    >>> sts_metrics([0.9, 0.5, 0.1], [5.0, 3.0, 0.5])["spearman"]
    100.0
    >>> pair_metrics([0.9, 0.8, 0.3, 0.2], [1, 1, 0, 0])["f1"]
    100.0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import pearsonr, spearmanr

from searchapp.errors import InvalidParameterError


def _check_lengths(a: Sequence, b: Sequence, what: str) -> None:
    if len(a) != len(b):
        raise InvalidParameterError(f"{what}: {len(a)} scores but {len(b)} labels.")
    if len(a) < 2:
        raise InvalidParameterError(f"{what}: need at least 2 pairs to evaluate, got {len(a)}.")


def paired_cosine(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two (n, dim) matrices."""
    u = u / np.clip(np.linalg.norm(u, axis=1, keepdims=True), 1e-12, None)
    v = v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)
    return np.einsum("ij,ij->i", u, v)


def sts_metrics(similarities: Sequence[float], gold: Sequence[float]) -> dict:
    """Spearman and Pearson (×100) of similarities against gold scores."""
    _check_lengths(similarities, gold, "STS evaluation")
    sims, gold = np.asarray(similarities, float), np.asarray(gold, float)
    if np.ptp(gold) == 0:
        raise InvalidParameterError("STS evaluation: every gold score is the same.")
    return {"spearman": round(100 * float(spearmanr(sims, gold).statistic), 2),
            "pearson": round(100 * float(pearsonr(sims, gold).statistic), 2),
            "n": len(gold)}


def precision_recall_curve(similarities: Sequence[float], labels: Sequence[int]
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and threshold at each distinct score, highest threshold first.

    Predicting "duplicate" for score ≥ thresholds[i] gives precision[i], recall[i].
    """
    sims, labels = np.asarray(similarities, float), np.asarray(labels, int)
    order = np.argsort(-sims, kind="stable")
    sims, labels = sims[order], labels[order]
    positives = labels.sum()
    if positives == 0:
        raise InvalidParameterError("Pair evaluation needs at least one pair labelled 1.")
    tp, fp = np.cumsum(labels), np.cumsum(1 - labels)
    last_of_run = np.r_[np.diff(sims) != 0, True]  # one point per distinct score
    tp, fp, thresholds = tp[last_of_run], fp[last_of_run], sims[last_of_run]
    return tp / (tp + fp), tp / positives, thresholds


def average_precision(similarities: Sequence[float], labels: Sequence[int]) -> float:
    """Area under the step precision-recall curve (as scikit-learn computes it), ×100."""
    precision, recall, _ = precision_recall_curve(similarities, labels)
    gains = np.diff(np.r_[0.0, recall])
    return round(100 * float(np.sum(gains * precision)), 2)


def pair_metrics(similarities: Sequence[float], labels: Sequence[int],
                 threshold: float | None = None) -> dict:
    """AP plus F1/precision/recall (×100) at ``threshold``, or at the best-F1 threshold.

    The best-F1 threshold is placed midway between the last score kept and the
    next lower one, so it generalises a little better than the score itself.
    """
    _check_lengths(similarities, labels, "Pair evaluation")
    labels_arr = np.asarray(labels, int)
    if not np.isin(labels_arr, (0, 1)).all():
        raise InvalidParameterError("Pair labels must be 0 or 1.")
    sims = np.asarray(similarities, float)
    ap = average_precision(sims, labels_arr)
    if threshold is None:
        precision, recall, thresholds = precision_recall_curve(sims, labels_arr)
        f1 = 2 * precision * recall / np.clip(precision + recall, 1e-12, None)
        best = int(np.argmax(f1))
        below = thresholds[best + 1] if best + 1 < len(thresholds) else thresholds[best] - 1e-3
        threshold = float((thresholds[best] + below) / 2)
    predicted = sims >= threshold
    tp = int((predicted & (labels_arr == 1)).sum())
    p = tp / max(int(predicted.sum()), 1)
    r = tp / max(int(labels_arr.sum()), 1)
    f1_at = 2 * p * r / (p + r) if p + r else 0.0
    return {"ap": ap, "f1": round(100 * f1_at, 2), "precision": round(100 * p, 2),
            "recall": round(100 * r, 2), "threshold": round(float(threshold), 4),
            "n": len(labels_arr)}


def retrieval_metrics(ranked: Sequence[Sequence], relevant: Sequence[set]) -> dict:
    """MRR@10, nDCG@10, recall@1 and recall@10 (×100) over queries.

    ``ranked[q]`` is the list of retrieved ids for query q, best first;
    ``relevant[q]`` the set of ids that are correct for it.
    """
    _check_lengths(ranked, relevant, "Retrieval evaluation")
    mrr = ndcg = r1 = r10 = 0.0
    for got, want in zip(ranked, relevant, strict=True):
        if not want:
            raise InvalidParameterError("Retrieval evaluation: a query has no relevant id.")
        hits = [doc in want for doc in list(got)[:10]]
        mrr += next((1 / (i + 1) for i, h in enumerate(hits) if h), 0.0)
        dcg = sum(1 / np.log2(i + 2) for i, h in enumerate(hits) if h)
        ideal = sum(1 / np.log2(i + 2) for i in range(min(len(want), 10)))
        ndcg += dcg / ideal
        r1 += sum(hits[:1]) / len(want)
        r10 += sum(hits) / len(want)
    n = len(ranked)
    return {"mrr@10": round(100 * mrr / n, 2), "ndcg@10": round(float(100 * ndcg / n), 2),
            "recall@1": round(100 * r1 / n, 2), "recall@10": round(100 * r10 / n, 2), "n": n}


def encode_pairs(encoder, first: Sequence[str], second: Sequence[str],
                 batch_size: int | None = None) -> np.ndarray:
    """Cosine similarity of each (first[i], second[i]) under an encoder, (n,)."""
    unique = list(dict.fromkeys([*first, *second]))
    vectors = encoder.encode(unique, batch_size=batch_size)
    row = {text: i for i, text in enumerate(unique)}
    u = vectors[[row[t] for t in first]]
    v = vectors[[row[t] for t in second]]
    return paired_cosine(u, v)
