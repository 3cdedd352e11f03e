"""Failures listed on the Jobs page from another tab, on a real server (``serve.py`` on
127.0.0.1, its own worker) in Chromium: a damaged PDF, a program and a good note uploaded
together in one page; a second page (tab) of the same browser opens the Jobs page and
finds each file left out named with its whole reason, wrapped inside the page. Needs
/usr/bin/chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import (
    ARTIFACTS,
    browser_page,
    chromium,
    pick_files,
    playwright_or_skip,
    served_app,
)

pytestmark = pytest.mark.browser
BROKEN_PDF = b"%PDF-1.4 this is not really a pdf"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    sync_api = playwright_or_skip()
    tmp = tmp_path_factory.mktemp("browser-job-reports")
    ARTIFACTS.mkdir(exist_ok=True)
    with served_app(tmp / "data", tmp / "streamlit.log") as (_app, url), \
            chromium(sync_api) as browser:
        yield url, browser, tmp


def chosen_files(tmp: Path) -> list[str]:
    (tmp / "notes.md").write_text("# Opening hours\nThe office opens at nine.\n", "utf-8")
    (tmp / "broken.pdf").write_bytes(BROKEN_PDF)
    (tmp / "setup.exe").write_bytes(b"MZ\x90\x00 a program")
    return [str(tmp / n) for n in ("notes.md", "broken.pdf", "setup.exe")]


def test_failures_are_listed_on_the_jobs_page_from_another_tab(served, request):
    url, browser, tmp = served
    with browser_page(browser, request) as page:
        page.goto(url)
        page.get_by_role("heading", name="Upload").wait_for(timeout=60_000)
        pick_files(page, chosen_files(tmp), "Add and embed")
        page.get_by_label("New corpus name").fill("office")
        page.get_by_role("button", name="Add and embed").click()
        page.get_by_text("1 files added, 0 changed").wait_for(timeout=180_000)

        jobs = page.context.new_page()  # another tab of the same browser
        jobs.goto(url + "/jobs")
        jobs.get_by_role("heading", name="Jobs").wait_for(timeout=60_000)
        main = jobs.get_by_test_id("stMain")  # the sidebar names the job's unread files too
        main.get_by_text("2 files not read").wait_for(timeout=60_000)
        table = main.locator('[data-testid="stTable"]').first
        for name in ("broken.pdf", "setup.exe"):  # the table's rows come after its heading
            table.locator("tbody tr").filter(has_text=name).first.wait_for(timeout=60_000)
        rows = {r.locator("td").first.inner_text(): r.locator("td").nth(2)
                for r in table.locator("tbody tr").all()}
        jobs.screenshot(path=str(ARTIFACTS / "browser-job-reports-jobs.png"), full_page=True)
        assert set(rows) == {"broken.pdf", "setup.exe"}
        program = rows["setup.exe"]
        assert program.inner_text().startswith("is not a type we read (.exe); save it as PDF")
        assert program.inner_text().endswith("or an archive of them, and add it again")
        box, view = program.bounding_box(), jobs.viewport_size
        assert box["x"] + box["width"] <= view["width"], "the reason runs past the page"
        assert box["height"] > 30, "a long reason wraps onto more lines"
        assert rows["broken.pdf"].inner_text()  # the damaged PDF's reason, whole
