"""``searchapp search`` answered by a running worker over ``DATA_DIR/run/query.sock``.

A real ``searchapp worker`` process serves the test's data folder (started here, stopped
by its pid); the CLI is run with torch made unimportable, so an answer proves it came over
the socket, and it must equal the search run in the test's own process. Without a running
process (nothing there, or a socket file a killed process left) the CLI searches itself.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from searchapp.cli.main import main
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.search import query_wire
from searchapp.search.query_server import QueryServer
from searchapp.search.service import hit_json, search
from tests.browser import stop

REPO = Path(__file__).resolve().parents[1]
ROWS = [("dog", "A dog runs along the beach chasing a ball."),
        ("cat", "A cat sleeps on the windowsill in the afternoon sun."),
        ("birds", "Seagulls steal chips from tourists at the harbour."),
        ("reset", "How do I reset my password?"),
        ("refund", "When will my refund arrive?")]
# run as `python -c`: the CLI, then which heavy modules it loaded, on stderr
PROBE = ("import sys; from searchapp.cli.main import main; rc = main(sys.argv[1:]); "
         "print('LOADED', sorted(m for m in ('torch', 'numpy', 'searchapp.search.service', "
         "'searchapp.context') if m in sys.modules), file=sys.stderr); sys.exit(rc)")


@pytest.fixture
def app(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    csv = pd.DataFrame([{"id": i, "text": t} for i, t in ROWS]).to_csv(index=False).encode()
    job = run_until_done(app, upload(app, read_table(csv, "pets.csv"), "pets").job_id)
    assert job.status == "succeeded", job.error
    return app


@pytest.fixture
def worker(app, data_dir):
    """A real ``searchapp worker`` on the test's data folder, answering on the socket."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "searchapp", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not answers(data_dir):
            assert proc.poll() is None, "the worker ended"
            assert time.monotonic() < deadline, "the worker never answered on its socket"
            time.sleep(0.1)
        yield proc.pid
    finally:
        stop(proc.pid)


def answers(data_dir: Path) -> bool:
    try:
        query_wire.connect(query_wire.socket_path(data_dir)).close()
        return True
    except OSError:
        return False


def cli_without_torch(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``searchapp ARGS`` in a process where ``import torch`` fails."""
    blocker = tmp_path / "blocked" / "torch"
    blocker.mkdir(parents=True, exist_ok=True)
    (blocker / "__init__.py").write_text("raise ImportError('torch is blocked in this test')\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker.parent}{os.pathsep}{REPO}"}
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_the_cli_is_answered_by_a_running_worker_without_loading_a_model(app, worker,
                                                                        tmp_path):
    for mode in ("hybrid", "semantic", "lexical"):
        proc = cli_without_torch(tmp_path, "search", "--corpus", "pets", "a puppy at the sea",
                                 "-k", "3", "--mode", mode, "--json")
        assert proc.returncode == 0, proc.stderr
        assert "LOADED []" in proc.stderr  # neither torch, numpy nor the search service
        shown = json.loads(proc.stdout)["results"]
        here = [hit_json(h) for h in search(app, "pets", "a puppy at the sea", k=3, mode=mode)]
        assert [h["id"] for h in shown] == [h["id"] for h in here]
        for got, want in zip(shown, here, strict=True):
            assert got["score"] == pytest.approx(want["score"], abs=1e-3)
            assert got["snippet"] == want["snippet"]


def test_the_text_output_is_the_same_from_the_worker_and_in_process(app, worker, tmp_path,
                                                                    capfd):
    proc = cli_without_torch(tmp_path, "search", "--corpus", "pets", "reset my password",
                             "-k", "2", "--mode", "lexical")
    assert proc.returncode == 0, proc.stderr
    assert "LOADED []" in proc.stderr
    assert main(["search", "--corpus", "pets", "reset my password", "-k", "2", "--mode",
                 "lexical", "--here"]) == 0
    assert proc.stdout == capfd.readouterr().out
    assert "[reset]" in proc.stdout


def test_answers_come_over_the_socket_as_they_do_in_process(app, worker, tmp_path, capfd):
    args = ["search", "--corpus", "pets", "where does the cat sleep?", "-k", "2"]
    proc = cli_without_torch(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert "LOADED []" in proc.stderr
    assert main([*args, "--here"]) == 0
    assert proc.stdout == capfd.readouterr().out
    assert proc.stdout.startswith("Answer 1 (") and "A cat sleeps on the windowsill" in proc.stdout
    keywords = cli_without_torch(tmp_path, "search", "--corpus", "pets", "cat windowsill",
                                 "--answer", "--json")
    assert json.loads(keywords.stdout)["answers"][0]["doc_id"] == "cat"


def test_an_error_travels_from_the_worker_as_one_line(app, worker, tmp_path):
    proc = cli_without_torch(tmp_path, "search", "--corpus", "nope", "anything")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["error: No corpus named 'nope'. Existing corpora: pets.",
                                        "LOADED []"]
    proc = cli_without_torch(tmp_path, "search", "--corpus", "pets", "x", "--mode", "fuzzy")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_with_nothing_running_the_cli_searches_in_its_own_process(app, data_dir, capsys):
    assert query_wire.ask(data_dir, {"corpus": "pets", "query": "dog"}) is None
    assert main(["search", "--corpus", "pets", "a dog on the sand", "-k", "1"]) == 0
    assert "[dog]" in capsys.readouterr().out


def stale_socket(data_dir: Path) -> Path:
    """The socket file a killed process leaves: nobody listens behind it."""
    path = query_wire.socket_path(data_dir)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with query_wire.short_name(path) as name:
        dead.bind(name)
    dead.close()
    assert path.exists()
    return path


def test_a_stale_socket_file_is_ignored_by_the_cli(app, data_dir, capsys):
    stale_socket(data_dir)
    assert main(["search", "--corpus", "pets", "a dog on the sand", "-k", "1"]) == 0
    assert "[dog]" in capsys.readouterr().out


def test_a_stale_socket_file_is_replaced_by_the_next_server(app, data_dir):
    path = stale_socket(data_dir)
    halt = threading.Event()
    server = threading.Thread(target=QueryServer(lambda: app, data_dir).run, args=(halt,))
    server.start()
    try:
        request = {"corpus": "pets", "query": "refund", "mode": "lexical", "k": 1,
                   "database": query_wire.database_key(app.settings.database_url)}
        deadline = time.monotonic() + 30
        while (answer := query_wire.ask(data_dir, request)) is None:
            assert time.monotonic() < deadline, "the stale file was never replaced"
            time.sleep(0.05)
        assert [h["id"] for h in answer["hits"]] == ["refund"]
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    finally:
        halt.set()
        server.join()
    assert not path.exists()  # the server removes its socket when it stops


def test_a_server_of_another_database_leaves_the_search_to_the_cli(app, data_dir):
    halt = threading.Event()
    server = threading.Thread(target=QueryServer(lambda: app, data_dir).run, args=(halt,))
    server.start()
    try:
        deadline = time.monotonic() + 30
        while not answers(data_dir):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert query_wire.ask(data_dir, {"corpus": "pets", "query": "refund",
                                         "database": "another"}) is None
    finally:
        halt.set()
        server.join()


def test_a_search_in_its_own_process_loads_the_model_without_the_speed_probe(monkeypatch):
    """Precision auto probes bf16 against float32 and times both as the model loads (seconds);
    one query needs none of it: float32 is exact. A precision asked for is kept."""
    from searchapp.cli import common

    monkeypatch.delenv("SEARCHAPP_PRECISION", raising=False)
    assert common.one_query_app().settings.precision == "fp32"
    monkeypatch.setenv("SEARCHAPP_PRECISION", "bf16")
    assert common.one_query_app().settings.precision == "bf16"
