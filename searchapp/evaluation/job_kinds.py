"""The evaluation's job kinds, declared once: ``evaluate`` (measure a model on a corpus'
judgements or on benchmark files) and ``fit-fusion`` (fit the hybrid search's weights).

Example:
    >>> FIT_FUSION.submit(app.db, FitFusionPayload("faq", "m"))       # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp.jobs.kinds import OPTIONAL, declare
from searchapp.jobs.tasks import TaskContext


@dataclass
class EvaluatePayload:
    """Measure ``model`` on ``corpus``: on its judgements, or on the copies of the
    benchmark files ``queries`` and ``qrels``; ``note`` says which, in the result."""

    corpus: str
    model: str
    queries: str | None = field(default=None, metadata=OPTIONAL)
    qrels: str | None = field(default=None, metadata=OPTIONAL)
    note: str = ""


@dataclass
class FitFusionPayload:
    """Fit the fusion of ``corpus`` with ``model`` (None: the corpus' own)."""

    corpus: str
    model: str | None = None


def _evaluate(ctx: TaskContext, payload: EvaluatePayload) -> dict:
    from searchapp.evaluation.service import evaluate_task

    return evaluate_task(ctx, payload)


def _fit_fusion(ctx: TaskContext, payload: FitFusionPayload) -> dict:
    from searchapp.evaluation.fusion_fit import fit_fusion_task

    return fit_fusion_task(ctx, payload)


EVALUATE = declare("evaluate", unit="queries", payload=EvaluatePayload, run=_evaluate)
FIT_FUSION = declare("fit-fusion", unit="queries", payload=FitFusionPayload, run=_fit_fusion)
