"""Every page's sidebar shows the jobs: a running ingest with its bar, rate and time left,
then what it left unread; after a reload too (it reads the job rows, not the session).

The server runs without a worker of its own; the test moves a real ingest job through the
queue as a worker would (claim, progress reports with the rate the task context writes,
finish with its report), so each state is on screen for as long as the test needs it.
"""

from __future__ import annotations

import re

import pytest

from searchapp.jobs import queue
from searchapp.jobs.horizon import SEPARATOR
from tests.browser import IDLE, browser_page, served_without_worker

WAIT = 90_000
INDICATOR = ".st-key-jobs-indicator"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_without_worker(tmp_path_factory.mktemp("jobs-indicator"),
                               lambda app: None) as served:
        yield served


def sidebar_text(page) -> str:
    return page.locator(INDICATOR).inner_text()


def wait_for_sidebar(page, pattern: str) -> str:
    """The indicator's text once it matches ``pattern`` (it refreshes every 2 s)."""
    page.wait_for_function(
        "([sel, pat]) => { const e = document.querySelector(sel);"
        " return e && new RegExp(pat).test(e.innerText); }", arg=[INDICATOR, pattern],
        timeout=WAIT)
    return sidebar_text(page)


def test_the_sidebar_follows_an_ingest_on_every_page_and_after_a_reload(served, request):
    url, browser, app = served
    job_id = queue.enqueue(app.db, "ingest", {"corpus": "manuals", "paths": ["/x"],
                                              "model": "all-MiniLM-L6-v2"})
    with browser_page(browser, request) as page:
        page.goto(f"{url}/search")
        page.wait_for_selector(IDLE, timeout=WAIT)
        assert "Reading 'manuals'" in wait_for_sidebar(page, "Queued")

        job = queue.claim(app.db, "test-worker", kinds=("ingest",))
        assert job.id == job_id
        queue.progress(app.db, job.lease, 12, 40,
                       f"Reading guide.pdf{SEPARATOR}2.1 files/s{SEPARATOR}about 13 s left")
        text = wait_for_sidebar(page, "12 of 40")
        assert re.search(r"Reading 'manuals': Running · 12 of 40 \(30%\)", text)
        assert "2.1 files/s" in text and "about 13 s left" in text

        page.goto(f"{url}/clusters")  # another page, a reload: the same bar
        assert "12 of 40" in wait_for_sidebar(page, "12 of 40")

        queue.finish(app.db, job.lease, "succeeded",
                     result={"corpus": "manuals", "added": 37, "failed": 3})
        text = wait_for_sidebar(page, "not read")
        assert f"Job {job_id} (Reading 'manuals'): 3 files not read" in text
        assert "No job running." in text
