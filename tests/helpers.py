"""Helpers for tests that drive the CLI and the worker as separate processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from searchapp.jobs.tasks import TaskContext


def run_cli(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m searchapp ARGS`` with the test's environment (its data folder)."""
    proc = subprocess.run([sys.executable, "-m", "searchapp", *args], capture_output=True,
                          text=True, timeout=timeout, env=os.environ.copy())
    if check and proc.returncode != 0:
        raise AssertionError(f"searchapp {' '.join(args)} failed:\n{proc.stderr}")
    return proc


def cli_json(*args: str) -> dict:
    return json.loads(run_cli(*args, "--json").stdout)


def vectors_by_external_id(app, name: str) -> dict[str, np.ndarray]:
    """{external id: stored vector} of a corpus, for its own model."""
    from searchapp.store import repo

    with app.db.session() as s:
        c = repo.corpus_state(s, name)
        model = repo.find_model(s, c.model_name)
        out = {}
        for ids, matrix in repo.embeddings_since(s, c.id, model.id, 0, model.dimension):
            names = repo.document_texts(s, c.id, ids.tolist())
            out.update({names[int(i)][0]: v for i, v in zip(ids, matrix, strict=True)})
        return out


def ingest_files(folder, files: dict[str, str], corpus: str) -> str:
    """Write ``files`` (name -> text) into ``folder`` and ingest it with the CLI's ``main``
    (in this process: the session's loaded model); returns the corpus name."""
    from searchapp.cli.main import main

    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    assert main(["ingest", str(folder), "--corpus", corpus, "--wait"]) == 0
    return corpus


class Killed(Exception):
    """Stands in for the worker process dying."""


class KillAfter(TaskContext):
    """A task context whose process 'dies' when step ``n`` is reported."""

    def __init__(self, app, lease, n):
        super().__init__(app, lease)
        self.n = n

    def progress(self, done, total, message=None, force=False):
        if done == self.n and total > 1:
            raise Killed()
