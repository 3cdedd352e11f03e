"""The ``rerank`` job: train a corpus' reranker on its query judgements in the worker.

``request_reranker`` checks the judgements before any job exists (a query judged
relevant to train on and one held out to judge by, split as the ``learn`` job
splits them: ``holdout``), then queues the job; ``reranker_task`` runs
``reranker.train_reranker`` and stores its result (kept or not, and why).
A worker killed mid-training starts the job again: the pairs are mined again
(the same ones) and the training carries on from its last checkpoint.

Example:
    >>> job_id = request_reranker(app, "manual")                           # doctest: +SKIP
    >>> run_until_done(app, job_id).result["kept"]                         # doctest: +SKIP
    True
"""

from __future__ import annotations

from dataclasses import fields

from searchapp.context import App
from searchapp.embedding.models import check_trainable
from searchapp.errors import JobError
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.store import repo
from searchapp.training import holdout
from searchapp.training.job_payloads import RerankPayload
from searchapp.training.judged_items import corpus_items
from searchapp.training.reranker import RerankerConfig, check_items, train_reranker

KIND = "rerank"


def request_reranker(app: App, corpus: str, **settings) -> int:
    """Check the corpus' query judgements, then queue the ``rerank`` job; its id.

    ``settings``: any of RerankerConfig's fields (None: the default), e.g. ``max_steps``.
    """
    known = {f.name for f in fields(RerankerConfig)}
    unknown = set(settings) - known
    if unknown:
        raise JobError(f"Unknown setting(s) {sorted(unknown)}; known: {', '.join(sorted(known))}.")
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    check_trainable(state.model_name, app.settings, KIND)
    if queue.active_for(app.db, KIND, "corpus", state.name):
        raise JobError(f"Corpus {state.name!r} already has a reranker job queued or running.")
    check_items(*holdout.split(corpus_items(app, state.name)))
    chosen = {k: v for k, v in settings.items() if v is not None}
    return submit(app.db, RerankPayload(state.name, chosen))


def reranker_task(ctx, payload: RerankPayload) -> dict:
    """The job: split the judgements, train, judge, attach when better (``train_reranker``)."""
    corpus = payload.corpus
    train, held = holdout.split(corpus_items(ctx.app, corpus))

    def progress(done: int, total: int, message: str = "") -> None:
        ctx.progress(done, total, f"Training the reranker · {message}" if message else None,
                     force=done == total)

    result = train_reranker(ctx.app, corpus, train, held,
                            config=RerankerConfig(**payload.settings),
                            progress=progress)
    ctx.progress(1, 1, ("Kept: " if result.kept else "Not kept: ") + result.reason, force=True)
    return result.as_dict()
