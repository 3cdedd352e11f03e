"""A new model judged against the current one on the same judgements, side by side.

``check_verdict_possible`` refuses, before any job, held-out judgements too few
for a verdict; ``judge_side_by_side`` gives it: both models' metrics with
intervals, better / worse / not distinguishable, and the duplicate threshold the
new model would need. ``fit_fusion_on_held_out`` fits the new model's hybrid
fusion while the corpus is open with it.

Example:
    >>> verdict = judge_side_by_side(app, "faq", "base", "faq-v2", held, report)  # doctest: +SKIP
    >>> verdict["verdict"]                                                       # doctest: +SKIP
    'better'
"""

from __future__ import annotations

from collections.abc import Callable

from searchapp.context import App
from searchapp.errors import TrainingDataError
from searchapp.evaluation.corpus import compare, evaluate
from searchapp.evaluation.encoded import handle_for
from searchapp.evaluation.enough import items_shortfall
from searchapp.evaluation.fusion_fit import fit_fusion
from searchapp.evaluation.judged import Items
from searchapp.judgements.service import save_evaluation_run
from searchapp.training.adoption import threshold_proposal


def check_verdict_possible(held: Items) -> None:
    """Refuse, before any job, held-out judgements that cannot give a verdict on the new
    model (the job would train for minutes, then say "not distinguishable": too few).

    The rule is the comparison's own (``evaluation.enough``), so the request and the
    verdict never disagree.

    Example:
        >>> from searchapp.evaluation.judged import JudgedQuery
        >>> check_verdict_possible(Items(queries=[JudgedQuery("q", {"d": 1})]))
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        searchapp.errors.TrainingDataError: The held-out judgements cannot give a verdict ...
    """
    short = items_shortfall(held)
    if short is None:
        return
    raise TrainingDataError(
        f"The held-out judgements cannot give a verdict on the new model: {short}. "
        f"A fifth of the judgements is held out to measure it (by a hash of each query or "
        f"pair): judge more search results or pairs (the Label page proposes them), then "
        f"learn.")


def judge_side_by_side(app: App, corpus: str, current: str, candidate: str, items: Items,
                       report, note: str = "", store: bool = True,
                       on_candidate: Callable | None = None) -> dict:
    """Both models on the same judged items: metrics with intervals, verdict, threshold.

    Both evaluations are saved as evaluation runs of the corpus (the Evaluate
    page's history), with ``note``. ``store``: the candidate's vectors of the corpus,
    computed for the verdict anyway, are saved, so adopting it re-embeds nothing.
    ``on_candidate(handle)``: called with the corpus opened with the candidate (the
    learning job fits the candidate's hybrid fusion on it).
    """
    current_handle = handle_for(app, corpus, current)
    candidate_handle = handle_for(app, corpus, candidate, progress=report, store=store)
    runs = [evaluate(app, current_handle, items), evaluate(app, candidate_handle, items)]
    if on_candidate is not None:
        on_candidate(candidate_handle)
    comparison = compare(*runs)
    threshold = threshold_proposal(app, current, current_handle, candidate_handle, runs)
    for run in runs:
        save_evaluation_run(app, corpus, run.model, run.as_dict(), run.judgements, note)
    return {"verdict": comparison.verdict, "sentence": comparison.sentence(),
            "comparison": comparison.as_dict(), "current": runs[0].as_dict(),
            "candidate": runs[1].as_dict(), "threshold": threshold, "corpus": corpus}


def fit_fusion_on_held_out(app: App, corpus: str, name: str, held: Items, handle):
    """The new model's hybrid fusion fitted on the held-out judged queries only (it learned
    the training queries by heart: a fit on those would over-trust its semantic side);
    kept, as any fit, only when better on queries it was not fitted on."""
    return fit_fusion(app, corpus, model=name, items=Items(queries=held.queries), save=False,
                      handle=handle)
