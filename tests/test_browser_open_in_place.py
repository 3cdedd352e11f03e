"""A hit from a watched folder opens in place, in headless Chromium on a real server on
127.0.0.1: "Open the file" hands the file on disk (not a copy) to the desktop's program
(``SEARCHAPP_OPENER``: here a script that writes down what it was given), and once the
file on disk no longer holds the stored bytes the button is gone (the hit keeps the
server's copy). Needs /usr/bin/chromium."""

from __future__ import annotations

import sys

import pytest

from searchapp.intake.files_job import request_ingest
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from searchapp.watching.folders import add_watch
from tests.browser import browser_page, served_without_worker
from tests.test_watched_folders import wait_for

pytestmark = pytest.mark.browser
WAIT = 90_000  # ms
NOTE = "# Boiler\nThe boiler is serviced every October by the plumber from the village.\n"


def run_jobs(app) -> None:
    """Run the queued jobs (the ingest, then the embed it queues) as a worker would."""
    while (job := queue.claim(app.db, "test-worker")) is not None:
        run_job(app, job)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser-open-in-place")
    notes = tmp / "Notes"
    notes.mkdir()
    (notes / "boiler.md").write_text(NOTE, encoding="utf-8")
    opened = tmp / "opened.txt"
    opener = tmp / "opener.py"
    opener.write_text("import sys\nopen(sys.argv[1], 'w').write(sys.argv[2])\n")

    def prepare(app):
        add_watch(app, notes, "notes")
        request_ingest(app, "notes", [notes], sync=True)
        run_jobs(app)

    env = {"SEARCHAPP_OPENER": f"{sys.executable} {opener} {opened}"}
    with served_without_worker(tmp, prepare, env) as (url, browser, _app):
        yield url, browser, notes, opened


def test_open_the_file_hands_the_file_on_disk_to_the_desktop(served, request):
    url, browser, notes, opened = served
    with browser_page(browser, request) as page:
        page.goto(f"{url}/search?corpus=notes&q=when+is+the+boiler+serviced")
        hit = page.locator(".st-key-hit-1")
        hit.wait_for(timeout=WAIT)
        hit.get_by_role("button", name="Open the file").click()
        assert wait_for(lambda: opened.exists() and opened.read_text(), "the opener") == \
            str(notes / "boiler.md")

        (notes / "boiler.md").write_text(NOTE + "\nChanged since it was read.\n")
        page.goto(f"{url}/search?corpus=notes&q=when+is+the+boiler+serviced")
        hit.wait_for(timeout=WAIT)
        hit.get_by_role("link", name="Download original").wait_for(timeout=WAIT)
        assert hit.get_by_role("button", name="Open the file").count() == 0, \
            "a file that changed on disk is not the one found: only the server's copy"
