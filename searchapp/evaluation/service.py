"""The ``evaluate`` job: a model measured on a corpus' judgements or on benchmark files.

``request_evaluation`` checks everything first (the corpus, the model, the
files, that there is something to measure) and copies benchmark files into the
work folder, so the job never depends on the user's files; the job opens the
corpus with the model (encoded in memory when the corpus is not embedded with
it, ``encoded``), measures (``corpus.evaluate``), and saves the result as an
evaluation run of the corpus (the Evaluate page's history). The CLI runs the
job in its own process (``searchapp evaluate --corpus C``); the page queues it.

Example:
    >>> job_id = request_evaluation(app, "faq", model="faq-v2")     # doctest: +SKIP
    >>> evaluation_report(app, "faq", model="faq-v2")["pairs"]["ap"]  # doctest: +SKIP
    {'value': 86.1, 'low': 81.9, 'high': 89.8, 'n': 212}
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from searchapp.context import App
from searchapp.embedding.models import model_path, read_card
from searchapp.errors import IngestError, InvalidParameterError
from searchapp.evaluation.benchmark_files import read_qrels, read_queries
from searchapp.evaluation.corpus import check_items, evaluate
from searchapp.evaluation.encoded import handle_for
from searchapp.evaluation.job_payloads import EvaluatePayload
from searchapp.evaluation.judged import Items, from_files, from_judgements
from searchapp.jobs.kinds import submit
from searchapp.judgements.service import evaluation_runs, list_judgements, save_evaluation_run
from searchapp.store import repo

KIND = "evaluate"


def judgement_items(app: App, corpus: str) -> Items:
    """The corpus' judgements as evaluation items."""
    return from_judgements(list_judgements(app, corpus))


def file_items(queries: str | Path | bytes, qrels: str | Path | bytes,
               queries_filename: str | None = None, qrels_filename: str | None = None) -> Items:
    """Evaluation items from BEIR/TREC files; every qrels query must be in the queries file."""
    texts = read_queries(queries, queries_filename)
    judged = read_qrels(qrels, qrels_filename)
    unknown = [q for q in judged if q not in texts]
    if unknown:
        name = qrels_filename or (Path(qrels).name if not isinstance(qrels, bytes) else "qrels")
        raise IngestError(f"{name} judges {len(unknown)} query id(s) the queries file does not "
                          f"have, e.g. {unknown[0]!r}; use the queries file of the same "
                          "benchmark.")
    return from_files(texts, judged)


def _copy(source: str | Path | bytes, filename: str | None, folder: Path, stem: str) -> str:
    name = filename or (Path(source).name if not isinstance(source, bytes) else stem)
    target = folder / f"{stem}-{Path(name).name}"
    if isinstance(source, bytes):
        target.write_bytes(source)
    else:
        shutil.copyfile(source, target)
    return str(target)


def request_evaluation(app: App, corpus: str, *, model: str | None = None,
                       queries: str | Path | bytes | None = None,
                       qrels: str | Path | bytes | None = None,
                       queries_filename: str | None = None, qrels_filename: str | None = None
                       ) -> int:
    """Check the request and queue an ``evaluate`` job; its id.

    Without files the corpus' judgements are measured; with ``queries`` and
    ``qrels`` (both or neither) those files are.
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    model = model or state.model_name
    model_path(model, app.settings)  # an unknown model fails here, listing the known ones
    payload = EvaluatePayload(state.name, model)
    if (queries is None) != (qrels is None):
        raise InvalidParameterError("Give both --queries and --qrels (a benchmark's queries "
                                    "and its judgements), or neither to use the corpus' "
                                    "judgements.")
    if queries is not None:
        items = file_items(queries, qrels, queries_filename, qrels_filename)
        check_items(items)
        folder = app.settings.work_dir / "evaluate" / uuid.uuid4().hex[:12]
        folder.mkdir(parents=True)
        payload.queries = _copy(queries, queries_filename, folder, "queries")
        payload.qrels = _copy(qrels, qrels_filename, folder, "qrels")
        payload.note = (f"benchmark files {queries_filename or Path(str(queries)).name}, "
                        f"{qrels_filename or Path(str(qrels)).name}")
    else:
        check_items(judgement_items(app, state.name))
        payload.note = "judgements"
    return submit(app.db, payload)


def evaluate_task(ctx, payload: EvaluatePayload) -> dict:
    """The job: measure, save the evaluation run, return the report (with its run id)."""
    app, corpus, model = ctx.app, payload.corpus, payload.model
    if payload.queries:
        items = file_items(payload.queries, payload.qrels)
    else:
        items = judgement_items(app, corpus)

    def report(done: int, total: int, message: str) -> None:
        ctx.progress(done, total, message, force=done in (0, total))

    handle = handle_for(app, corpus, model,
                        progress=lambda d, t, m: ctx.progress(d, t, m, unit="documents"))
    result = evaluate(app, handle, items, progress=report)
    out = result.as_dict()
    out["note"] = f"{payload.note} (evaluate job {ctx.job_id})"
    if not payload.queries and (warning := trained_on(app, corpus, model)):
        out["warning"] = warning
    earlier = [r for r in evaluation_runs(app, corpus, model) if r.note == out["note"]]
    run = earlier[0] if earlier else save_evaluation_run(app, corpus, model, out,
                                                         result.judgements, out["note"])
    out["run"] = run.id  # a job resumed after a crash does not save its run twice
    return out


def trained_on(app: App, corpus: str, model: str) -> str | None:
    """A warning when ``model`` learned from this corpus' judgements: measured on them, its
    numbers are optimistic (it has seen most of them); the learning job's verdict, on the
    part held out of its training, is the comparison to trust.

    Example:
        >>> trained_on(app, "faq", "all-MiniLM-L6-v2") is None           # doctest: +SKIP
        True
    """
    card = read_card(app.settings.models_dir / model)
    if card.get("source") != "judgements" or card.get("corpus") != corpus:
        return None
    split = card.get("data", {}).get("split", {})
    train = split.get("train", {}).get("judgements")
    held = split.get("held", {}).get("judgements")
    return (f"{model} learned from {train if train is not None else 'some'} of these "
            f"judgements, so its numbers here are optimistic. Its learning job's verdict "
            f"(on the {held if held is not None else 'part'} held out of training) is the "
            "comparison to trust; judgements made after it was trained are fair too.")
