"""Adopting a new model for a corpus: only on the user's word, with its threshold, reversibly.

A learning job ends with a verdict (``verdict.judge_side_by_side``) but never
switches the corpus. ``accept`` does, when the user asks: it gives the new
model the duplicate threshold proposed for it (``threshold_proposal``: the
same precision on the held-out judged pairs, or the same expected number of
pairs in the corpus; see ``thresholds``), notes which model the corpus used
until now, and queues the switch (``request_model_switch``: re-embed, then
switch; the old index serves searches meanwhile). ``rollback`` switches back
to that previous model; its vectors are still stored, so the switch is quick.
A model judged worse is only adopted with ``force``.

The record of the previous model is kept in the new model's row
(``models.info["adoptions"][corpus]``), so it survives restarts.

Example:
    >>> job_id = accept(app, "faq", "faq-v2")                      # doctest: +SKIP
    >>> previous_model(app, "faq")          # once the switch job has ended  # doctest: +SKIP
    'all-MiniLM-L6-v2'
    >>> rollback(app, "faq")                                        # doctest: +SKIP
    12
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from searchapp.context import App
from searchapp.corpora.service import request_model_switch
from searchapp.duplicates.calibration import Calibration, save_threshold
from searchapp.embedding.models import model_path, read_card
from searchapp.errors import ModelError
from searchapp.evaluation.metrics import pair_metrics, precision_recall_curve
from searchapp.pairs.threshold import threshold_for
from searchapp.store import repo
from searchapp.training import thresholds

ADOPTIONS = "adoptions"  # models.info key: {corpus: {"previous": model, "at": iso time}}
MIN_PAIRS_FOR_PRECISION = 20  # held-out pairs of each answer needed to match a precision
CURVE_POINTS = 400


def threshold_proposal(app: App, current: str, current_handle, candidate_handle, runs) -> dict:
    """The duplicate threshold the candidate needs to mean what the current one means.

    ``runs``: the two evaluations on the same items (their judged pairs, if any).
    Same precision on the judged pairs when there are ``MIN_PAIRS_FOR_PRECISION``
    of each answer; otherwise the same expected number of pairs in the corpus.
    Returns {"current", "current_source", "proposed", "method", "expected_pairs": {
    "current", "candidate_at_current", "candidate_at_proposed"}}.
    """
    t_current, source = threshold_for(app, current)
    labels = current_handle.index.labels()
    old = current_handle.index.vectors(labels)
    _, new = candidate_handle.index.vectors_of(labels.tolist())
    proposed, method = None, "count"
    old_pairs, new_pairs = runs[0].pairs, runs[1].pairs
    if old_pairs is not None and min(np.bincount(old_pairs.labels, minlength=2)) >= \
            MIN_PAIRS_FOR_PRECISION:
        proposed = thresholds.by_precision(old_pairs.cosines, new_pairs.cosines,
                                           old_pairs.labels, t_current)
        method = "precision"
    if proposed is None:
        proposed, _ = thresholds.by_count(old, new, t_current)
        method = "count"
    current_count = thresholds.expected_pairs(old, t_current)
    at_both = thresholds.expected_pairs(new, np.array([t_current, proposed]))
    out = {"current": round(t_current, 4), "current_source": source,
           "proposed": round(float(proposed), 4), "method": method,
           "expected_pairs": {"current": round(current_count),
                              "candidate_at_current": round(float(at_both[0])),
                              "candidate_at_proposed": round(float(at_both[1]))}}
    if new_pairs is not None:
        out["calibration"] = _calibration_dict(candidate_handle.model.name, new_pairs,
                                               float(proposed), method, current)
    return out


def _calibration_dict(model: str, pairs, threshold: float, method: str, current: str) -> dict:
    """The proposal in the shape of a stored calibration (the Duplicates page reads it)."""
    m = pair_metrics(pairs.cosines, pairs.labels, threshold)
    precision, recall, cut = precision_recall_curve(pairs.cosines, pairs.labels)
    step = max(1, len(cut) // CURVE_POINTS)
    keep = np.r_[np.arange(0, len(cut), step), len(cut) - 1]
    how = "the same precision" if method == "precision" else "the same number of pairs"
    return Calibration(model, round(threshold, 4), m["ap"], m["f1"], m["precision"],
                       m["recall"], m["n"], int(pairs.labels.sum()),
                       {"precision": np.round(precision[keep], 4).tolist(),
                        "recall": np.round(recall[keep], 4).tolist(),
                        "threshold": np.round(cut[keep], 4).tolist()},
                       f"held-out judgements; {how} as {current}'s threshold").as_dict()


def verdict_of(app: App, model: str) -> dict | None:
    """The side-by-side verdict a learning or adaptation job wrote into the model's card."""
    card = read_card(model_path(model, app.settings))
    return card.get("verdict")


def switch(app: App, corpus: str, model: str) -> int:
    """Queue the switch of ``corpus`` to ``model``, noting the model it leaves; the job id."""
    with app.db.session() as s:
        current = repo.corpus_state(s, corpus).model_name
    job_id = request_model_switch(app, corpus, model)
    app.model_ref(model)  # the row that keeps the note
    with app.db.session() as s:
        row = repo.find_model(s, model)
        adoptions = dict((row.info or {}).get(ADOPTIONS, {}))
        adoptions[corpus] = {"previous": current, "at": datetime.now(UTC).isoformat(
            timespec="seconds"), "job": job_id}
        repo.update_model_info(s, model, **{ADOPTIONS: adoptions})
    return job_id


def accept(app: App, corpus: str, model: str, force: bool = False) -> int:
    """Adopt ``model`` for ``corpus``: its proposed threshold saved, the switch queued.

    Refuses a model whose verdict was "worse" or "not measured" unless ``force``.
    Returns the switch job's id.
    """
    verdict = verdict_of(app, model) or {}
    if verdict.get("verdict") == "not measured" and not force:
        raise ModelError(f"{model} was not measured against the corpus' current model; it "
                         f"was not adopted. Evaluate both first (searchapp evaluate --corpus "
                         f"{corpus} --model {model}), or adopt it anyway with --force.")
    if verdict.get("verdict") == "worse" and not force:
        current = (verdict.get("comparison") or {}).get("current", "the current model")
        raise ModelError(f"{model} was judged worse than {current} on the held-out "
                         "judgements; it was not adopted. Adopt it anyway with --force (the "
                         "Models page: 'Use it anyway').")
    if verdict.get("corpus") not in (None, corpus):
        raise ModelError(f"{model} was judged on corpus {verdict['corpus']!r}, not {corpus!r}; "
                         f"evaluate it on {corpus!r} first (searchapp evaluate --corpus "
                         f"{corpus} --model {model}), or switch with searchapp models use.")
    job_id = switch(app, corpus, model)
    calibration = (verdict.get("threshold") or {}).get("calibration")
    proposal = (verdict.get("threshold") or {}).get("proposed")
    if calibration:
        save_threshold(app, Calibration(**calibration))
    elif proposal is not None:
        save_threshold(app, Calibration(model, float(proposal), 0.0, 0.0, 0.0, 0.0, 0, 0,
                                        {"precision": [], "recall": [], "threshold": []},
                                        "carried over: the same number of pairs"))
    return job_id


def previous_model(app: App, corpus: str) -> str | None:
    """The model ``corpus`` used before its current one, when the switch was made here."""
    with app.db.session() as s:
        current = repo.corpus_state(s, corpus).model_name
        row = repo.find_model(s, current)
        note = ((row.info or {}).get(ADOPTIONS, {}) if row else {}).get(corpus)
    return note["previous"] if note else None


def rollback(app: App, corpus: str) -> int:
    """Switch ``corpus`` back to its previous model; the job id (its vectors are still stored)."""
    previous = previous_model(app, corpus)
    if previous is None:
        raise ModelError(f"Corpus {corpus!r} has no previous model to go back to (it was not "
                         "switched with searchapp models use, accept or the Models page).")
    return switch(app, corpus, previous)
