"""Clusters of a stored corpus: computed once per generation and parameters, as a job.

Results are stored per (corpus, model, parameters) in the ``analyses`` table at
the corpus generation and reused while it is unchanged; in one process they are
kept in the App's generation memo, so a page rerun reads nothing.

Example:
    >>> result, job_id = request_clusters(app, "faq", ClusterParams("kmeans", 8)) # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, replace

import numpy as np

from searchapp.clusters.compute import IndexLoan, Progress, compute
from searchapp.clusters.edits import merged_members
from searchapp.clusters.job_payloads import ClustersPayload
from searchapp.clusters.names import title_of
from searchapp.clusters.params import CONSTRAINED, KIND, STEPS, ClusterParams
from searchapp.clusters.result import ClusterResult
from searchapp.context import App
from searchapp.errors import CorpusChangedError
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.store import judgement_rows, repo
from searchapp.vectors.handle import CorpusHandle, as_handle


def _job_key(corpus: str, params: ClusterParams) -> str:
    return f"{corpus}|{params.key()}"


def _id_lookup(app: App, corpus_id: int):
    def lookup() -> dict[int, str]:
        with app.db.session() as s:
            return repo.external_ids(s, corpus_id)
    return lookup


def stored(app: App, handle: CorpusHandle, params: ClusterParams) -> ClusterResult | None:
    """The result stored for (corpus, model, params) at the handle's generation, if any."""
    params = params.validated()

    def load() -> ClusterResult | None:
        with app.db.session() as s:
            row = repo.get_analysis(s, handle.corpus_id, handle.model.id, KIND, params.key())
            if row is None or not repo.is_current(s, row, handle.generation):
                return None
            info, blob = row.result, row.arrays
        return ClusterResult.from_stored(info, repo.unpack_arrays(blob),
                                         _id_lookup(app, handle.corpus_id), handle.corpus_id,
                                         handle.generation)

    return _memo(app, handle.corpus_id, handle.model.id, handle.generation, params, load)


def stored_for_name(app: App, corpus: str, params: ClusterParams) -> ClusterResult | None:
    """The stored result for (corpus, its model, params) at the corpus' current generation,
    found from the corpus row alone: the index is not opened (at a million documents,
    reading it takes seconds and 1.6 GB), so a page shows a stored map at once.

    Raises CorpusNotFoundError for an unknown corpus.

    Example:
        >>> stored_for_name(app, "faq", ClusterParams()) is None       # doctest: +SKIP
        False
    """
    params = params.validated()
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    model = app.model_ref(state.model_name)

    def load() -> ClusterResult | None:
        with app.db.session() as s:
            row = repo.get_analysis(s, state.id, model.id, KIND, params.key())
            if row is None or not repo.is_current(s, row, state.generation):
                return None
            info, blob = row.result, row.arrays
        return ClusterResult.from_stored(info, repo.unpack_arrays(blob),
                                         _id_lookup(app, state.id), state.id, state.generation)

    return _memo(app, state.id, model.id, state.generation, params, load)


def _memo(app: App, corpus_id: int, model_id: int, generation: int, params: ClusterParams,
          load: Callable[[], ClusterResult | None]) -> ClusterResult | None:
    """``load()`` kept in the App's memo per generation and stored row: a result computed
    again at the same generation (new judgements), by a worker in another process, is
    read again instead of the one in memory."""
    with app.db.session() as s:
        version = repo.analysis_version(s, corpus_id, model_id, KIND, params.key())
    if version is None:
        return None
    return app.memo.get_or_make(corpus_id, generation, (KIND, params.key(), version), load)


def cached_clusters(app: App, corpus: str | CorpusHandle, params: ClusterParams
                    ) -> ClusterResult | None:
    """The stored result for (corpus, its model, params) if the corpus is unchanged.

    Raises CorpusNotFoundError / EmptyCorpusError for a missing or empty corpus.
    """
    return stored(app, as_handle(app, corpus), params)


def judgement_mark(app: App, corpus_id: int) -> str:
    """The corpus' pair judgements as they are now (``judgement_rows.pair_mark``)."""
    with app.db.session() as s:
        return judgement_rows.pair_mark(s, corpus_id)


def judgements_changed(app: App, result: ClusterResult) -> bool:
    """Whether the corpus' pair judgements changed since ``result`` was computed with them
    as constraints (only ``CONSTRAINED`` methods use them). A result stored before marks
    were kept counts as made without judgements.

    Example:
        >>> judgements_changed(app, result)                            # doctest: +SKIP
        False
    """
    if result.params.get("method") not in CONSTRAINED:
        return False
    made_with = result.constraints.get("mark", judgement_rows.NO_PAIRS)
    return made_with != judgement_mark(app, result.corpus_id)


def request_clusters(app: App, corpus: str | CorpusHandle, params: ClusterParams,
                     apply_judgements: bool = False) -> tuple[ClusterResult | None, int | None]:
    """A fresh stored result, or else the id of the job computing it (queued if needed).

    ``apply_judgements``: a stored result made before the pair judgements last
    changed counts as not fresh (a person asked to recompute with them).

    Example:
        >>> result, job_id = request_clusters(app, "faq", ClusterParams())   # doctest: +SKIP
    """
    handle = as_handle(app, corpus)
    params = params.validated()
    result = stored(app, handle, params)
    if result is not None and not (apply_judgements and judgements_changed(app, result)):
        return result, None
    params.resolved(handle.index.count)  # too few documents: say so now
    key = _job_key(handle.name, params)
    job = queue.active_for(app.db, KIND, "key", key)
    if job is not None:
        return None, job.id
    payload = ClustersPayload(handle.name, asdict(params), key)
    return None, submit(app.db, payload)


def clusters_result(app: App, corpus: str | CorpusHandle, params: ClusterParams,
                    run_job: Callable[[int], object], apply_judgements: bool = False
                    ) -> ClusterResult:
    """The stored result, or the one a job computes: ``run_job(job_id)`` runs it to its end.
    ``apply_judgements`` as for ``request_clusters``.

    ``run_job`` raises when the job does not succeed (the CLI runs it in its own
    process). Raises CorpusChangedError when the corpus changed meanwhile.

    Example:
        >>> clusters_result(app, "faq", ClusterParams(), run_job=print).size  # doctest: +SKIP
        13
    """
    result, job_id = request_clusters(app, corpus, params, apply_judgements)
    if job_id is not None:
        run_job(job_id)
        result = cached_clusters(app, corpus, params)
        if result is None:
            name = corpus if isinstance(corpus, str) else corpus.name
            raise CorpusChangedError(f"Corpus {name!r}", "its clusters were computed")
    return result


def _texts_of(app: App, corpus_id: int):
    def texts_of(ids: np.ndarray) -> list[str]:
        with app.db.session() as s:
            found = repo.texts_by_id(s, ids.tolist())
        return [found.get(int(i), "") for i in ids]  # a document deleted meanwhile: no text
    return texts_of


def _titles_of(app: App):
    """Document ids → titles (``names.title_of``: the ``title`` metadata of a document read
    from a file, else its first line); a document deleted meanwhile has none."""
    def titles_of(ids: np.ndarray) -> list[str]:
        with app.db.session() as s:
            found = repo.documents_by_id(s, ids.tolist())
        return [title_of(str(row.meta.get("title") or ""), row.text) if (row := found.get(int(i)))
                else "" for i in ids]
    return titles_of


def judged_pairs(app: App, corpus_id: int) -> np.ndarray:
    """The corpus' pair judgements as (p, 3) int64: doc id, doc id, 1 duplicate / 0 not.

    Pairs whose documents are gone are left out.

    Example:
        >>> judged_pairs(app, 1).tolist()                              # doctest: +SKIP
        [[12, 40, 1], [12, 77, 0]]
    """
    with app.db.session() as s:
        rows = [(r.a_id, r.b_id, int(r.label))
                for r in judgement_rows.judgement_rows(s, corpus_id, "pair")]
        found = judgement_rows.ids_by_external_id(s, corpus_id,
                                                  {x for a, b, _ in rows for x in (a, b)})
    kept = [(found[a], found[b], label) for a, b, label in rows if a in found and b in found]
    return np.asarray(kept, dtype=np.int64).reshape(-1, 3)


def _add_examples(app: App, corpus_id: int, levels: list[list[dict]]) -> None:
    """Each cluster's central documents as ``central`` [(id, text)], the first as ``example``."""
    wanted = sorted({i for clusters in levels for c in clusters for i in c["central_ids"]})
    with app.db.session() as s:
        found = repo.document_texts(s, corpus_id, wanted)
    for clusters in levels:
        for c in clusters:
            c["central"] = [list(found[i]) for i in c["central_ids"] if i in found]
            c["example"], c["example_text"] = found.get(c["example_id"], ("", ""))


def compute_and_store(app: App, corpus: str | CorpusHandle, params: ClusterParams,
                      progress: Progress | None = None, free_index: bool = False
                      ) -> ClusterResult:
    """Compute the clusters of a corpus and store them (reusing a fresh stored result).

    The clusters are those of the corpus as it is when this starts; documents
    changed or deleted meanwhile are skipped where they are looked up (their
    text counts as empty for the names), and the result is stored at the
    generation it was computed from, so it is never shown as the current one.

    ``free_index`` (the job sets it) takes the corpus' index out of this
    process' cache before it starts: the job's copy is then its own, never
    caught up under it to a newer version of the corpus (another thread opening
    the corpus loads its own), and it is freed once the clusters are assigned,
    so the map step has its memory. Without it the cached index is shared, and
    a change to it midway raises CorpusChangedError (nothing is stored).
    """
    handle = as_handle(app, corpus)
    params = params.validated()
    if (done := stored(app, handle, params)) is not None and not judgements_changed(app, done):
        return done
    started = time.perf_counter()
    corpus_id = handle.corpus_id
    mark = judgement_mark(app, corpus_id)  # before they are read: a later change shows
    if free_index:
        app.indexes.forget(corpus_id)
    loan = IndexLoan(handle.index, (lambda: app.indexes.forget(corpus_id)) if free_index
                     else None)
    handle = replace(handle, index=None)  # the loan holds the only reference now
    try:
        out = compute(loan, params, _texts_of(app, handle.corpus_id), progress,
                      judged_pairs(app, handle.corpus_id),
                      merged_members(app, handle.corpus_id, handle.model.id),
                      _titles_of(app))
    except CorpusChangedError as exc:
        raise CorpusChangedError(f"Corpus {handle.name!r}") from exc
    _add_examples(app, handle.corpus_id, [out["clusters"], *(lv["clusters"]
                                                              for lv in out["levels"])])
    out["seconds"]["total"] = round(time.perf_counter() - started, 3)
    coords = out["coords"]
    result = ClusterResult(handle.name, out["params"], out["projection"], out["clusters"],
                           out["ids"], out["assign"], coords[:, 0].astype(np.float32),
                           coords[:, 1].astype(np.float32), out["seconds"],
                           _id_lookup(app, handle.corpus_id), handle.corpus_id,
                           handle.generation, out["levels"], out["leaf"], out["cuts"],
                           out["level"], constraints={"mark": mark,
                                                      "pairs": out["applied_pairs"],
                                                      "unmet": out["unmet_pairs"],
                                                      "merges": out["merges"]})
    if progress:
        progress(5, STEPS, "Storing the result")
    with app.db.session() as s:
        repo.save_analysis(s, handle.corpus_id, handle.model.id, KIND, params.key(),
                           asdict(params), handle.generation, result.info(),
                           out["seconds"]["total"], result.arrays())
    with app.db.session() as s:
        version = repo.analysis_version(s, handle.corpus_id, handle.model.id, KIND,
                                        params.key())
    app.memo.put(handle.corpus_id, handle.generation, (KIND, params.key(), version), result)
    return result


def job_progress(ctx) -> Progress:
    """``compute``'s progress as the job's: the bar counts steps, the rate what ``items`` count.

    The first report of each phase (a new message without counts, or new
    counts: another step, unit or total) is always written; the worker's
    throttle would otherwise drop it when it follows the last one within a
    quarter second, leaving the phase before, and its time left, on show.
    Counts within a phase are throttled as usual.

    Example:
        >>> report = job_progress(ctx)                                # doctest: +SKIP
        >>> report(3, STEPS, "Drawing the map: UMAP, epoch 37 of 500", items=(37, 500),
        ...        unit="epochs")                                     # doctest: +SKIP
    """
    last = [None]

    def report(step: int, steps: int, message: str, items: tuple[int, int] | None = None,
               unit: str | None = None) -> None:
        phase = (step, unit, items[1]) if items else message
        ctx.progress(step, steps, message, force=phase != last[0], items=items or (0, 0),
                     unit=unit)
        last[0] = phase

    return report


def clusters_task(ctx, payload: ClustersPayload) -> dict:
    """The ``clusters`` job: ``payload.params`` on ``payload.corpus``.

    Idempotent: a job run again after a crash finds a stored fresh result and
    returns at once, or computes it again from the corpus as it is now.
    """
    params = ClusterParams.from_dict(payload.params or {})
    result = compute_and_store(ctx.app, payload.corpus, params, job_progress(ctx),
                               free_index=True)
    ctx.progress(STEPS, STEPS, "Done", force=True)
    return {"corpus": result.corpus, "documents": result.size,
            "clusters": len(result.clusters), "outliers": result.outliers,
            "seconds": result.seconds.get("total")}


def active_job(app: App, corpus: str, params: ClusterParams) -> queue.JobView | None:
    """The queued or running job computing (corpus, params), if any."""
    return queue.active_for(app.db, KIND, "key", _job_key(corpus, params.validated()))
