"""The evaluation's job kinds, declared once: ``evaluate`` (measure a model on a corpus'
judgements or on benchmark files) and ``fit-fusion`` (fit the hybrid search's weights).

Example:
    >>> FIT_FUSION.submit(app.db, FitFusionPayload("faq", "m"))       # doctest: +SKIP
"""

from __future__ import annotations

from searchapp.evaluation.job_payloads import EvaluatePayload, FitFusionPayload
from searchapp.jobs.kinds import declare
from searchapp.jobs.tasks import TaskContext


def _evaluate(ctx: TaskContext, payload: EvaluatePayload) -> dict:
    from searchapp.evaluation.service import evaluate_task

    return evaluate_task(ctx, payload)


def _fit_fusion(ctx: TaskContext, payload: FitFusionPayload) -> dict:
    from searchapp.evaluation.fusion_fit import fit_fusion_task

    return fit_fusion_task(ctx, payload)


EVALUATE = declare("evaluate", unit="queries", payload=EvaluatePayload, run=_evaluate,
                   doing="Evaluating")
FIT_FUSION = declare("fit-fusion", unit="queries", payload=FitFusionPayload, run=_fit_fusion,
                     doing="Fitting the fusion of")
