"""The training's job kinds, declared once: ``finetune`` (train on a labelled file),
``learn`` (train on a corpus' judgements), ``adapt`` (unsupervised SimCSE on a corpus'
text) and ``rerank`` (train a cross-encoder reranker).

``hyper`` / ``settings``: the trainer's settings that were given (TrainConfig's,
RerankerConfig's fields), checked when the job was requested.

Example:
    >>> ADAPT.submit(app.db, AdaptPayload("faq", "faq-simcse", "m", {}))  # doctest: +SKIP
"""

from __future__ import annotations

from searchapp.jobs.kinds import declare
from searchapp.jobs.tasks import TaskContext
from searchapp.training.job_payloads import (
    AdaptPayload,
    FinetunePayload,
    LearnPayload,
    RerankPayload,
)


def _finetune(ctx: TaskContext, payload: FinetunePayload) -> dict:
    from searchapp.training.task import finetune

    return finetune(ctx, payload)


def _learn(ctx: TaskContext, payload: LearnPayload) -> dict:
    from searchapp.training.learn_job import learn_task

    return learn_task(ctx, payload)


def _adapt(ctx: TaskContext, payload: AdaptPayload) -> dict:
    from searchapp.training.adapt_job import adapt_task

    return adapt_task(ctx, payload)


def _rerank(ctx: TaskContext, payload: RerankPayload) -> dict:
    from searchapp.training.reranker_job import reranker_task

    return reranker_task(ctx, payload)


FINETUNE = declare("finetune", unit="steps", payload=FinetunePayload, run=_finetune,
                   doing="Fine-tuning")
LEARN = declare("learn", unit="steps", payload=LearnPayload, run=_learn, doing="Learning from")
ADAPT = declare("adapt", unit="steps", payload=AdaptPayload, run=_adapt, doing="Adapting to")
RERANK = declare("rerank", unit="steps", payload=RerankPayload, run=_rerank,
                 doing="Training the reranker of")
