"""Each front end has one boundary: any exception is one line with a log reference.

- The CLI: a SearchAppError is ``error: message``; anything else is ``error:
  something went wrong (TYPE, reference X); details in LOG`` with the traceback
  in the log under ``[ref X]``, never on the terminal, never the data it quoted.
- The worker: a task's exception fails the job with that one line (capped,
  escaped), the traceback in ``worker.log``.
- Text from documents reaches the terminal escaped: no control character, ESC
  sequence or bidi override, and no line a document could forge.
- The worker lock: a stale ``worker.pid`` naming a live unrelated process does
  not count as a worker.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from searchapp.cli import main
from searchapp.errors import IngestError
from searchapp.jobs import queue
from searchapp.jobs.worker import hold_worker_lock, work, worker_pid
from searchapp.reporting import describe
from tests.test_bad_input import one_line_error
from tests.test_clusters import make_corpus
from tests.test_jobs import declare_for_test

ROWS = [f"row {i}: secret-document-text {i}" for i in range(5_000)]
# Every character class that must not reach a terminal raw: C0 (ESC, BEL, CR, NUL, newline),
# DEL, C1 (CSI, NEL), bidi overrides and isolates, the line and paragraph separators.
NASTY = ("\x1b]0;owned\x07\x1b[2J\r\x00\n\x7f\x9b31m\x85\u202eevil\u202c\u2066x\u2069"
         "\u2028\u2029\u200f")
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


# ---- the CLI -----------------------------------------------------------------------------
def test_an_unexpected_error_is_one_line_with_a_reference_into_the_log(app, capsys,
                                                                        monkeypatch):
    def broken(args):
        raise KeyError("\n".join(ROWS))  # a bug that quotes 5,000 rows of data

    assert _run_with(monkeypatch, ["corpora"], {"func": broken}) == 1
    line = one_line_error(capsys)
    reference = re.fullmatch(r"error: something went wrong \(KeyError, reference ([0-9a-f]{6})\);"
                             r" details in (.+)", line)
    assert reference, line
    assert reference.group(2) == str(app.settings.data_dir / "searchapp.log")
    assert "secret-document-text" not in line
    log = (app.settings.data_dir / "searchapp.log").read_text()
    entry = log[log.index(f"[ref {reference.group(1)}] searchapp corpora"):]
    assert "Traceback (most recent call last)" in entry and "KeyError" in entry


def _run_with(monkeypatch, argv, defaults) -> int:
    """``main(argv)`` with the parsed command's handler replaced (``defaults``)."""
    cli_main = sys.modules["searchapp.cli.main"]  # the package's `main` is the function
    real = cli_main.build_parser

    def parser():
        p = real()
        for action in p._subparsers._group_actions:
            for sub in action.choices.values():
                sub.set_defaults(**defaults)
        return p

    monkeypatch.setattr(cli_main, "build_parser", parser)
    return main(argv)


def test_the_log_goes_to_the_temporary_folder_when_the_data_folder_cannot_take_it(
        app, capsys, monkeypatch):
    (app.settings.data_dir / "searchapp.log").mkdir()  # the log path is taken by a folder

    def broken(args):
        raise RuntimeError("bug")

    assert _run_with(monkeypatch, ["jobs"], {"func": broken}) == 1
    line = one_line_error(capsys)
    ref = re.search(r"reference ([0-9a-f]{6})\); details in (.+)$", line)
    from searchapp.reporting import fallback_log

    assert ref.group(2) == str(fallback_log())
    assert f"[ref {ref.group(1)}]" in fallback_log().read_text()


def test_describe_keeps_a_core_errors_message_and_caps_it(tmp_path):
    long = IngestError("row 3 is bad: " + " ".join(ROWS))
    message = describe(long, tmp_path / "x.log")
    assert message.startswith("row 3 is bad: row 0:") and len(message) == 500
    assert not (tmp_path / "x.log").exists()  # a core error is not a bug: nothing logged


# ---- the worker ---------------------------------------------------------------------------
def _task_raising(exc):
    def task(ctx, payload):
        raise exc

    return task


@pytest.mark.parametrize("exc", [ValueError("\n".join(ROWS)), IngestError("\n".join(ROWS))],
                         ids=["bug", "core-error"])
def test_a_failing_task_is_a_one_line_capped_job_error(app, monkeypatch, exc, capsys):
    declare_for_test(monkeypatch, "failing", _task_raising(exc))
    job_id = queue.enqueue(app.db, "failing", {})
    assert work(app, stop_when_idle=True) == 1
    job = queue.get(app.db, job_id)
    assert job.status == "failed" and "\n" not in job.error and len(job.error) <= 500
    if isinstance(exc, IngestError):
        assert job.error.startswith("row 0: secret-document-text 0 row 1:")
    else:
        assert "secret-document-text" not in job.error
        ref = re.search(r"reference ([0-9a-f]{6})", job.error).group(1)
        assert f"[ref {ref}] failing job {job_id}" in \
            (app.settings.data_dir / "worker.log").read_text()
    assert main(["jobs"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 2  # the header and the job: no row of data on its own line


def _task_inserting_a_broken_row(ctx, payload):
    """An unclassified database error (a foreign key to no corpus) whose statement carries
    the rows' text as parameters."""
    from sqlalchemy import text

    with ctx.app.db.session() as s:
        s.execute(text("INSERT INTO documents (corpus_id, external_id, text, content_hash) "
                       "VALUES (:c, :e, :t, :h)"),
                  [{"c": 987654, "e": f"x{i}", "t": row, "h": str(i)}
                   for i, row in enumerate(ROWS)])


def test_the_log_of_a_failed_insert_holds_the_traceback_not_the_rows(app, monkeypatch):
    declare_for_test(monkeypatch, "inserting", _task_inserting_a_broken_row)
    job_id = queue.enqueue(app.db, "inserting", {})
    assert work(app, stop_when_idle=True) == 1
    job = queue.get(app.db, job_id)
    assert job.status == "failed" and "IntegrityError" in job.error
    log = (app.settings.data_dir / "worker.log").read_text()
    assert "IntegrityError" in log and "INSERT INTO documents" in log
    assert "secret-document-text" not in log  # hide_parameters: the SQL, not its 5,000 rows


# ---- control characters in what the CLI prints --------------------------------------------------
@pytest.fixture
def nasty_corpus(app):
    """12 documents whose texts and ids carry every unsafe character, with planted vectors."""
    rng = np.random.default_rng(0)
    base = rng.normal(size=(3, 384)).astype(np.float32)
    vectors = np.repeat(base, 4, axis=0) + 0.01 * rng.normal(size=(12, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"lorem {i} {NASTY} lorem" for i in range(12)]
    make_corpus(app, "nasty", texts, vectors)
    job = queue.enqueue(app.db, "embed", {"corpus": "nasty"})
    lease = queue.claim(app.db, "w:1").lease
    queue.finish(app.db, lease, "failed", error=f"failed on {NASTY}")
    assert job
    return "nasty"


@pytest.mark.parametrize("command,lines", [
    (["search", "--corpus", "nasty", "lorem", "--mode", "lexical", "-k", "5"], 5),
    (["duplicates", "--corpus", "nasty", "--threshold", "0.9"], None),
    (["clusters", "--corpus", "nasty", "--method", "kmeans", "--k", "3", "--projection", "pca"],
     None),
    (["jobs"], 2),
    (["corpora"], 2),
])
def test_document_text_reaches_the_terminal_escaped(app, nasty_corpus, capsys, command, lines):
    assert main(command) == 0
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert not UNSAFE.search(stream), repr(UNSAFE.search(stream))
    out = captured.out.splitlines()
    assert not any(line.startswith(("evil", "x", "31m")) for line in out)  # no forged line
    if lines is not None:
        assert len(out) == lines, captured.out


@pytest.mark.parametrize("command", [
    ["search", "--corpus", "nasty", "lorem", "--mode", "lexical", "-k", "5", "--json"],
    ["duplicates", "--corpus", "nasty", "--threshold", "0.9", "--json"],
    ["jobs", "--json"],
])
def test_json_output_is_escaped_and_still_the_same_json(app, nasty_corpus, capsys, command):
    assert main(command) == 0
    out = capsys.readouterr().out
    assert not UNSAFE.search(out) and len(out.splitlines()) == 1
    parsed = json.loads(out)  # still JSON, and the texts are the stored texts
    if command[0] == "search":
        assert all(NASTY in hit["text"] for hit in parsed["results"])


def test_a_path_printed_back_is_escaped(app, nasty_corpus, capsys, tmp_path):
    """``Wrote N pairs to PATH``: a print of a user's argument that no field escaping saw."""
    out = tmp_path / "pairs\x1b]0;owned\x07\u202e.csv"
    assert main(["duplicates", "--corpus", "nasty", "--threshold", "0.9", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert out.is_file() and not UNSAFE.search(printed)
    assert "pairs\\u001b]0;owned\\u0007\\u202e.csv" in printed


def test_an_error_quoting_user_input_is_escaped(app, capsys):
    assert main(["search", "--corpus", f"no{NASTY}such", "q"]) == 1
    err = capsys.readouterr().err
    assert not UNSAFE.search(err) and len(err.splitlines()) == 1


def test_a_usage_error_quoting_an_argument_is_escaped(app, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["search", "--corpus", "c", "q", "-k", f"1{NASTY}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert not UNSAFE.search(err) and "invalid int value" in err


# ---- the worker lock ---------------------------------------------------------------------------
def test_a_stale_pid_file_naming_a_live_unrelated_process_is_no_worker(app):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (app.settings.data_dir / "worker.pid").write_text(str(sleeper.pid))
        assert worker_pid(app.settings) is None  # so the app starts a worker
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_process_holding_the_worker_lock_is_the_worker_until_it_ends(app):
    script = ("import sys, time; from searchapp.jobs.worker import hold_worker_lock; "
              "h = hold_worker_lock(sys.argv[1]); print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", script, str(app.settings.data_dir)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert worker_pid(app.settings) == holder.pid
        assert hold_worker_lock(app.settings.data_dir, wait=0.2) is None  # a second waits
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 10
    while worker_pid(app.settings) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker_pid(app.settings) is None
    mine = hold_worker_lock(app.settings.data_dir, wait=0)
    assert mine is not None and worker_pid(app.settings) is not None
    mine.close()


def test_a_worker_on_a_read_only_folder_is_one_line(app, capsys):
    from tests.filesystems import read_only

    app.db.dispose()
    with read_only(app.settings.data_dir):
        assert main(["worker"]) == 1
        assert f"The data folder {app.settings.data_dir} is read-only" in one_line_error(capsys)
