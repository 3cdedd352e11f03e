"""Process-wide resources for the Streamlit app, shared by all sessions.

They live in ``searchapp.web.shared`` (a plain locked registry), not in
``st.cache_resource``: Streamlit's "clear cache" message empties that cache,
and the next page view would load every model a second time.
"""
import logging

from searchapp.context import App
from searchapp.web import shared

log = logging.getLogger(__name__)


def get_app() -> App:
    """The one App (database, model and index caches) of this Streamlit process."""
    return shared.app()


STARTUP_SECONDS = 120.0  # a worker this process started may take this long to take its lock


class _WorkerKeeper:
    """Starts the background worker for this process's data folder, and again if it dies.

    One per server process (kept in ``searchapp.web.shared``); the lock keeps two
    sessions that load a page at the same moment from starting two workers. A worker is
    alive while it holds its lock on ``worker.pid`` (``worker.worker_pid``); one this
    process has just started counts as alive while it starts (imports, opens the
    database) and before it takes that lock. A worker this process started is asked to
    stop (SIGTERM: it finishes its current job first) when the server shuts down
    (``searchapp.web.shared.lifespan``) or the process exits; one started by someone
    else is left alone. A read-only data folder gets no worker (it could not write
    anything): 0 is returned.
    """

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self.pid: int | None = None
        self.started: set[int] = set()
        self.started_at = 0.0
        self.settings = None

    def ensure(self, app: App) -> int:
        import time

        from searchapp.jobs import worker
        from searchapp.jobs.processes import pid_alive

        with self._lock:
            if app.db.read_only:
                return 0
            alive = worker.worker_pid(app.settings)
            if alive is None and self.pid in self.started and pid_alive(self.pid) \
                    and time.monotonic() - self.started_at < STARTUP_SECONDS:
                alive = self.pid  # ours, still starting
            if alive is not None:
                self.pid = alive
            else:
                self.pid = worker.ensure_worker(app.settings)
                self.started_at = time.monotonic()
                if not self.started:
                    import atexit

                    atexit.register(self.stop_started)
                self.started.add(self.pid)
                self.settings = app.settings
            return self.pid

    def stop_started(self) -> None:
        """SIGTERM the worker holding the worker lock, if this process started it."""
        import contextlib
        import os
        import signal

        from searchapp.jobs import worker

        pid = worker.worker_pid(self.settings) if self.settings else None
        if pid is None and self.pid in self.started:  # ours, still starting: never a recycled
            from searchapp.jobs.processes import pid_alive  # pid, as it is our unreaped child

            pid = self.pid if pid_alive(self.pid) else None
        if pid in self.started:  # never a recycled pid, never someone else's worker
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)


def _worker_keeper() -> _WorkerKeeper:
    return shared.once("worker-keeper", _WorkerKeeper)


def ensure_background_worker(app: App) -> int:
    """The pid of the worker serving ``app``'s data folder, starting one when none is alive.

    Cheap enough to call on every rerun: it reads the pid file and signals the pid.

    Example:
        >>> pid = ensure_background_worker(get_app())   # doctest: +SKIP
    """
    return _worker_keeper().ensure(app)


PRELOAD_DOCUMENTS = 2_000_000  # indexes opened at start-up, smallest corpora first (~3.4 GB)


def preload(app: App) -> int:
    """Load the models and open the corpora's indexes, then freeze the heap.

    Run once per process by the warm-up thread, so that the first search after
    a start finds its encoder and index ready (opening the index of a million
    documents takes seconds: reading and checking a 1.6 GB file). Indexes are
    opened smallest corpus first, up to ``PRELOAD_DOCUMENTS`` in all; the
    others open at their first use, as before. Returns how many objects were
    frozen (``searchapp.ui.heap``): after this, a full garbage collection skips
    the modules and models, which live as long as the process.

    Example:
        >>> preload(get_app())                                 # doctest: +SKIP
        494278
    """
    from searchapp.store import repo
    from searchapp.ui.heap import freeze_long_lived_heap

    with app.db.session() as s:
        summaries = repo.summaries(s)
    for name in sorted({c.model_name for c in summaries} | {app.settings.model}):
        try:
            app.encoder(name)
        except Exception:  # a broken model shows its error when it is used, not here
            continue
    _open_indexes(app, summaries)
    return freeze_long_lived_heap()


def _open_indexes(app: App, summaries) -> None:
    from searchapp.errors import SearchAppError
    from searchapp.vectors.handle import open_corpus

    budget = PRELOAD_DOCUMENTS
    for corpus in sorted((c for c in summaries if c.embedded), key=lambda c: c.embedded):
        if corpus.embedded > budget:
            break
        budget -= corpus.embedded
        try:
            open_corpus(app, corpus.name)
        except SearchAppError:  # changed or went meanwhile: its page says so when opened
            continue


def _warm_up_thread(app: App):
    import threading

    def start() -> threading.Thread:
        thread = threading.Thread(target=preload, args=(app,), name="searchapp-warm-up",
                                  daemon=True)
        log.info("warm-up started: loading the models (App %#x)", id(app))
        thread.start()
        return thread

    return shared.once("warm-up", start)


def warm_up(app: App) -> None:
    """Start loading the models in a background thread, once per process.

    The first search then finds its encoder ready instead of spending seconds
    (importing torch, reading the weights) inside the page script.
    """
    _warm_up_thread(app)
