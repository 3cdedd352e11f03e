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


# The keeper lives with the App in ``searchapp.web.shared``: the API starts the worker too.
_WorkerKeeper = shared.WorkerKeeper
_worker_keeper = shared.worker_keeper
ensure_background_worker = shared.ensure_background_worker


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
        try:  # the query path too: its graph exported or loaded, checked and timed
            app.encoder(name).query_runtime()
        except Exception:  # a broken model shows its error when it is used, not here
            continue
    _open_indexes(app, summaries)
    return freeze_long_lived_heap()


def _open_indexes(app: App, summaries) -> None:
    from searchapp.errors import SearchAppError
    from searchapp.vectors.handle import open_corpus

    if app.settings.search_engine == "ray":  # the shard servers hold the vectors
        return
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
