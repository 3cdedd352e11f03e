"""Files the app writes are private: real files, real modes.

The CLI is run as its own process from a parent with the usual umask 022 (so
its own umask must make the difference); the database's WAL and SHM files and
the index files are checked in-process under the same umask the entry points
set, while their connection is open. The web server's and the worker's files
are checked on a running server in ``test_door_http.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from searchapp.base.private_files import PRIVATE_UMASK, restrict_umask
from searchapp.config import Settings
from searchapp.context import App
from searchapp.vectors.index import VectorIndex

REPO = Path(__file__).resolve().parents[1]


def modes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mode & 0o777 for p in folder.rglob("*")}


@pytest.fixture
def private_umask():
    """This test process under the entry points' umask, restored afterwards."""
    previous = restrict_umask()
    yield
    os.umask(previous)


def test_the_cli_creates_a_private_data_folder_and_database(tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "searchapp", "corpora"], env=env, timeout=120,
                          capture_output=True, text=True, umask=0o022)
    assert proc.returncode == 0, proc.stderr
    assert data.stat().st_mode & 0o777 == 0o700
    found = modes(data)
    assert found["searchapp.db"] == 0o600
    assert {name for name, mode in found.items() if mode not in (0o600, 0o700)} == set()


def test_the_database_wal_shm_and_index_files_are_created_private(tmp_path, private_umask):
    settings = Settings.from_env({"SEARCHAPP_DATA_DIR": str(tmp_path / "data")})
    app = App(settings)
    try:
        with app.db.session() as s:  # a write, so the WAL and its index exist
            s.execute(text("CREATE TABLE t (x INTEGER)"))
        index = VectorIndex(dim=2)
        index.add(np.array([1, 2]), np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
        index.save(settings.index_dir / "c1-m1.hnsw", {"model": "m"})
        found = modes(settings.data_dir)
    finally:
        app.db.dispose()
    assert {"searchapp.db", "searchapp.db-wal", "searchapp.db-shm", "indexes/c1-m1.hnsw",
            "indexes/c1-m1.json", "indexes/c1-m1.lock"} <= set(found), found
    assert {name: mode for name, mode in found.items()
            if mode != (0o700 if (settings.data_dir / name).is_dir() else 0o600)} == {}


def test_an_existing_readable_data_folder_is_made_private_when_opened(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    Settings.from_env({"SEARCHAPP_DATA_DIR": str(data)}).ensure_dirs()
    assert data.stat().st_mode & 0o777 == 0o700


def test_the_cli_sets_the_private_umask_first():
    from searchapp import cli

    previous = os.umask(0o022)
    try:
        with pytest.raises(SystemExit):
            cli.main(["--help"])
        assert os.umask(previous) == PRIVATE_UMASK
    finally:
        os.umask(previous)
