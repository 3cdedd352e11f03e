"""Documents in the browser, on a real server (``serve.py`` on 127.0.0.1, its own worker):
a zip and a PDF uploaded together, searched, a hit opened at its page; and an uploaded
HTML file whose script must never run in the app's origin. Needs /usr/bin/chromium."""

from __future__ import annotations

import zipfile
from pathlib import Path

import httpx
import pytest

from tests.browser import (
    ARTIFACTS,
    browser_page,
    chromium,
    pick_files,
    playwright_or_skip,
    served_app,
)
from tests.document_files import make_pdf

pytestmark = pytest.mark.browser
HOSTILE_HTML = ("<html><head><title>Release notes</title></head><body><main><h1>Release notes"
                "</h1><p>The release adds a dark theme to the settings window.</p>"
                "<script>window.top.__pwned = 1; fetch('/api/v1/corpora', {method: 'POST', "
                "body: '{}'})</script></main></body></html>")
PAGES = ["Welcome to the handbook. This page lists the chapters.",
         "Expenses. Keep every receipt; travel costs are refunded within a month.",
         "Holidays. Each employee has twenty-five days of paid leave a year."]


def upload_files(tmp: Path) -> list[Path]:
    make_pdf(tmp / "handbook.pdf", PAGES, title="Staff handbook")
    with zipfile.ZipFile(tmp / "wiki.zip", "w") as z:
        z.writestr("wiki/notes.md", "# Parking\nBicycles go in the courtyard.\n")
        z.writestr("wiki/release.html", HOSTILE_HTML)
    return [tmp / "handbook.pdf", tmp / "wiki.zip"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    sync_api = playwright_or_skip()
    tmp = tmp_path_factory.mktemp("browser-documents")
    ARTIFACTS.mkdir(exist_ok=True)
    with served_app(tmp / "data", tmp / "streamlit.log") as (_app, url), \
            chromium(sync_api) as browser:
        yield url, browser, tmp


def test_a_zip_and_a_pdf_are_uploaded_searched_and_a_hit_opens_at_its_page(served, request):
    url, browser, tmp = served
    with browser_page(browser, request) as page:
        try:
            upload_search_and_open(page, url, tmp)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "browser-documents-failure.png"), full_page=True)
            raise


def upload_search_and_open(page, url: str, tmp: Path) -> None:
    """Upload, wait for both jobs, search, and open the first hit's original at its page."""
    page.goto(url)
    page.get_by_role("heading", name="Upload").wait_for(timeout=30_000)
    pick_files(page, [str(p) for p in upload_files(tmp)], "Add and embed")
    page.get_by_label("New corpus name").fill("handbook")
    page.get_by_role("button", name="Add and embed").click()
    page.get_by_text("3 files added, 0 changed").wait_for(timeout=120_000)
    page.get_by_text("Embedding 'handbook': done").wait_for(timeout=240_000)
    page.get_by_role("link", name="Search 'handbook'").click()
    page.get_by_label("Query").fill("how many days of paid leave")
    page.get_by_role("button", name="Search").click()
    first = page.locator(".st-key-hit-1")
    first.wait_for(timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "browser-documents-search.png"), full_page=True)
    assert "handbook.pdf · page 3" in first.inner_text()
    link = first.get_by_role("link", name="Open at page 3")
    href = link.get_attribute("href")
    assert href.endswith("/originals/handbook/handbook.pdf#page=3")
    opened = page.request.get(url + href.split("#")[0] if href.startswith("/") else href)
    assert opened.status == 200 and opened.headers["content-type"] == "application/pdf"
    assert opened.body() == (tmp / "handbook.pdf").read_bytes()


def test_an_uploaded_html_original_cannot_run_script_in_the_app_origin(served, request):
    url, browser, _ = served
    original = f"{url}/originals/handbook/wiki/release.html"
    answer = httpx.get(original)
    if answer.status_code == 404:
        pytest.skip("runs after the upload test of this module")
    assert answer.headers["content-disposition"].startswith("attachment")
    assert "sandbox" in answer.headers["content-security-policy"]
    assert answer.headers["x-content-type-options"] == "nosniff"
    with browser_page(browser, request) as page:
        page.goto(url + "/healthz")
        # handed to the user as a file, never rendered here
        with page.expect_download() as download, \
                pytest.raises(Exception, match=r"Download is starting|ERR_ABORTED"):
            page.goto(original)
        assert download.value.suggested_filename == "release.html"
        assert page.evaluate("window.__pwned") is None
        page.goto(f"{url}/originals/handbook/wiki/notes.md")  # text: shown as text
        assert page.evaluate("document.contentType") == "text/plain"
