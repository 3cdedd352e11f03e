"""One App per process, whatever Streamlit's caches go through.

Streamlit's "clear cache" message (any client could send it; now only a
logged-in one) empties ``st.cache_resource``. The App, the worker keeper and
the warm-up thread live in ``searchapp.web.shared`` instead, so a clear is
followed by the same objects, not by a second copy of every model. The same
check against a real server: ``test_door_http.py``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from searchapp.ui import resources
from searchapp.web import shared

REPO = Path(__file__).resolve().parents[1]


def test_clearing_streamlit_caches_keeps_the_app_and_the_worker_keeper(ui_resources):
    at = AppTest.from_file(REPO / "app.py", default_timeout=60).run()
    app, keeper = resources.get_app(), resources._worker_keeper()
    st.cache_resource.clear()  # what the "clear cache" message does
    st.cache_data.clear()
    at.run()
    assert not at.exception and at.title[0].value == "Upload"
    assert resources.get_app() is app and resources._worker_keeper() is keeper


def test_the_warm_up_thread_starts_once_per_process_even_after_a_cache_clear(monkeypatch,
                                                                              app):
    shared.reset()
    loads = []
    release = threading.Event()
    monkeypatch.setattr(resources, "preload", lambda a: loads.append(a) or release.wait(5))
    try:
        resources.warm_up(app)
        st.cache_resource.clear()
        resources.warm_up(app)
        thread = shared.peek("warm-up")
        release.set()
        thread.join(5)
        assert loads == [app]
    finally:
        release.set()
        shared.reset()


def test_once_makes_one_object_for_threads_that_ask_together():
    made, started = [], threading.Barrier(8)

    def factory():
        made.append(1)
        return object()

    got = []

    def ask():
        started.wait()
        got.append(shared.once("test-together", factory))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shared.reset()
    assert len(made) == 1 and len({id(o) for o in got}) == 1


def test_a_keeper_told_pid_0_never_signals_its_own_process_group(tmp_path):
    """kill(0, SIGTERM) reaches every process of the group (under `make test`, make
    itself): a keeper whose ensure_worker answered 0 must not send it at exit."""
    import subprocess
    import sys

    script = (
        "from searchapp.jobs import worker\n"
        "from searchapp.web import shared\n"
        "worker.ensure_worker = lambda settings: 0  # as a page test's recorder answers\n"
        "print(shared.worker_keeper().ensure(shared.app()))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "SEARCHAPP_DATA_DIR": str(tmp_path / "data")},
                          start_new_session=True, timeout=120)  # its own group: only it dies
    assert (done.returncode, done.stdout.strip()) == (0, "0"), done.stderr
