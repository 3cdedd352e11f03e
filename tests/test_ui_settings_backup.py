"""The Settings page follows the backup it started: its bar, then "done" and the snapshot
(AppTest on a real data folder; the job runs inline)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from searchapp.jobs.worker import run_until_done
from searchapp.ui.resources import get_app

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "settings.py"


def test_back_up_now_shows_the_jobs_progress_then_done(ui_resources):
    app = get_app()
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    next(b for b in at.button if b.label == "Back up now").click().run()
    assert not at.exception
    [bar] = at.get("progress")
    assert bar.proto.text.startswith("Backup job ")
    job_id = int(bar.proto.text.split()[2].rstrip(":"))
    assert run_until_done(app, job_id).status == "succeeded"
    at.run()
    assert any(f"Backup job {job_id}: done" in s.value for s in at.success)
    assert at.dataframe[-1].value["kind"].tolist()  # the new snapshot is listed
