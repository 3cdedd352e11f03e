"""Duplicates of a stored corpus: mined once per generation, stored, reused, run as a job.

The mined pairs are stored in the ``analyses`` table for (corpus, model, k,
floor) at the corpus generation. Any later request with the same k and a
threshold at or above a stored floor is answered by filtering, without mining
again, until the corpus changes. In one process the report built for a
threshold is kept in the App's generation memo, so a page rerun costs nothing.

Example:
    >>> report = find_duplicates(app, "faq", threshold=0.85)          # doctest: +SKIP
    >>> report.top_pairs(1)[0]                                         # doctest: +SKIP
    DuplicatePair(a='q12', b='q40', score=1.0, exact=True, ...)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from searchapp.context import App
from searchapp.duplicates.grouping import group_pairs
from searchapp.duplicates.job_payloads import DuplicatesPayload
from searchapp.duplicates.mining import Mined, mine
from searchapp.duplicates.params import (
    DEFAULT_K,
    INLINE_MAX,
    KIND,
    TooFewDocumentsError,
    check_k,
    floor_for,
    params_key,
)
from searchapp.duplicates.results import DuplicateReport
from searchapp.errors import CorpusChangedError
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.pairs.text_keys import text_key
from searchapp.pairs.threshold import resolve_threshold
from searchapp.store import repo
from searchapp.vectors.handle import CorpusHandle, as_handle


def open_for_duplicates(app: App, corpus: str | CorpusHandle) -> CorpusHandle:
    handle = as_handle(app, corpus)
    if handle.index.count < 2:
        raise TooFewDocumentsError(
            f"Corpus {handle.name!r} has only {handle.index.count} embedded document; "
            "duplicates need at least 2. Upload more documents first.")
    return handle


def stored(app: App, handle: CorpusHandle, threshold: float, k: int) -> Mined | None:
    """A result stored at the handle's generation for this k with a floor ≤ threshold."""
    with app.db.session() as s:
        rows = [r for r in repo.current_analyses(s, handle.corpus_id, handle.model.id, KIND,
                                                 handle.generation)
                if r.params.get("k") == k and r.params.get("floor", 2.0) <= threshold + 1e-9]
        if not rows:
            return None
        best = max(rows, key=lambda r: r.params["floor"])
        info, blob, seconds, floor = best.result, best.arrays, best.seconds, best.params["floor"]
    return app.memo.get_or_make(
        handle.corpus_id, handle.generation, (KIND, "mined", k, floor),
        lambda: Mined.from_stored(info, repo.unpack_arrays(blob), seconds or 0.0))


def mined_before(app: App, corpus: str | CorpusHandle) -> bool:
    """Whether the corpus as it is now has a stored result at some k and threshold.

    The Duplicates page mines again by itself when the user changes the
    threshold or k of a corpus mined before; a first mining waits for a click.

    Example:
        >>> mined_before(app, "faq")                                  # doctest: +SKIP
        True
    """
    handle = as_handle(app, corpus)
    with app.db.session() as s:
        return bool(repo.current_analyses(s, handle.corpus_id, handle.model.id, KIND,
                                          handle.generation))


def text_keys(app: App, handle: CorpusHandle) -> tuple[np.ndarray, np.ndarray]:
    """(ids, text keys) of the corpus' embedded documents, streamed from the database."""
    ids: list[int] = []
    keys: list[int] = []
    with app.db.session() as s:
        for part_ids, texts in repo.iter_texts(s, handle.corpus_id):
            ids += part_ids
            keys += [text_key(t) for t in texts]
    ids_arr, keys_arr = np.asarray(ids, np.int64), np.asarray(keys, np.int64)
    live = np.isin(ids_arr, handle.index.labels())
    return ids_arr[live], keys_arr[live]


def mine_corpus(app: App, corpus: str | CorpusHandle, threshold: float | None = None,
                k: int = DEFAULT_K, on_progress=None) -> Mined:
    """Mine a corpus at floor_for(threshold) and store the result (replacing an old one)."""
    handle = open_for_duplicates(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    k, floor = check_k(k), floor_for(threshold)
    mined = mine(handle.index, text_keys(app, handle), floor, k, on_progress)
    with app.db.session() as s:
        repo.save_analysis(s, handle.corpus_id, handle.model.id, KIND, params_key(k, floor),
                           {"k": k, "floor": floor}, handle.generation, mined.info(),
                           mined.seconds, mined.arrays())
    return mined


def find_duplicates(app: App, corpus: str | CorpusHandle, threshold: float | None = None,
                    k: int = DEFAULT_K, compute: bool = True, on_progress=None
                    ) -> DuplicateReport | None:
    """Duplicate pairs and groups at ``threshold`` (the model's own when None).

    Uses a stored result when one is current; otherwise mines here when
    ``compute`` (use ``request_mining`` for a job instead), else returns None.
    """
    handle = open_for_duplicates(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    k = check_k(k)
    mined, reused = stored(app, handle, threshold, k), True
    if mined is None:
        if not compute:
            return None
        mined, reused = mine_corpus(app, handle, threshold, k, on_progress), False
    return app.memo.get_or_make(
        handle.corpus_id, handle.generation, (KIND, "report", k, round(threshold, 6), reused),
        lambda: build_report(app, handle, mined, threshold, reused))


def build_report(app: App, handle: CorpusHandle, mined: Mined, threshold: float,
                 reused: bool) -> DuplicateReport:
    """Stored pairs → pairs and groups at ``threshold`` (ids only; texts when shown)."""
    keep = mined.at(threshold)
    a, b, score, exact = mined.a[keep], mined.b[keep], mined.score[keep], mined.exact[keep]
    keys = mined.keys_of(np.unique(np.r_[a, b]))
    groups = group_pairs(a, b, score, handle.index.vectors, threshold, keys)
    corpus_id = handle.corpus_id

    def lookup(ids: list[int]) -> dict[int, tuple[str, str]]:
        with app.db.session() as s:
            return repo.document_texts(s, corpus_id, ids)

    return DuplicateReport(handle.name, handle.model.name, threshold, mined.k, mined.method,
                           handle.index.count, mined.seconds, reused,
                           np.stack([a, b], axis=1).reshape(-1, 2), score, exact, groups, lookup)


def request_mining(app: App, corpus: str | CorpusHandle, threshold: float | None = None,
                   k: int = DEFAULT_K) -> int:
    """Queue a ``duplicates`` job (or return the id of the same one already queued/running)."""
    handle = open_for_duplicates(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    payload = DuplicatesPayload(handle.name, threshold, check_k(k))
    active = queue.active_for(app.db, KIND, "corpus", handle.name)
    if active and active.payload.get("k") == k and \
            floor_for(active.payload.get("threshold", 2.0)) <= threshold:
        return active.id
    return submit(app.db, payload)


def duplicates_report(app: App, corpus: str | CorpusHandle, threshold: float | None,
                      k: int, run_job: Callable[[int], object]) -> DuplicateReport:
    """The report, however it must be made: stored, mined here, or by a job run to its end.

    A corpus up to ``INLINE_MAX`` documents is mined in this process (a second or
    two); a larger one by a ``duplicates`` job, which ``run_job(job_id)`` runs to
    its end (raising when it does not succeed: the CLI runs it in its own
    process). Raises CorpusChangedError when the corpus changed meanwhile.

    Example:
        >>> duplicates_report(app, "faq", 0.85, 10, run_job=print).pair_count  # doctest: +SKIP
        11
    """
    handle = open_for_duplicates(app, corpus)
    report = find_duplicates(app, handle, threshold, k, compute=False)
    if report is None and handle.index.count <= INLINE_MAX:
        report = find_duplicates(app, handle, threshold, k)
    elif report is None:
        run_job(request_mining(app, handle, threshold, k))
        report = find_duplicates(app, handle.name, threshold, k, compute=False)
        if report is None:
            raise CorpusChangedError(f"Corpus {handle.name!r}", "its duplicates were mined")
    return report


def duplicates_task(ctx, payload: DuplicatesPayload) -> dict:
    """Worker task ``duplicates``: mine ``payload.corpus`` (``threshold``, ``k``).

    Idempotent: a current stored result is reused; after a crash it mines again.
    """
    app = ctx.app
    handle = open_for_duplicates(app, payload.corpus)
    threshold = resolve_threshold(app, handle.model.name, payload.threshold)
    k = check_k(payload.k)
    mined = stored(app, handle, threshold, k)
    if mined is None:
        ctx.progress(0, handle.index.count, "Finding nearest neighbours", force=True)
        mined = mine_corpus(app, handle, threshold, k, on_progress=ctx.progress)
    kept = mined.at(threshold)
    return {"corpus": handle.name, "threshold": threshold, "k": k, "floor": mined.floor,
            "documents": mined.documents, "pairs": len(kept),
            "exact_pairs": int(mined.exact[kept].sum()), "method": mined.method,
            "seconds": mined.seconds}
