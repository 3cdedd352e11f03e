"""Tables (judgements imports, corpus uploads) that cost far more to read than their size are
refused quickly, naming the limit, and nothing already stored changes.

The bombs are real gzip files: a header, then gzip members of 64 MiB of newlines each
(a file of many members is what ``cat a.gz b.gz`` makes; every reader takes it), so a
1.5 MB .csv.gz holds 1.5 GiB of blank lines. Read a line at a time, its 9 MB cousin
kept ``judge import`` busy for over 200 s.
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.cli import main
from searchapp.errors import IngestError
from searchapp.intake import source
from searchapp.intake.ingest import read_table
from searchapp.judgements import csv_io
from tests.test_duplicates import FAQ, make_corpus

BLANKS = gzip.compress(b"\n" * (64 << 20), 9)  # 64 MiB of newlines in 64 KB


@pytest.fixture
def cli_app(app, bundled_encoder, monkeypatch):
    """The FAQ corpus with one judgement stored (p1 and p3 are duplicates)."""
    make_corpus(app, bundled_encoder, "faq", FAQ)
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    assert main(["judge", "add", "--corpus", "faq", "--a", "p1", "--b", "p3", "--label",
                 "1"]) == 0
    return app


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def stored(capsys) -> list[tuple]:
    code, out, _ = run(capsys, "judge", "list", "--corpus", "faq", "--json")
    assert code == 0
    return [(j["a"], j["b"], j["label"], j["source"]) for j in json.loads(out)["judgements"]]


def blank_bomb(path: Path, members: int = 24, header: bytes = b"a_id,b_id,label\n") -> Path:
    with path.open("wb") as out:
        out.write(gzip.compress(header))
        for _ in range(members):
            out.write(BLANKS)
    return path


def import_timed(capsys, path: Path) -> tuple[int, str, float]:
    started = time.perf_counter()
    code, _, err = run(capsys, "judge", "import", "--corpus", "faq", str(path))
    return code, err, time.perf_counter() - started


def test_a_gzip_of_blank_lines_is_refused_in_seconds_and_nothing_changes(cli_app, capsys,
                                                                          tmp_path):
    bomb = blank_bomb(tmp_path / "blank.csv.gz")
    assert 1 << 20 < bomb.stat().st_size < 2 << 20  # 1.5 GiB of newlines
    before = stored(capsys)
    code, err, seconds = import_timed(capsys, bomb)
    assert code == 1 and seconds < 10, f"{seconds:.1f} s"
    assert err.startswith("error: blank.csv.gz: lines 2 to 200,002 are blank, more than the "
                          "200,000 blank lines in a row a file may have.")
    assert stored(capsys) == before == [("p1", "p3", 1, "cli")]


def test_a_gzip_that_expands_too_much_is_refused_by_its_ratio(cli_app, capsys, tmp_path):
    """Rows, not blank lines: 1 KB of gzip per 1 MiB of one row repeated."""
    bomb = tmp_path / "rows.csv.gz"
    rows = gzip.compress(b"p1,p3,0\n" * (8 << 20), 9)
    with bomb.open("wb") as out:
        out.write(gzip.compress(b"a_id,b_id,label\n"))
        for _ in range(8):
            out.write(rows)
    code, err, seconds = import_timed(capsys, bomb)
    assert code == 1 and seconds < 10, f"{seconds:.1f} s"
    assert err.startswith("error: rows.csv.gz expands more than 200 times its compressed size")
    assert "raise SEARCHAPP_MAX_RATIO if you trust it" in err
    assert stored(capsys) == [("p1", "p3", 1, "cli")]


def test_the_ratio_is_the_setting(cli_app, capsys, tmp_path, monkeypatch):
    bomb = tmp_path / "rows.csv.gz"
    bomb.write_bytes(gzip.compress(b"a_id,b_id,label\n" + b"p1,p3,0\n" * (1 << 18), 9))
    monkeypatch.setenv("SEARCHAPP_MAX_RATIO", "50")
    assert "expands more than 50 times" in import_timed(capsys, bomb)[1]
    monkeypatch.setenv("SEARCHAPP_MAX_RATIO", "100000")
    code, out, _ = run(capsys, "judge", "import", "--corpus", "faq", str(bomb), "--json")
    assert code == 0 and json.loads(out)["repeated"] == (1 << 18) - 1


def test_plain_blank_lines_are_refused_too(cli_app, capsys, tmp_path):
    plain = tmp_path / "blank.csv"
    plain.write_bytes(b"a_id,b_id,label\n" + b"\r\n" * 300_000 + b"p1,p3,0\n")
    code, err, _ = import_timed(capsys, plain)
    assert code == 1 and "more than the 200,000 blank lines in a row" in err
    assert stored(capsys) == [("p1", "p3", 1, "cli")]


def test_an_import_reads_at_most_its_rows(cli_app, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(csv_io, "MAX_IMPORT_ROWS", 1_000)
    many = tmp_path / "many.csv"
    many.write_text("a_id,b_id,label\n" + "p1,p3,0\n" * 1_001, encoding="utf-8")
    code, err, _ = import_timed(capsys, many)
    assert code == 1 and err.startswith(
        "error: many.csv has more than 1,000 rows, the most one import reads (it stopped at "
        "line 1002); nothing was imported. Split it into smaller files and import each.")
    assert stored(capsys) == [("p1", "p3", 1, "cli")]
    many.write_text("a_id,b_id,label\n" + "p1,p3,0\n" * 1_000, encoding="utf-8")
    assert import_timed(capsys, many)[0] == 0


def test_a_corpus_upload_of_the_bomb_is_refused_the_same_way(app, capsys, tmp_path):
    bomb = blank_bomb(tmp_path / "faq.csv.gz", header=b"id,text\n")
    started = time.perf_counter()
    code, _, err = run(capsys, "ingest", str(bomb), "--corpus", "faq")
    assert code == 1 and time.perf_counter() - started < 10
    assert "more than the 200,000 blank lines in a row" in err


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(st.integers(0, 30), min_size=1, max_size=8),
       crlf=st.booleans(), gz=st.booleans())
def test_blank_runs_up_to_the_cap_are_read_and_one_over_is_refused(monkeypatch, runs, crlf,
                                                                     gz):
    """Rows between runs of blank lines (the cap lowered to 20): every row is read when no
    run is longer, else the first longer run is named."""
    monkeypatch.setattr(source, "MAX_BLANK_RUN", 20)
    end = b"\r\n" if crlf else b"\n"
    data, line, first_bad = b"id,text" + end, 1, None
    for n, run_length in enumerate(runs):
        data += end * run_length + f"{n},row {n}".encode() + end
        if run_length > 20 and first_bad is None:
            first_bad = (line + 1, line + 21)
        line += run_length + 1
    data = gzip.compress(data) if gz else data
    name = "t.csv.gz" if gz else "t.csv"
    if first_bad is None:
        assert [c["text"] for _, c in read_table(data, name).rows()] == \
            [f"row {n}" for n in range(len(runs))]
    else:
        with pytest.raises(IngestError, match=f"lines {first_bad[0]:,} to {first_bad[1]:,} "
                                              "are blank"):
            list(read_table(data, name).rows())


@pytest.mark.parametrize("repeat", [1, 100, 10_000])
def test_ordinary_gzipped_tables_are_read_whole(repeat):
    """Real text compresses a few times, far under the ratio, at any length."""
    rows = "".join(f"{n},Question {n} about the office's opening hours in winter?\n"
                   for n in range(repeat))
    table = read_table(gzip.compress(("id,text\n" + rows).encode()), "faq.csv.gz")
    assert sum(1 for _ in table.rows()) == repeat
