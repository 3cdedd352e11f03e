"""Generated command lines (hypothesis): whatever the arguments, the CLI ends in one clear way.

Every test drives ``searchapp.cli.main.main`` in-process with generated
arguments (ids and counts from -2^70 to 2^70 and as odd text, thresholds as
NaN, infinities and text, names and queries with control characters, lone
surrogates and NUL, paths with ``?``, ``%``, ``#`` and spaces) against one data
folder holding a small embedded corpus, and checks what a user or a script
relies on:

- the exit code is 0, 1 or 2 (argparse's usage errors);
- no traceback, and no "something went wrong": every failure is classified;
- at most one line of stderr carries ``error:``;
- no control, ESC, bidi or separator character reaches stdout or stderr raw;
- a failed command changed nothing stored (documents, corpora, jobs, analyses).

Bounded: each test runs a fixed number of examples, without a deadline.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from searchapp.cli import main
from searchapp.context import App
from tests.test_clusters import make_corpus

EXAMPLES = 60  # per test, 150 for the fast job commands: 330 command lines in all


def bounded(examples: int = EXAMPLES):
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


PROPERTY = bounded()
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                    "\ud800-\udfff]")
TABLES = ("corpora", "documents", "embeddings", "jobs", "analyses", "models")
WEIRD = st.characters(categories=["L", "N", "P", "S", "Zs", "Cc", "Cf", "Cs", "Zl", "Zp"])


@pytest.fixture(scope="module")
def world(tmp_path_factory, bundled_encoder):
    """One data folder for the module: corpus 'notes' (40 embedded documents) and a few files
    with odd names to ingest; the CLI's App is this one (its encoder already loaded)."""
    root = tmp_path_factory.mktemp("cli-properties")
    files = root / "files"
    files.mkdir()
    (files / "a?b c.csv").write_text("id,text\nq1,what is this\nq2,another one\n")
    (files / "p%41#x.tsv").write_bytes(b"\xff\xfe\x00garbage\tnot\n\x00")
    (files / "sts?.csv").write_text("sentence1,sentence2,score\na,b,2\nc,d,x\n")
    (files / "empty.jsonl").write_text("")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEARCHAPP_DATA_DIR", str(root / "data"))
        mp.setenv("SEARCHAPP_DEVICE", "cpu")
        app = App()
        app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
        texts = [f"note {i}: {'cats purr' if i % 2 else 'ships sail'} {i % 5}" for i in range(40)]
        make_corpus(app, "notes", texts, np.asarray(bundled_encoder.encode(texts), np.float32))
        mp.setattr("searchapp.cli.common.open_app", lambda: app)
        yield app, files
    app.db.dispose()


def stored(app) -> str:
    """A digest of everything stored: rows of every table that a command could change."""
    digest = hashlib.sha256()
    with app.db.reader() as conn:
        for table in TABLES:
            for row in conn.execute(text(f"SELECT * FROM {table} ORDER BY 1")):
                digest.update(repr(tuple(row)).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def run(app, argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``main(argv)``; argparse's exits become codes."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def check(app, argv: list[str]) -> int:
    """Run ``argv`` and assert the properties in the module docstring; returns the code."""
    before = stored(app)
    code, out, err = run(app, argv)
    shown = f"argv={argv!r}\nexit {code}\nstdout={out[-800:]!r}\nstderr={err[-1500:]!r}"
    assert code in (0, 1, 2), shown
    assert "Traceback" not in err and "Traceback" not in out, shown
    assert "something went wrong" not in err, shown  # every failure is classified
    assert sum("error:" in line for line in err.splitlines()) <= 1, shown
    assert not UNSAFE.search(out) and not UNSAFE.search(err), shown
    if code != 0:
        assert stored(app) == before, f"a failed command changed what is stored\n{shown}"
    return code


# ---- strategies ------------------------------------------------------------------------------
BOUNDARIES = [2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**20, 2**31, 0, -1]  # 64-bit and around


def whole_numbers() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(BOUNDARIES).map(str),
                     st.integers(-(2**70), 2**70).map(str),
                     st.integers(-3, 60).map(str),
                     st.sampled_from(["1e3", "nan", "", " 7", "0x10", "٣", "+5"]),
                     st.text(WEIRD, max_size=6))


def numbers() -> st.SearchStrategy[str]:
    return st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.floats(-2, 2).map(lambda x: f"{x:.3f}"),
                     st.sampled_from(["nan", "-inf", "inf", "1e309", "0.5", "", "1,5", "-0"]),
                     st.text(WEIRD, max_size=6))


def names() -> st.SearchStrategy[str]:
    return st.one_of(st.just("notes"), st.text(WEIRD, max_size=24),
                     st.sampled_from(["", " notes ", "../etc", "no such", "notes\x00", "NOTES"]))


def free_text() -> st.SearchStrategy[str]:
    return st.one_of(st.text(WEIRD, max_size=60), st.sampled_from(["cats", "ships sail", ""]))


@st.composite
def options(draw, flags: dict) -> list[str]:
    """Each of ``flags`` (flag: strategy of its value) included or not."""
    argv: list[str] = []
    for flag, values in flags.items():
        if draw(st.booleans()):
            argv += [flag] if values is None else [flag, draw(values)]
    return argv


# ---- the properties ----------------------------------------------------------------------------
@PROPERTY
@given(data=st.data())
def test_generated_searches_end_cleanly(world, data):
    app, _ = world
    argv = ["search", "--corpus", data.draw(names()), data.draw(free_text())]
    argv += data.draw(options({
        "-k": whole_numbers(), "--mode": st.sampled_from(["hybrid", "semantic", "lexical",
                                                          "bogus", ""]),
        "--min-score": numbers(), "--where": st.one_of(free_text(), st.sampled_from(
            ["a=b", "year>=2024", "=", "x<", "date<2024-13-45", "k!=v"])),
        "--json": None}))
    check(app, argv)


@bounded(150)
@given(data=st.data())
def test_generated_job_commands_end_cleanly(world, data):
    app, _ = world
    argv = data.draw(st.one_of(
        st.tuples(st.just("cancel"), whole_numbers()).map(lambda t: ["jobs", *t]),
        options({"--limit": whole_numbers(), "--json": None}).map(lambda o: ["jobs", *o]),
        st.tuples(free_text()).map(lambda t: ["jobs", *t]),
        names().map(lambda n: ["embed", "--corpus", n]),
        names().filter(lambda n: n.strip() != "notes").map(
            lambda n: ["corpora", "delete", n]),
    ))
    check(app, argv)


@PROPERTY
@given(data=st.data())
def test_generated_duplicate_and_cluster_commands_end_cleanly(world, data):
    app, _ = world
    corpus = data.draw(names())
    argv = data.draw(st.one_of(
        options({"--threshold": numbers(), "--k": whole_numbers(), "--limit": whole_numbers(),
                 "--json": None}).map(lambda o: ["duplicates", "--corpus", corpus, *o]),
        st.tuples(free_text(), options({"--threshold": numbers(), "--json": None})).map(
            lambda t: ["duplicates", "check", "--corpus", corpus, t[0], *t[1]]),
        st.tuples(st.sampled_from(["kmeans", "community", "hdbscan", "x"]),
                  options({"--k": whole_numbers(), "--min-size": whole_numbers(),
                           "--threshold": numbers(), "--json": None})).map(
            lambda t: ["clusters", "--corpus", corpus, "--method", t[0], "--projection", "pca",
                       *t[1]]),
    ))
    check(app, argv)


@PROPERTY
@given(data=st.data())
def test_generated_files_and_paths_end_cleanly(world, data, tmp_path_factory):
    app, files = world
    path = data.draw(st.one_of(
        st.sampled_from(sorted(str(p) for p in files.iterdir())),
        st.text(WEIRD, max_size=20).map(lambda t: str(files / t) if t else t),
        st.sampled_from([str(files), "/", "/dev/null", str(files / "missing?.csv"),
                         str(files / "%2e%2e")])))
    argv = data.draw(st.one_of(
        st.tuples(names(), options({"--text-column": free_text(), "--id-column": free_text()})
                  ).map(lambda t: ["ingest", path, "--corpus", t[0], *t[1]]),
        names().map(lambda m: ["evaluate", "--model", m, "--sts", path]),
        st.tuples(numbers()).map(lambda t: ["evaluate", "--model", "all-MiniLM-L6-v2",
                                            "--pairs", path, "--threshold", t[0]]),
        st.just(["models"]), st.just(["corpora", "--json"]),
    ))
    check(app, argv)


def test_the_properties_catch_a_traceback(world, monkeypatch):
    """The check itself: a command that crashes, or prints an escape sequence, is caught."""
    app, _ = world

    def crash(args):
        raise ZeroDivisionError

    monkeypatch.setattr("searchapp.cli.common.open_app", crash)
    with pytest.raises(AssertionError, match="something went wrong"):
        check(app, ["corpora"])
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    assert check(app, ["corpora"]) == 0
    assert Path(app.settings.data_dir).is_dir()
