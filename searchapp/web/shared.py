"""Process-wide objects that must exist once per server process, whatever happens to caches.

The App (database, loaded models, open indexes), the keeper of the background
worker and the warm-up thread live as long as the process. They used to sit
in ``st.cache_resource``, which any client can empty with Streamlit's "clear
cache" message: the next page view then built a second App and loaded the
models again while the first copy stayed referenced elsewhere (+65-95 MB RSS
per message). Here they are plain entries of a locked dictionary, which no
Streamlit message reaches; a JSON API mounted in the same process later gets
the very same App from ``app()``.

No streamlit import here: the pages (``searchapp.ui.resources``), the door
and a future API all call the same functions.

Example:
    >>> first = once("example-counter", lambda: [0])
    >>> once("example-counter", lambda: [1]) is first      # created once, then shared
    True
    >>> reset()
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from searchapp.context import App

T = TypeVar("T")
log = logging.getLogger(__name__)

_lock = threading.Lock()
_objects: dict[str, Any] = {}
_key_locks: dict[str, threading.Lock] = {}


def once(key: str, factory: Callable[[], T]) -> T:
    """The object stored under ``key``, made by ``factory`` on first use (once, thread-safe).

    Two threads asking at the same moment get one object: the second waits for
    the first's ``factory`` (a lock per key, so a slow factory holds up no other key).
    A factory that raises stores nothing; the next call tries again.

    Example:
        >>> once("example-list", list) is once("example-list", list)
        True
        >>> reset()
    """
    with _lock:
        if key in _objects:
            return _objects[key]
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:
        with _lock:
            if key in _objects:
                return _objects[key]
        made = factory()
        with _lock:
            _objects[key] = made
        return made


def peek(key: str) -> Any | None:
    """The object stored under ``key``, or None when nothing made one yet.

    Example:
        >>> peek("example-nothing") is None
        True
    """
    with _lock:
        return _objects.get(key)


def reset() -> None:
    """Forget every object (tests: a fresh App per test). The objects themselves live on
    wherever they are still referenced; nothing is closed here.

    Example:
        >>> reset()
    """
    with _lock:
        _objects.clear()
        _key_locks.clear()


def app() -> App:
    """The one App of this process (settings read from the environment at first use).

    Example:
        >>> app() is app()                                    # doctest: +SKIP
        True
    """
    return once("app", _new_app)


def _new_app() -> App:
    from searchapp.context import App

    made = App()
    log.info("created the process-wide App (data folder %s)", made.settings.data_dir)
    return made


STARTUP_SECONDS = 120.0  # a worker this process started may take this long to take its lock


class WorkerKeeper:
    """Starts the background worker for this process's data folder, and again if it dies.

    One per server process (``worker_keeper()``); the lock keeps two sessions (or
    API requests) that arrive at the same moment from starting two workers. A worker
    is alive while it holds its lock on ``worker.pid`` (``worker.worker_pid``); one
    this process has just started counts as alive while it starts (imports, opens
    the database) and before it takes that lock. A worker this process started is
    asked to stop (SIGTERM: it finishes its current job first) when the server
    shuts down (``lifespan``) or the process exits; one started by someone else is
    left alone. A read-only data folder gets no worker (it could not write
    anything): 0 is returned. The pages and the JSON API share it.
    """

    def __init__(self) -> None:
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
                if self.pid > 0:  # a pid; never 0, which would signal our own process group
                    if not self.started:
                        import atexit

                        atexit.register(self.stop_started)
                    self.started.add(self.pid)
                self.settings = app.settings
            return self.pid

    def stop_started(self) -> None:
        """SIGTERM the worker holding the worker lock, if this process started it."""
        import os
        import signal

        from searchapp.jobs import worker
        from searchapp.jobs.processes import pid_alive

        pid = worker.worker_pid(self.settings) if self.settings else None
        if pid is None and self.pid in self.started:  # ours, still starting: never a recycled
            pid = self.pid if pid_alive(self.pid) else None  # pid, as it is our unreaped child
        if pid is not None and pid > 0 and pid in self.started:  # never a recycled pid,
            # never someone else's worker, never 0 (kill(0) is this whole process group)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)


def worker_keeper() -> WorkerKeeper:
    """This process' one WorkerKeeper.

    Example:
        >>> worker_keeper() is worker_keeper()
        True
        >>> reset()
    """
    return once("worker-keeper", WorkerKeeper)


def ensure_background_worker(app: App) -> int:
    """The pid of the worker serving ``app``'s data folder, starting one when none is alive.

    Cheap enough to call on every rerun or request: it reads the pid file and signals the pid.

    Example:
        >>> pid = ensure_background_worker(app())              # doctest: +SKIP
    """
    return worker_keeper().ensure(app)


@contextlib.asynccontextmanager
async def lifespan(_server: Any) -> AsyncIterator[None]:
    """``st.App(lifespan=...)``: the server holds its data folder from its start (a restore
    refuses a folder in use, ``data_lock``), answers ``searchapp search`` on it with its App
    (``search.query_server``), and when it shuts down, stops the worker it started.

    uvicorn ends a SIGTERM'd server by raising the signal again once it has shut
    down, so ``atexit`` handlers never run there; the lifespan's end does.

    Example:
        >>> st.App("app.py", lifespan=lifespan)              # doctest: +SKIP
    """
    from searchapp.base import data_lock
    from searchapp.base.private_files import private_dir
    from searchapp.config import Settings
    from searchapp.errors import SearchAppError

    data_lock.set_kind("server")
    try:  # broken settings are reported by the first page or request, as before
        data_dir = Settings.from_env().data_dir
        private_dir(data_dir)
        held = data_lock.hold(data_dir)
    except (SearchAppError, OSError):
        held = False
    stop = threading.Event()
    if held:  # `searchapp search` on this data folder is answered with this process' App
        from searchapp.answers.service import answer_request
        from searchapp.search.query_server import QueryServer

        threading.Thread(target=QueryServer(app, data_dir, answer_request).run, args=(stop,),
                         daemon=True,
                         name="query-server").start()
    try:
        yield
    finally:
        stop.set()
        if held:
            data_lock.release(data_dir)
        keeper = peek("worker-keeper")
        if keeper is not None:
            keeper.stop_started()
