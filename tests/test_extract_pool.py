"""``corpora.extract_pool``: tasks that hang, crash, run out of memory or raise cost only
themselves; the other tasks finish, the task stream is read lazily, ``cancel`` is quick.

Tasks are stdlib callables run through ``operator.call``, so a worker imports nothing
of the tests; timeouts are 1-2 s (a sleeping *task* is what times out).
"""

from __future__ import annotations

import ctypes
import operator
import os
import time

import pytest

from searchapp.errors import ConfigError
from searchapp.intake.extract_pool import (
    ExtractionPool,
    TaskCrashed,
    TaskTimedOut,
    limits_from_env,
)

CAP = 512 << 20


def test_each_failure_costs_only_its_own_task():
    tasks = [("ok1", (abs, -1)), ("sleeps", (time.sleep, 30)), ("ok2", (abs, -2)),
             ("exits", (os._exit, 3)), ("ok3", (abs, -3)), ("segfaults", (ctypes.string_at, 0)),
             ("ok4", (abs, -4)), ("eats memory", (operator.mul, b"x", 2 * CAP)),
             ("ok5", (abs, -5)), ("raises", (int, "x")), ("ok6", (abs, -6))]
    started = time.monotonic()
    with ExtractionPool(workers=2, timeout=1.5, memory=CAP) as pool:
        outcomes = dict(pool.map_unordered(operator.call, tasks))
    assert time.monotonic() - started < 20
    assert {k: v for k, v in outcomes.items() if k.startswith("ok")} == {
        f"ok{i}": i for i in range(1, 7)}
    assert isinstance(outcomes["sleeps"], TaskTimedOut)
    assert "sleeps took longer than 1.5 s" in str(outcomes["sleeps"])
    assert "SEARCHAPP_EXTRACT_TIMEOUT" in str(outcomes["sleeps"])
    for key in ("exits", "segfaults", "eats memory"):
        assert isinstance(outcomes[key], TaskCrashed), (key, outcomes[key])
        assert "crashed or ran out of memory" in str(outcomes[key])
    assert isinstance(outcomes["raises"], ValueError)


def test_the_task_stream_is_read_lazily():
    pulled, seen = [0], []

    def tasks():
        for i in range(40):
            pulled[0] += 1
            yield i, (abs, -i)

    with ExtractionPool(workers=2, timeout=10, memory=CAP) as pool:
        for key, result in pool.map_unordered(operator.call, tasks()):
            seen.append(key)
            assert result == key
            assert pulled[0] - len(seen) <= 2, "at most one task per worker in flight"
    assert sorted(seen) == list(range(40))


def test_a_result_that_cannot_be_sent_back_is_an_error():
    with ExtractionPool(workers=1, timeout=10, memory=CAP) as pool:
        (_key, outcome), = pool.map_unordered(operator.call, [("f", (eval, "lambda: 1"))])
    assert isinstance(outcome, RuntimeError) and "could not be sent back" in str(outcome)


def test_cancel_stops_at_once():
    tasks = [("quick", (abs, -1))] + [(f"slow{i}", (time.sleep, 60)) for i in range(4)]
    started = time.monotonic()
    with ExtractionPool(workers=2, timeout=120, memory=CAP) as pool:
        results = []
        for key, _ in pool.map_unordered(operator.call, tasks):
            results.append(key)
            pool.cancel()
        workers = [w.process for w in pool._pool]
    assert results == ["quick"]
    assert time.monotonic() - started < 10
    assert workers and not any(p.is_alive() for p in workers)


def test_inline_runs_here_and_yields_errors():
    with ExtractionPool(inline=True) as pool:
        outcomes = dict(pool.map_unordered(operator.call, [("pid", (os.getpid,)),
                                                           ("bad", (int, "x"))]))
    assert outcomes["pid"] == os.getpid()
    assert isinstance(outcomes["bad"], ValueError)


def test_settings_from_the_environment():
    assert limits_from_env({}) == (120.0, 2 << 30)
    assert limits_from_env({"SEARCHAPP_EXTRACT_TIMEOUT": "2.5",
                            "SEARCHAPP_EXTRACT_MEMORY": "512M"}) == (2.5, 512 << 20)
    for env in ({"SEARCHAPP_EXTRACT_TIMEOUT": "soon"}, {"SEARCHAPP_EXTRACT_TIMEOUT": "-1"},
                {"SEARCHAPP_EXTRACT_MEMORY": "lots"}):
        with pytest.raises(ConfigError, match=next(iter(env))):
            limits_from_env(env)


def test_a_worker_never_runs_the_parents_main_script(tmp_path, monkeypatch):
    """A spawned process imports the parent's ``__main__`` first: a page script a test ran
    (AppTest leaves it installed), or the whole CLI. The pool starts its workers without it."""
    import sys
    import types

    script = tmp_path / "page.py"
    script.write_text("raise SystemExit('the parent main script ran in a worker')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    with ExtractionPool(workers=1, timeout=30, memory=CAP) as pool:
        assert list(pool.map_unordered(operator.call, [("a", (abs, -7))])) == [("a", 7)]


def slow_tesseract(folder, seconds: float, stuck_on: str = ""):
    """A stand-in ``tesseract`` that takes ``seconds`` per page (OCR is slow work, not a
    wait for anything) and hangs on a page whose image holds ``stuck_on`` (never, if empty)."""
    import stat

    folder.mkdir()
    fake = folder / "tesseract"
    hang = f'grep -q "{stuck_on}" "$1" && sleep 60\n' if stuck_on else ""
    fake.write_text(f"#!/bin/sh\n{hang}sleep {seconds}\necho Scanned words\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return folder


def test_a_long_ocr_lives_while_its_pages_come_and_reports_each(tmp_path, monkeypatch):
    """Four scanned pages at 0.6 s each: 2.4 s in all against a 1.5 s timeout. The timeout
    counts from the last page read, so the file is read, and the parent hears every page."""
    from searchapp.intake.extract import extract_file
    from tests.document_files import make_pdf

    bin_dir = slow_tesseract(tmp_path / "bin", 0.6)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    pdf = make_pdf(tmp_path / "scan.pdf", [None] * 4)
    typed = make_pdf(tmp_path / "typed.pdf", ["Typed."])  # first: the reader's imports
    heard = []
    with ExtractionPool(workers=1, timeout=1.5, memory=1 << 30,
                        on_progress=lambda *report: heard.append(report)) as pool:
        outcomes = dict(pool.map_unordered(extract_file, [
            (name, (str(path), name, path.stat().st_size, None, "ab" * 32))
            for name, path in (("typed.pdf", typed), ("scan.pdf", pdf))]))
    result = outcomes["scan.pdf"]
    assert not isinstance(result, Exception), result
    assert result.documents[0].text.count("Scanned words") == 4
    assert heard == [("scan.pdf", done, 4) for done in range(1, 5)]


def test_a_task_that_stops_reporting_still_times_out(tmp_path, monkeypatch):
    from searchapp.intake.extract import extract_file

    bin_dir = slow_tesseract(tmp_path / "bin", 0.1, stuck_on="P5")  # every page hangs
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    from tests.document_files import make_pdf

    pdf = make_pdf(tmp_path / "scan.pdf", [None] * 2)
    with ExtractionPool(workers=1, timeout=1.5, memory=1 << 30) as pool:
        [(_, result)] = list(pool.map_unordered(extract_file, [
            ("scan.pdf", (str(pdf), "scan.pdf", pdf.stat().st_size, None, "ab" * 32))]))
    assert isinstance(result, TaskTimedOut), result


def test_inline_tasks_report_progress_too(tmp_path, monkeypatch):
    from searchapp.intake.extract import extract_file
    from tests.document_files import make_pdf

    bin_dir = slow_tesseract(tmp_path / "bin", 0)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    pdf = make_pdf(tmp_path / "scan.pdf", ["Typed.", None, None])
    heard = []
    with ExtractionPool(inline=True, on_progress=lambda *report: heard.append(report)) as pool:
        list(pool.map_unordered(extract_file, [
            ("scan.pdf", (str(pdf), "scan.pdf", pdf.stat().st_size, None, "ab" * 32))]))
    assert heard == [("scan.pdf", 1, 2), ("scan.pdf", 2, 2)]
