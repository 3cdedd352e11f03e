"""When an answer is clear enough to show: a score threshold per corpus and model.

Without judged answers the threshold is ``DEFAULT`` (chosen on
``benchmarks/answers.py``'s collections for the bundled model: see docs/answers.md).
A person marks answers right or wrong in the answer box (``judge`` kind ``answer``);
with at least ``MIN_EACH`` of each, the threshold is calibrated on them as the
duplicate threshold is on pairs: each judged sentence is scored as a search scores it
now (the live finder, so a fine-tuned model or a changed corpus is reflected), and the
threshold with the best F0.5 (precision counts twice: a wrong answer shown costs more
than an answer held back) among the scores is kept. It is computed again only when the
corpus' answer judgements change (``kind_mark``), and kept in memory per process.

Example:
    >>> calibrate([0.71, 0.64, 0.52, 0.40, 0.38, 0.30], [1, 1, 0, 1, 0, 0])
    0.64
    >>> calibrate([0.7, 0.3], [1, 0]) is None   # too few judged answers
    True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from searchapp.judgements.items import normalise_query
from searchapp.store import judgement_rows as rows

DEFAULT = 0.5
MIN_EACH = 3  # right and wrong judged answers needed to calibrate
MAX_JUDGED = 300  # the most recent answer judgements a calibration reads
BETA = 0.5  # F-beta of the calibration: precision weighs 1/BETA² = 4 times recall's weight

_CACHE: dict[tuple[int, int], tuple[str, float, str]] = {}
_LOCK = threading.Lock()


def calibrate(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The threshold with the best F0.5 over judged answers' scores (None: fewer than
    ``MIN_EACH`` right or wrong ones). Ties go to the higher threshold."""
    s, y = np.asarray(scores, float), np.asarray(labels, int)
    right = int((y == 1).sum())
    if right < MIN_EACH or int((y == 0).sum()) < MIN_EACH:
        return None
    best, best_f = None, -1.0
    for t in sorted(set(s.tolist()), reverse=True):
        shown = s >= t
        tp = int((shown & (y == 1)).sum())
        if not tp:
            continue
        precision, recall = tp / int(shown.sum()), tp / right
        f = (1 + BETA**2) * precision * recall / (BETA**2 * precision + recall)
        if f > best_f + 1e-12:
            best, best_f = t, f
    return None if best is None else float(best)


def threshold_for(app, handle, candidates_of: Callable[[str], list]) -> tuple[float, str]:
    """(threshold, where it comes from) for the corpus and its model: calibrated on its
    judged answers when there are enough, else ``DEFAULT``."""
    with app.db.session() as s:
        mark = rows.kind_mark(s, handle.corpus_id, "answer")
    if mark == rows.NO_ANSWERS:
        return DEFAULT, "default"
    key = (handle.corpus_id, handle.model.id)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None and cached[0] == mark:
        return cached[1], cached[2]
    value, source = _calibrated(app, handle, candidates_of)
    with _LOCK:
        _CACHE[key] = (mark, value, source)
    return value, source


def _calibrated(app, handle, candidates_of) -> tuple[float, str]:
    with app.db.session() as s:
        judged = rows.judgement_rows(s, handle.corpus_id, "answer")[-MAX_JUDGED:]
        judged = [(j.query, j.a_id, j.b_id, j.label) for j in judged]
    scores, labels = judged_scores(judged, candidates_of)
    value = calibrate(scores, labels)
    if value is None:
        return DEFAULT, (f"default (calibrated from {MIN_EACH} right and {MIN_EACH} wrong "
                         f"answers found again; {len(scores)} are)")
    return value, f"calibrated on {len(scores)} judged answers"


def judged_scores(judged: Sequence[tuple[str, str, str, int]],
                  candidates_of: Callable[[str], list]) -> tuple[list[float], list[int]]:
    """The live scores of judged answers (query, document, sentence, label): each query
    searched once; a judged sentence no longer among its query's candidates is left out."""
    by_query: dict[str, list[tuple[str, str, int]]] = {}
    for query, doc, sentence, label in judged:
        by_query.setdefault(query, []).append((doc, normalise_query(sentence), label))
    scores, labels = [], []
    for query, items in by_query.items():
        found = {(a.doc_id, normalise_query(a.text)[:500]): a.score for a in candidates_of(query)}
        for doc, sentence, label in items:
            if (doc, sentence) in found:
                scores.append(found[(doc, sentence)])
                labels.append(int(label))
    return scores, labels
