"""The name of a model a job will train: checked before the job, and a free one suggested.

The Models page's forms start with a name that can be used (``suggested_name``)
and check what the user types as they type it (``check_new_model``), so the
button is never the first to say the name is invalid or taken. The request
functions of the learn, adapt and fine-tune jobs run the same check.

Example:
    >>> check_new_model(app, "support-v2")                # doctest: +SKIP
    >>> suggested_name(app, "support")                    # doctest: +SKIP
    'support-v2'
"""

from __future__ import annotations

import re

from searchapp.context import App
from searchapp.embedding.models import validate_name
from searchapp.errors import JobError, ModelError, SearchAppError
from searchapp.jobs import queue

TRAINING_KINDS = ("learn", "adapt", "finetune")  # jobs that save a new model under a name


def check_new_model(app: App, name: str) -> None:
    """Refuse a name a new model cannot take: invalid, a model already there, or one a
    queued or running job will write."""
    validate_name(name)
    if (app.settings.models_dir / name).exists():
        raise ModelError(f"A model named {name!r} already exists; choose another name.")
    for kind in TRAINING_KINDS:
        if queue.active_for(app.db, kind, "name", name):
            raise JobError(f"A job that trains {name!r} is already queued or running.")


def suggested_name(app: App, corpus: str) -> str:
    """``{corpus}-v2`` (or -v3, ...): the first such name a new model can take; the corpus
    name is reduced to the characters a model name allows.

    Example:
        >>> suggested_name(app, "bank questions")         # doctest: +SKIP
        'bank-questions-v2'
    """
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", corpus).strip(".-_")[:90] or "model"
    for version in range(2, 10_000):
        name = f"{stem}-v{version}"
        try:
            check_new_model(app, name)
        except SearchAppError:
            continue
        return name
    raise ModelError(f"No free model name of the form {stem}-vN; type one.")
