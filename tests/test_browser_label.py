"""Labelling by keyboard in Chromium: ten answers on the Label page, each stored as a judgement.

Needs /usr/bin/chromium and Playwright; skips without them. The corpus is
built in this process first (the session's loaded encoder), then the app is
started on the same data folder and stopped by pid at the end.
"""

from __future__ import annotations

import pytest

from searchapp.context import App
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service
from tests.browser import ARTIFACTS, browser_page, chromium, playwright_or_skip, served_app
from tests.label_driver import label_by_keyboard
from tests.test_proposals import FAQ

KEYS = "ynsyunyyny"  # y/n answer, s skips, u undoes the answer before it
STORED = 7  # answers: 5 yes and 3 no, minus the yes undone


@pytest.mark.browser
def test_ten_items_labelled_by_keyboard_are_stored_as_judgements(tmp_path, data_dir, request,
                                                                  bundled_encoder):
    sync_api = playwright_or_skip()
    app = App()
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    summary = upload(app, read_table(FAQ.encode(), "faq.csv"), "faq")
    assert run_until_done(app, summary.job_id).status == "succeeded"
    with served_app(data_dir, tmp_path / "streamlit.log") as (_, url), \
            chromium(sync_api) as browser, browser_page(browser, request) as page:
        page.goto(f"{url}/label")
        page.get_by_role("heading", name="Label").wait_for(timeout=60_000)
        seconds = label_by_keyboard(page, KEYS, ".st-key-label-current")
        page.get_by_text("This session: 4 yes · 3 no · 1 skipped").wait_for(timeout=30_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "browser-label.png"), full_page=True)
    judged = service.list_judgements(app, "faq")
    assert len(judged) == STORED and {j.source for j in judged} == {"label"}
    assert [j.label for j in judged].count(1) == 4
    assert len(seconds) == len(KEYS)
    app.db.dispose()
