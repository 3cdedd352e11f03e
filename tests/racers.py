"""Processes that do one thing at the same moment, for the race tests (from a forkserver).

``race(target, args, n)`` starts ``n`` processes that each wait at one barrier,
then call ``target(*args)``; it returns what each reported ("ok" or the error).
"""

from __future__ import annotations

import multiprocessing


def open_database(url: str) -> None:
    from searchapp.store.db import Database

    Database(url).dispose()


def upload_shared(url: str) -> None:
    """What ``corpora.service.upload`` does in the store: the corpus made if new, then its
    documents, in one transaction (without the encoder and job imports: a light process)."""
    from searchapp.store import repo
    from searchapp.store.db import Database
    from searchapp.store.documents import NewDocument

    db = Database(url)
    _BARRIER.wait()  # the database is open: only the upload itself races
    with db.session() as s:
        corpus = repo.get_or_create_corpus(s, "shared", "all-MiniLM-L6-v2")
        repo.add_documents(s, corpus, [NewDocument("a", "first"), NewDocument("b", "second")])
    db.dispose()


def delete_one(url: str, corpus: str, external_id: str) -> int:
    """Delete one document by id as the API does (``store.repo.delete_by_external_id`` in one
    session); how many this process deleted."""
    from searchapp.store import repo
    from searchapp.store.db import Database

    db = Database(url)
    try:
        with db.session() as s:
            deleted, _missing = repo.delete_by_external_id(s, repo.get_corpus(s, corpus),
                                                           [external_id])
            return len(deleted)
    finally:
        db.dispose()


_BARRIER = None


def _run(target, args, barrier, results) -> None:
    global _BARRIER
    _BARRIER = barrier
    try:
        if target is not upload_shared:
            barrier.wait()
        value = target(*args)
        results.put("ok" if value is None else f"ok {value}")
    except Exception as exc:  # reported to the test, which shows it
        results.put(f"{type(exc).__name__}: {exc}")


def race(target, args: tuple, processes: int = 4, timeout: float = 120) -> list[str]:
    # forkserver: no fork of a process that has loaded torch, and the imports are paid once
    # (in the server) instead of once per racer, which is seconds on a loaded machine
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tests.racers", "searchapp.store.db", "searchapp.store.repo"])
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_run, args=(target, args, barrier, results))
             for _ in range(processes)]
    for p in procs:
        p.start()
    out = [results.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(timeout)
    return sorted(out)
