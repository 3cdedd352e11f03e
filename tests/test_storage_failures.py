"""A database or data folder that fails is one line naming what to do, and loses nothing.

Real failure conditions, one class each (``store/failures.py`` classifies them):
a file that is not SQLite, a damaged one, a read-only data folder (chmod, or a
read-only bind mount as root), a full disk (a small tmpfs as root; a file size
limit in a subprocess everywhere), two processes creating the same schema or
corpus at once, folder names with ``?``, ``%``, ``#`` and spaces.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from searchapp.cli import main
from searchapp.config import Settings
from searchapp.context import App
from searchapp.store import repo
from searchapp.store.db import Database
from searchapp.vectors.handle import open_corpus
from tests import racers
from tests.filesystems import fill, read_only, small_disk
from tests.racers import race
from tests.test_bad_input import one_line_error
from tests.test_clusters import make_corpus

REPO = Path(__file__).resolve().parents[1]
ROWS = 5_000  # documents in the upload that meets the full disk
MARKER = "zebra-marker-text"  # in every row: must never appear in an error line


def snapshot(folder: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under ``folder``: "nothing changed" made exact
    (but for ``.in-use/``, where each process that opens the folder says it is there)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).parts[0] != ".in-use"}


def stored_documents(folder: Path) -> int:
    with sqlite3.connect(f"file:{folder / 'searchapp.db'}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT count(*) FROM documents").fetchone()[0]


def big_csv(path: Path, rows: int = ROWS) -> Path:
    lines = ["id,text"] + [f"r{i},{MARKER} row {i} " + "lorem ipsum " * 20 for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


# ---- not a database, damaged -------------------------------------------------------------
@pytest.mark.parametrize("command", [["corpora"], ["search", "--corpus", "c", "q"],
                                     ["jobs"], ["ingest", "x.csv", "--corpus", "c"]])
def test_a_file_that_is_not_sqlite_is_one_line_and_left_as_it_was(data_dir, capsys, command):
    data_dir.mkdir(parents=True)
    db = data_dir / "searchapp.db"
    db.write_bytes(b"these are my notes, not a database\n" * 100)
    before = snapshot(data_dir)
    assert main(command) == 1
    assert "is not a SQLite database; nothing was changed" in one_line_error(capsys)
    assert snapshot(data_dir) == before


@pytest.mark.parametrize("rows", [[("x",)], [(3,), (3,)], [(None,)], [(2.5,)], []])
def test_another_programs_sqlite_database_is_one_line_and_left_as_it_was(data_dir, capsys,
                                                                         rows):
    """A SQLite file with a ``schema_info`` table that is not ours: no version to trust."""
    data_dir.mkdir(parents=True)
    with sqlite3.connect(data_dir / "searchapp.db") as conn:
        conn.execute("CREATE TABLE schema_info (id INTEGER PRIMARY KEY, version)")
        conn.executemany("INSERT INTO schema_info (version) VALUES (?)", rows)
    before = dump(data_dir / "searchapp.db")
    assert main(["corpora"]) == 1
    assert "is not a searchapp database" in one_line_error(capsys)
    assert dump(data_dir / "searchapp.db") == before  # its tables and rows (SQLite's journal
    # mode, set when the file is opened, is the one change: it holds no data)


def dump(db: Path) -> list[str]:
    """Every statement that rebuilds the database's schema and rows."""
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


def test_a_damaged_database_is_one_line_and_left_as_it_was(app, data_dir, capsys):
    app.db.dispose()
    db = data_dir / "searchapp.db"
    raw = bytearray(db.read_bytes())
    raw[100:4096] = b"\xa5" * (4096 - 100)  # the schema page, past the 100-byte header
    db.write_bytes(bytes(raw))
    before = snapshot(data_dir)
    assert main(["corpora"]) == 1
    assert "is damaged (SQLite: malformed)" in one_line_error(capsys)
    assert snapshot(data_dir) == before


# ---- read-only data folder -----------------------------------------------------------------
@pytest.fixture
def filled_folder(app, data_dir, bundled_encoder):
    """The data folder with a corpus of 30 embedded documents and its index file saved."""
    texts = [f"document {i} about {'cats' if i % 2 else 'ships'}" for i in range(30)]
    vectors = bundled_encoder.encode(texts)
    make_corpus(app, "notes", texts, np.asarray(vectors, dtype=np.float32))
    handle = open_corpus(app, "notes")
    app.indexes.save(handle.corpus_id, handle.model)
    assert list((data_dir / "indexes").glob("*.hnsw"))
    app.db.dispose()
    return data_dir


@pytest.fixture
def cli_app(monkeypatch, bundled_encoder):
    """The CLI's App gets the session's loaded encoder (each command makes a fresh App)."""

    def open_app():
        a = App()
        a.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
        return a

    monkeypatch.setattr("searchapp.cli.common.open_app", open_app)


def test_a_read_only_data_folder_reads_and_refuses_writes(filled_folder, cli_app, capsys,
                                                          tmp_path):
    upload = big_csv(tmp_path / "more.csv", rows=3)
    with read_only(filled_folder):
        before = snapshot(filled_folder)
        assert main(["corpora"]) == 0
        assert "notes  all-MiniLM-L6-v2  30         30" in capsys.readouterr().out
        assert main(["search", "--corpus", "notes", "cats", "-k", "3"]) == 0
        assert len(re.findall(r"^ +\d+\. ", capsys.readouterr().out, re.M)) == 3  # 3 hits
        assert main(["jobs"]) == 0
        capsys.readouterr()
        for command in (["ingest", str(upload), "--corpus", "notes"],
                        ["ingest", str(upload), "--corpus", "new"],
                        ["corpora", "delete", "notes"]):
            assert main(command) == 1
            assert f"The data folder {filled_folder} is read-only, so nothing was changed" \
                in one_line_error(capsys)
        assert snapshot(filled_folder) == before  # no -wal, -shm, index or lock file either
    assert stored_documents(filled_folder) == 30


def test_a_read_only_folder_without_index_files_searches_from_memory(filled_folder, cli_app,
                                                                      capsys):
    for f in (filled_folder / "indexes").iterdir():
        f.unlink()  # no index file and no lock file: the index is rebuilt from the database
    with read_only(filled_folder):
        before = snapshot(filled_folder)
        assert main(["search", "--corpus", "notes", "ships", "-k", "2", "--mode", "semantic"]) \
            == 0
        assert capsys.readouterr().out.count("ships") == 2
        app = App()
        handle = open_corpus(app, "notes")
        app.indexes.save(handle.corpus_id, handle.model)  # a cache: quietly kept in memory
        app.db.dispose()
        assert snapshot(filled_folder) == before


def test_a_read_only_folder_reads_a_corpus_whose_model_was_never_registered(data_dir, capsys,
                                                                            tmp_path):
    """Uploaded, never embedded: the model has no row, and a read-only database cannot add
    one, so a search says what is missing instead of "read-only"."""
    assert main(["ingest", str(big_csv(tmp_path / "few.csv", rows=3)), "--corpus", "few"]) == 0
    capsys.readouterr()
    with read_only(data_dir):
        assert main(["search", "--corpus", "few", "row"]) == 1
        assert "Corpus 'few' has no embedded documents yet" in one_line_error(capsys)


@pytest.mark.parametrize("name", ["search", "jobs", "duplicates", "clusters", "models"])
def test_the_pages_read_a_read_only_folder_and_start_no_worker(filled_folder, ui_resources,
                                                              bundled_encoder, name):
    from streamlit.testing.v1 import AppTest

    from searchapp.ui.resources import get_app

    with read_only(filled_folder):
        get_app().install_encoder("all-MiniLM-L6-v2", bundled_encoder)
        at = AppTest.from_file(REPO / "searchapp" / "ui" / "pages" / f"{name}.py",
                               default_timeout=60).run()
        assert not at.exception, at.exception
        assert not [e.value for e in at.error], [e.value for e in at.error]
        if name == "search":
            at.text_input[0].input("cats")
            next(b for b in at.button if b.label == "Search").click().run()
            assert not at.exception and not at.error
            assert any(c.value.startswith("Results 1–") for c in at.caption)
        assert ui_resources == []  # no worker: it could not write anything here


def test_a_read_only_folder_without_a_database_says_so(data_dir, capsys):
    data_dir.mkdir(parents=True)
    with read_only(data_dir):
        assert main(["corpora"]) == 1
        assert "the data folder is read-only and holds no database yet" in \
            one_line_error(capsys)
    assert list(data_dir.iterdir()) == []


# ---- full disk -------------------------------------------------------------------------------
def test_a_full_disk_during_ingest_is_one_line_and_stores_nothing(tmp_path, monkeypatch, capsys):
    with small_disk(tmp_path / "disk", 2 << 20) as disk:
        data = disk / "data"
        monkeypatch.setenv("SEARCHAPP_DATA_DIR", str(data))
        App().db.dispose()  # the schema first, then the disk fills up
        fill(disk, leave=64 << 10)
        assert main(["ingest", str(big_csv(tmp_path / "big.csv")), "--corpus", "big"]) == 1
        err = one_line_error(capsys)
        assert f"The disk holding {data} is full, so nothing was stored" in err
        assert MARKER not in err and len(err) < 300
        assert stored_documents(data) == 0
        with sqlite3.connect(data / "searchapp.db") as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert main(["corpora"]) == 0  # reading still works on the full disk
        assert "No corpora yet" in capsys.readouterr().out


def test_a_full_disk_during_an_embed_job_fails_it_with_one_line(tmp_path, monkeypatch,
                                                                       bundled_encoder):
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs import queue
    from searchapp.jobs.worker import work

    with small_disk(tmp_path / "disk", 3 << 20) as disk:
        monkeypatch.setenv("SEARCHAPP_DATA_DIR", str(disk / "data"))
        app = App()
        app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
        rows = "\n".join(f"r{i},{MARKER} {i} " + "words " * 30 for i in range(150))
        job_id = upload(app, read_table(f"id,text\n{rows}\n".encode(), "t.csv"), "big").job_id
        fill(disk, leave=48 << 10)
        assert work(app, stop_when_idle=True) == 1
        job = queue.get(app.db, job_id)
        assert job.status == "failed" and MARKER not in job.error
        assert job.error.startswith(f"The disk holding {disk / 'data'} is full"), job.error
        with app.db.session() as s:
            assert repo.summaries(s)[0].documents == 150  # the upload is whole
        app.db.dispose()


FSIZE_SCRIPT = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from searchapp.cli import main
raise SystemExit(main(sys.argv[2:]))
"""


def test_a_file_size_limit_during_ingest_is_one_line_and_stores_nothing(data_dir, tmp_path):
    """Everywhere (no root needed): the database file may not grow past its current size."""
    App().db.dispose()
    size = (data_dir / "searchapp.db").stat().st_size
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", FSIZE_SCRIPT, str(size + 8192), "ingest",
         str(big_csv(tmp_path / "big.csv")), "--corpus", "big"],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Cannot read or write "), proc.stderr
    assert MARKER not in proc.stderr and "Traceback" not in proc.stderr
    assert stored_documents(data_dir) == 0


# ---- two processes at once ---------------------------------------------------------------------
def test_processes_creating_one_new_database_at_once_all_find_the_schema(tmp_path):
    for attempt in range(2):  # a new database each time: the race is in its creation
        url = Settings.from_env({"SEARCHAPP_DATA_DIR": str(tmp_path / f"d{attempt}")}
                                ).database_url
        assert race(racers.open_database, (url,)) == ["ok"] * 4
        with sqlite3.connect(tmp_path / f"d{attempt}" / "searchapp.db") as conn:
            assert conn.execute("SELECT count(*) FROM schema_info").fetchone() == (1,)


def test_processes_creating_one_new_corpus_at_once_all_succeed(tmp_path):
    for attempt in range(2):
        data = tmp_path / f"d{attempt}"
        url = Settings.from_env({"SEARCHAPP_DATA_DIR": str(data)}).database_url
        Database(url).dispose()
        assert race(racers.upload_shared, (url,)) == ["ok"] * 4
        with sqlite3.connect(data / "searchapp.db") as conn:
            assert conn.execute("SELECT count(*) FROM corpora").fetchone() == (1,)
            assert conn.execute("SELECT count(*) FROM documents").fetchone() == (2,)


# ---- paths are paths ---------------------------------------------------------------------------
ODD_NAMES = ["p?one", "p?two", "p%41", "p%3Fone", "p#x", "p q", "pé", "p&a=b"]


def test_folder_names_with_url_characters_keep_their_own_database(tmp_path, monkeypatch,
                                                                  capsys):
    csv = tmp_path / "t.csv"
    csv.write_text("id,text\na,hello\n")
    for i, name in enumerate(ODD_NAMES):
        monkeypatch.setenv("SEARCHAPP_DATA_DIR", str(tmp_path / name))
        assert main(["ingest", str(csv), "--corpus", f"c{i}"]) == 0
    capsys.readouterr()
    for name in ODD_NAMES:
        assert (tmp_path / name / "searchapp.db").is_file(), name
        monkeypatch.setenv("SEARCHAPP_DATA_DIR", str(tmp_path / name))
        assert main(["corpora", "--json"]) == 0
        assert len(capsys.readouterr().out.split('"name"')) == 2, name  # its own corpus only
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*ODD_NAMES, "t.csv"])


def test_the_default_url_round_trips_any_folder_name(tmp_path):
    from searchapp.store.db import sqlite_file

    for name in [*ODD_NAMES, "a%20b", "x?mode=ro", "é ü/ß"]:
        folder = tmp_path / name
        url = Settings.from_env({"SEARCHAPP_DATA_DIR": str(folder)}).database_url
        assert sqlite_file(url) == folder / "searchapp.db"


# ---- unit: a read-only database ---------------------------------------------------------------
def test_every_write_to_a_read_only_database_is_a_read_only_error(data_dir):
    from searchapp.errors import ReadOnlyError

    App().db.dispose()
    db = Database(Settings.from_env().database_url, read_only=True)
    with db.session() as s:
        assert repo.summaries(s) == []
    with pytest.raises(ReadOnlyError, match="is read-only, so nothing was changed"), \
            db.session() as s:
        repo.get_or_create_corpus(s, "x", "all-MiniLM-L6-v2")
    db.dispose()


def test_values_the_database_cannot_hold_are_invalid_parameters_not_crashes(db_url):
    """Below the CLI's own checks (the API and the pages call the store directly too)."""
    from searchapp.errors import InvalidParameterError
    from searchapp.jobs import queue

    db = Database(db_url)
    with pytest.raises(InvalidParameterError, match="too large for the database"):
        queue.recent(db, limit=2**70)
    with pytest.raises(InvalidParameterError, match="not valid Unicode"), db.session() as s:
        repo.get_or_create_corpus(s, "name\udcff", "all-MiniLM-L6-v2")
    with db.session() as s:
        assert repo.summaries(s) == []
    db.dispose()


# ---- the same classes on PostgreSQL (skipped where no server can be started) --------------------
def test_postgres_processes_creating_one_schema_and_one_corpus_at_once_all_succeed(
        postgres_url):
    from sqlalchemy import create_engine, text

    assert race(racers.open_database, (postgres_url,)) == ["ok"] * 4
    Database(postgres_url).dispose()
    assert race(racers.upload_shared, (postgres_url,)) == ["ok"] * 4
    engine = create_engine(postgres_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM schema_info")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM corpora")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM documents")).scalar() == 2
    engine.dispose()


def test_a_read_only_postgres_database_reads_and_refuses_writes(postgres_url):
    from sqlalchemy import create_engine, text

    from searchapp.errors import ReadOnlyError

    Database(postgres_url).dispose()  # the schema, while it may still be written
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    name = postgres_url.rsplit("/", 1)[1]
    with admin.connect() as conn:
        conn.execute(text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on'))
    admin.dispose()
    db = Database(postgres_url)
    with db.session() as s:
        assert repo.summaries(s) == []
    with pytest.raises(ReadOnlyError, match=r"The database postgresql.* is read-only"), \
            db.session() as s:
        repo.get_or_create_corpus(s, "x", "all-MiniLM-L6-v2")
    db.dispose()


# ---- unit: entering WAL while another process switches the new file ---------------------------
class _LockedCursor:
    """A cursor whose journal-mode switch meets SQLite's immediate "database is locked"
    (what a second process opening the same new file gets) ``busy`` times, then works."""

    def __init__(self, busy: int):
        self.busy, self.calls = busy, 0

    def execute(self, sql):
        self.calls += 1
        if self.calls <= self.busy:
            raise sqlite3.OperationalError("database is locked")


def test_entering_wal_retries_a_lock_held_by_another_opener(monkeypatch):
    from searchapp.store import db as db_module

    monkeypatch.setattr(db_module.time, "sleep", lambda _s: None)  # the back-off, not the logic
    cursor = _LockedCursor(busy=3)
    db_module._enter_wal(cursor, wait_seconds=30)
    assert cursor.calls == 4


def test_entering_wal_gives_up_as_busy_after_the_wait(monkeypatch):
    from searchapp.store import db as db_module

    clock = iter(range(0, 10_000, 1))  # each look at the clock: one second later
    monkeypatch.setattr(db_module.time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(db_module.time, "sleep", lambda _s: None)
    cursor = _LockedCursor(busy=10_000)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        db_module._enter_wal(cursor, wait_seconds=5)
    assert 1 < cursor.calls < 10
