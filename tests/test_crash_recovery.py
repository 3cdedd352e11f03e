"""kill -9 the worker mid-job; started again it ends with one embedding per document."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
from sqlalchemy import text

from searchapp.search.service import open_corpus
from searchapp.store import repo
from tests.helpers import run_cli


def embedded_count(app) -> int:
    with app.db.session() as s:
        return s.execute(text("select count(*) from embeddings")).scalar()


def test_worker_killed_mid_job_resumes_without_duplicates(stsb, tmp_path, app):
    sentences = list(dict.fromkeys(stsb[stsb.split == "dev"].sentence1))[:1200]
    csv = tmp_path / "dev.csv"
    pd.DataFrame({"text": sentences}).to_csv(csv, index=False)
    run_cli("ingest", str(csv), "--corpus", "dev")  # queued, not run

    worker = subprocess.Popen([sys.executable, "-m", "searchapp", "worker"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=os.environ.copy())
    try:
        deadline = time.monotonic() + 120
        while embedded_count(app) == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(worker.pid, signal.SIGKILL)
    finally:
        worker.wait()
    partial = embedded_count(app)
    assert 0 < partial < len(sentences), "the kill should land mid-job"

    assert "Ran 1 jobs" in run_cli("worker", "--once").stdout
    with app.db.session() as s:
        rows = s.execute(text("select document_id, count(*) from embeddings "
                              "group by document_id having count(*) > 1")).all()
        corpus = repo.get_corpus(s, "dev")
        assert rows == [] and repo.count_documents(s, corpus.id) == len(sentences)
    assert embedded_count(app) == len(sentences)
    assert open_corpus(app, "dev").index.count == len(sentences)
