"""The training's job kinds, declared once: ``finetune`` (train on a labelled file),
``learn`` (train on a corpus' judgements), ``adapt`` (unsupervised SimCSE on a corpus'
text) and ``rerank`` (train a cross-encoder reranker).

``hyper`` / ``settings``: the trainer's settings that were given (TrainConfig's,
RerankerConfig's fields), checked when the job was requested.

Example:
    >>> ADAPT.submit(app.db, AdaptPayload("faq", "faq-simcse", "m", {}))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from searchapp.jobs.kinds import declare
from searchapp.jobs.tasks import TaskContext


@dataclass
class FinetunePayload:
    """Train ``name`` from ``base`` on the copies ``train`` (and ``dev``) of the files
    named ``train_filename`` (``dev_filename``), read with ``columns``."""

    name: str
    base: str
    objective: str
    train: str
    train_filename: str | None
    columns: dict[str, Any] | None = None
    dev: str | None = None
    dev_filename: str | None = None
    hyper: dict[str, Any] = field(default_factory=dict)


@dataclass
class LearnPayload:
    """Train ``name`` from ``base`` on the judgements of ``corpus``.

    ``augment``: add cross-encoder-labelled pairs; ``recipe``: the levers
    (``training.recipe``; "before": a job queued before recipes); ``train_on_all``:
    train the final model on every judgement after the verdict.
    """

    corpus: str
    name: str
    base: str
    augment: bool = False
    hyper: dict[str, Any] = field(default_factory=dict)
    recipe: dict[str, Any] | str | None = "before"
    train_on_all: bool = False


@dataclass
class AdaptPayload:
    """Adapt ``base`` to the text of ``corpus`` (SimCSE), saved as ``name``."""

    corpus: str
    name: str
    base: str
    hyper: dict[str, Any] = field(default_factory=dict)


@dataclass
class RerankPayload:
    """Train a reranker on the query judgements of ``corpus``."""

    corpus: str
    settings: dict[str, Any] = field(default_factory=dict)


def _finetune(ctx: TaskContext, payload: FinetunePayload) -> dict:
    from searchapp.training.task import finetune

    return finetune(ctx, payload)


def _learn(ctx: TaskContext, payload: LearnPayload) -> dict:
    from searchapp.training.learn import learn_task

    return learn_task(ctx, payload)


def _adapt(ctx: TaskContext, payload: AdaptPayload) -> dict:
    from searchapp.training.learn import adapt_task

    return adapt_task(ctx, payload)


def _rerank(ctx: TaskContext, payload: RerankPayload) -> dict:
    from searchapp.training.reranker_job import reranker_task

    return reranker_task(ctx, payload)


FINETUNE = declare("finetune", unit="steps", payload=FinetunePayload, run=_finetune)
LEARN = declare("learn", unit="steps", payload=LearnPayload, run=_learn)
ADAPT = declare("adapt", unit="steps", payload=AdaptPayload, run=_adapt)
RERANK = declare("rerank", unit="steps", payload=RerankPayload, run=_rerank)
