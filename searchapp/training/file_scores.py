"""Evaluate a model on a labelled file: STS scores (Spearman) or 0/1 pairs (AP, F1).

The file is read and checked like a training file (``data.py`` beside it), so the same
columns and aliases work and the same errors name the bad rows; the metrics
are those of ``searchapp.evaluation.metrics``.

Example:
    >>> evaluate_sts_file(app, "all-MiniLM-L6-v2", "sts-test.tsv")  # doctest: +SKIP
    {'spearman': 82.03, 'pearson': 84.42, 'n': 1379}
"""

from __future__ import annotations

from pathlib import Path

from searchapp.evaluation.metrics import encode_pairs, pair_metrics, sts_metrics
from searchapp.training.data import load_training_data


def evaluate_sts_file(app, model: str, path: str | Path) -> dict:
    """Spearman and Pearson ×100 of cosine against the file's scores, and n."""
    data = load_training_data(path, objective="cosine", batch_size=2)
    sims = encode_pairs(app.encoder(model), data.texts[0], data.texts[1])
    return sts_metrics(sims, data.labels)


def evaluate_pairs_file(app, model: str, path: str | Path, threshold: float | None = None
                        ) -> dict:
    """AP, F1, precision, recall (×100) and the threshold, at ``threshold`` or the best F1."""
    data = load_training_data(path, objective="contrastive", batch_size=2)
    sims = encode_pairs(app.encoder(model), data.texts[0], data.texts[1])
    m = pair_metrics(sims, data.labels, threshold)
    return {k: m[k] for k in ("ap", "f1", "precision", "recall", "threshold", "n")}
