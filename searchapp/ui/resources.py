"""Process-wide resources for the Streamlit app, shared by all sessions."""
import streamlit as st

from searchapp.context import App


@st.cache_resource(show_spinner=False)
def get_app() -> App:
    """The one App (database, model and index caches) of this Streamlit process."""
    return App()


class _WorkerKeeper:
    """Starts the background worker for this process's data folder, and again if it dies.

    One per Streamlit process (cached below); the lock keeps two sessions that
    load a page at the same moment from starting two workers.
    """

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self.pid: int | None = None

    def ensure(self, app: App) -> int:
        from searchapp.jobs import worker

        with self._lock:
            if self.pid is None or worker.worker_pid(app.settings) != self.pid:
                self.pid = worker.ensure_worker(app.settings)
            return self.pid


@st.cache_resource(show_spinner=False)
def _worker_keeper() -> _WorkerKeeper:
    return _WorkerKeeper()


def ensure_background_worker(app: App) -> int:
    """The pid of the worker serving ``app``'s data folder, starting one when none is alive.

    Cheap enough to call on every rerun: it reads the pid file and signals the pid.

    Example:
        >>> pid = ensure_background_worker(get_app())   # doctest: +SKIP
    """
    return _worker_keeper().ensure(app)


@st.cache_resource(show_spinner=False)
def _warm_up_thread(_app: App):
    """Load the encoders of the corpora (and the default model) once, in the background."""
    import threading

    def load() -> None:
        from searchapp.store import repo

        with _app.db.session() as s:
            names = {c.model_name for c in repo.summaries(s)} | {_app.settings.model}
        for name in sorted(names):
            try:
                _app.encoder(name)
            except Exception:  # a broken model shows its error when it is used, not here
                continue

    thread = threading.Thread(target=load, name="searchapp-warm-up", daemon=True)
    thread.start()
    return thread


def warm_up(app: App) -> None:
    """Start loading the models in a background thread, once per process.

    The first search then finds its encoder ready instead of spending seconds
    (importing torch, reading the weights) inside the page script.
    """
    _warm_up_thread(app)
