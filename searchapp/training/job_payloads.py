"""The payloads of the training job kinds: what a request writes and the job reads.

Below both the requests (which build them) and the declarations in ``job_kinds`` (which
run them), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
