"""Shared fixtures.

- Every test gets its own data folder (autouse), so nothing touches ``data/``, and ends
  with the umask it started with (the CLI's ``main`` sets 077 in its process).
- ``shared_data`` is ``../shared/data`` (CI has it beside the clone); tests that
  need it skip with a reason where it is absent.
- ``tiny_bert`` is a randomly initialised 2-layer BERT saved as a model folder,
  for tests where the real encoder adds nothing but time.
- ``postgres_server`` is one throwaway PostgreSQL cluster for the session
  (``tests/postgres.py``; skips with a reason where the binaries or psycopg are
  absent) and ``postgres_url`` a fresh database on it for one test.
- ``SEARCHAPP_TEST_DATABASE=postgres`` (``make test-postgres``) points every
  test's ``SEARCHAPP_DATABASE_URL`` at its own PostgreSQL database instead of
  SQLite in the data folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SEARCHAPP_SHARED_DATA", REPO.parent / "shared" / "data"))


PG_MODE = os.environ.get("SEARCHAPP_TEST_DATABASE", "sqlite") == "postgres"

# Property tests draw the same examples on every run of `make test` (CI must not turn red
# on a new draw); `HYPOTHESIS_PROFILE=explore make test` draws new ones to look for bugs.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(autouse=True)
def main_module_kept():
    """``sys.modules["__main__"]`` as the test found it: Streamlit's in-process script runner
    (AppTest) leaves the app's script there, and a process started afterwards by the
    forkserver or spawn method would run that script again while it starts (tests/racers.py's
    racers died so, when a UI test had run before them in the same process)."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(scope="session", autouse=True)
def background_workers_stopped(tmp_path_factory):
    """Every ``searchapp worker`` serving a data folder of this session is stopped by its
    pid when the session ends, however it was started (``ensure_worker`` here, a server
    under test, a worker process of a test): a worker outlives what started it (it is a
    session leader, so a server's Ctrl-C does not reach it), and one left behind would
    poll a deleted data folder for ever. Yields the pids ``ensure_worker`` started."""
    from searchapp.jobs import worker
    from tests.browser import stop

    real, started = worker.ensure_worker, []

    def tracked(settings) -> int:
        pid = real(settings)
        started.append(pid)
        return pid

    worker.ensure_worker = tracked
    yield started
    worker.ensure_worker = real
    base = str(tmp_path_factory.getbasetemp())
    for pid in set(started) | set(_workers_under(base)):
        if _is_worker(pid):  # still that worker: a pid can be reused once reaped
            stop(pid)


def _is_worker(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return cmdline[-3:-1] == [b"searchapp", b"worker"]


def _workers_under(base: str) -> list[int]:
    """The pids of ``searchapp worker`` processes whose data folder lies under ``base``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or not _is_worker(int(entry.name)):
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        folder = next((v[len(b"SEARCHAPP_DATA_DIR="):] for v in environ
                       if v.startswith(b"SEARCHAPP_DATA_DIR=")), b"")
        if folder.decode(errors="replace").startswith(base):
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="session")
def postgres_server():
    """One throwaway PostgreSQL server for the whole session, stopped by PID at the end."""
    from tests.postgres import PostgresServer, unavailable_reason

    reason = unavailable_reason()
    if reason:
        if PG_MODE:
            pytest.fail(f"SEARCHAPP_TEST_DATABASE=postgres, but {reason}")
        pytest.skip(reason)
    server = PostgresServer.start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A new, empty database on the session's server: ``postgresql+psycopg://...``."""
    return postgres_server.create_database()


@pytest.fixture(autouse=True)
def keep_umask():
    """Each test ends with the umask it started with: the CLI's ``main`` makes its process'
    files private (umask 077), and tests call it in-process."""
    previous = os.umask(0o022)
    os.umask(previous)
    yield
    os.umask(previous)


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch, request) -> Path:
    """A fresh SEARCHAPP_DATA_DIR per test; the database defaults to SQLite inside it
    (a fresh PostgreSQL database per test under SEARCHAPP_TEST_DATABASE=postgres)."""
    d = tmp_path / "data"
    monkeypatch.setenv("SEARCHAPP_DATA_DIR", str(d))
    monkeypatch.delenv("SEARCHAPP_DATABASE_URL", raising=False)
    if PG_MODE:
        monkeypatch.setenv("SEARCHAPP_DATABASE_URL", request.getfixturevalue("postgres_url"))
    monkeypatch.delenv("SEARCHAPP_MODEL", raising=False)
    monkeypatch.setenv("SEARCHAPP_DEVICE", "cpu")
    return d


@pytest.fixture
def db_url(data_dir, tmp_path) -> str:
    """The database a store or queue test runs against: a SQLite file of its own, or its
    own PostgreSQL database under SEARCHAPP_TEST_DATABASE=postgres."""
    if PG_MODE:
        return os.environ["SEARCHAPP_DATABASE_URL"]
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def app(data_dir):
    from searchapp.context import App

    a = App()
    yield a
    a.db.dispose()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "stsb" / "stsbenchmark.tsv.gz").is_file():
        pytest.skip(f"shared data sets not found at {SHARED_DATA} (CI has them beside the clone)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def stsb(shared_data):
    import pandas as pd

    return pd.read_csv(shared_data / "stsb" / "stsbenchmark.tsv.gz", sep="\t",
                       keep_default_na=False)


@pytest.fixture(scope="session")
def bundled_path() -> Path:
    from searchapp.embedding.models import BUNDLED

    return BUNDLED["all-MiniLM-L6-v2"]()


@pytest.fixture(scope="session")
def bundled_encoder(bundled_path):
    from searchapp.embedding.encoder import SiameseEncoder

    return SiameseEncoder.load(bundled_path, device="cpu")


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory, bundled_path) -> Path:
    """A 2-layer, 32-wide random BERT with the bundled tokenizer, as a model folder."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=37,
                        max_position_embeddings=128)
    folder = tmp_path_factory.mktemp("tiny-bert")
    BertModel(config).save_pretrained(folder, safe_serialization=True)
    AutoTokenizer.from_pretrained(bundled_path).save_pretrained(folder)
    return folder


@pytest.fixture
def ui_resources(monkeypatch, data_dir):
    """For Streamlit page tests: a new shared App per test, no worker process spawned
    (``ensure_worker`` records the data folders it was asked for), no background model
    loading. Yields the recorded list. The App lives in ``searchapp.web.shared``, which
    ``reset`` empties (Streamlit's cache is cleared too, for the pages' cached data)."""
    import streamlit as st

    from searchapp.web import shared

    spawned: list[str] = []
    monkeypatch.setattr("searchapp.jobs.worker.ensure_worker",
                        lambda settings: spawned.append(str(settings.data_dir)) or 0)
    monkeypatch.setattr("searchapp.ui.common.warm_up", lambda app: None)
    st.cache_resource.clear()
    shared.reset()
    yield spawned
    st.cache_resource.clear()
    shared.reset()
