"""``searchapp ingest --wait`` with an idle worker on the data folder: the worker runs the jobs
(its model loaded, the cores its own) and the command waits for it; a CLI that cannot
import torch still ends with the files read, embedded and searchable."""

from __future__ import annotations

from searchapp.search.service import search
from tests.test_cli_search_socket import app, cli_without_torch, worker  # noqa: F401


def test_ingest_wait_leaves_the_jobs_to_an_idle_worker(app, worker, tmp_path):  # noqa: F811
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kettle.md").write_text("# Kettle\n\nDescale the kettle with vinegar monthly.\n")
    (notes / "bike.txt").write_text("Oil the bicycle chain after riding in the rain.\n")
    proc = cli_without_torch(tmp_path, "ingest", str(notes), "--corpus", "notes", "--wait")
    assert proc.returncode == 0, proc.stderr
    assert "Embedded and indexed 2 documents" in proc.stdout
    assert [h.id for h in search(app, "notes", "cleaning a kettle", k=1)] == ["kettle.md"]
