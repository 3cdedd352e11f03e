"""The login door and document text shown as text, in Chromium, on one app server.

The app runs as ``make run`` runs it (``serve.py``) with SEARCHAPP_PASSWORD set. One
test logs in, uploads a corpus whose texts carry ``<img src=x onerror=...>`` and
``**bold**``, and checks the Search results and the Clusters view show them
literally: no <img> made from a document, no script run, the asterisks visible.
The other opens fresh browser contexts without the password and checks every
page lands on the login page with nothing of the corpus, that a wrong password
is refused and the right one opens the app, that a reload stays logged in
(the cookie carries the login, not the tab) and that "Log out" returns to the
login page for good. Needs /usr/bin/chromium; skips without it.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser import (
    ARTIFACTS,
    browser_page,
    chromium,
    pick_files,
    playwright_or_skip,
    served_app,
)

PASSWORD = "correct horse battery staple"
XSS = '<img src=x onerror="window.__xss=1">'
# The biggest cluster (the one the Clusters view opens first) is near-duplicates that
# all carry both payloads, so whichever is its most central document shows them.
TEXTS = [f"{XSS} How do I reset my **bold** password?",
         f"{XSS} How can I reset my **bold** password?",
         f"{XSS} How do I reset my **bold** password quickly?",
         f"{XSS} I need to reset my **bold** password.",
         f"{XSS} Please help me reset my **bold** password.",
         "The weather is sunny and warm today.",
         "It is a sunny and warm day outside.",
         "Today the weather is warm and sunny."]
SECRETS = ("tricky", "sunny", "onerror")  # the corpus: never on a page before the login
PAGES = ["", "search", "duplicates", "clusters", "models", "jobs", "guide"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One app server for the module, with the password set: (url, browser)."""
    sync_api = playwright_or_skip()
    tmp = tmp_path_factory.mktemp("browser-security")
    ARTIFACTS.mkdir(exist_ok=True)
    with served_app(tmp / "data", tmp / "streamlit.log", {"SEARCHAPP_PASSWORD": PASSWORD}) \
            as (_app, url), chromium(sync_api) as browser:
        yield url, browser


@pytest.fixture
def page(served, request):
    """A new browser context (a new session, not logged in); a screenshot if the test fails."""
    _url, browser = served
    with browser_page(browser, request) as page:
        yield page


def log_in(page, url: str, password: str = PASSWORD) -> None:
    page.goto(url)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Log in").click()


def assert_locked(page) -> None:
    """The door's login page and nothing else: no Streamlit, no page list, no corpus."""
    page.get_by_role("button", name="Log in").wait_for(timeout=30_000)
    assert urlsplit(page.url).path == "/login", page.url
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0
    headings = page.locator("h1").all_inner_texts()
    assert [h.strip() for h in headings] == ["searchapp"], headings
    content = page.content().lower()
    assert not [word for word in SECRETS if word in content]


def test_document_text_is_shown_literally(served, page, tmp_path: Path):
    url, _ = served
    log_in(page, url)
    page.get_by_role("heading", name="Upload").wait_for(timeout=30_000)
    csv_path = tmp_path / "tricky.csv"
    csv_path.write_text("text\n" + "".join(f'"{t.replace(chr(34), chr(34) * 2)}"\n'
                                           for t in TEXTS), encoding="utf-8")
    pick_files(page, str(csv_path), "Upload and embed")
    page.get_by_role("button", name="Upload and embed").click()
    page.get_by_text(f"Corpus 'tricky': {len(TEXTS)} added.").wait_for(timeout=30_000)
    page.get_by_text("Embedding 'tricky': done").wait_for(timeout=240_000)

    page.get_by_role("link", name="Search 'tricky'").click()
    page.get_by_label("Query").fill("reset my password")
    page.get_by_role("button", name="Search").click()
    first = page.locator(".st-key-hit-1")
    first.get_by_text("password").first.wait_for(timeout=60_000)  # the box, then its text
    assert XSS in first.inner_text() and "**bold**" in first.inner_text()
    assert_no_markup_from_documents(page)

    page.get_by_role("link", name="Clusters").click()
    page.get_by_role("button", name="Compute clusters").click()
    page.get_by_text("Most central documents:").wait_for(timeout=120_000)
    central = page.locator("li", has_text="password").first  # the 3 central ones, listed
    assert XSS in central.inner_text() and "**bold**" in central.inner_text()
    page.screenshot(path=str(ARTIFACTS / "browser-literal-text.png"), full_page=True)
    assert_no_markup_from_documents(page)


def assert_no_markup_from_documents(page) -> None:
    """No element made from document text, and its onerror never ran."""
    page.wait_for_timeout(500)  # an <img src=x> would have failed to load by now
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("strong", has_text="bold").count() == 0
    assert page.evaluate("window.__xss") is None


def test_pages_and_data_need_the_password(served, page):
    url, _ = served
    for path in PAGES:
        page.goto(f"{url}/{path}")
        assert_locked(page)
        assert parse_qs(urlsplit(page.url).query)["next"] == [f"/{path}"]
    log_in(page, url, "wrong password")
    page.get_by_text("Wrong password. Try again.").wait_for(timeout=30_000)
    assert_locked(page)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Upload").wait_for(timeout=30_000)
    nav = page.locator('[data-testid="stSidebarNav"]')
    assert [t.split()[-1] for t in nav.get_by_role("link").all_inner_texts()] == [  # icon, name
        "Upload", "Search", "Duplicates", "Label", "Clusters", "Models", "Evaluate", "Documents",
        "Jobs", "Settings", "Guide"]
    [cookie] = [c for c in page.context.cookies() if c["name"] == "searchapp_session"]
    assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"]) == (
        "searchapp_session", True, "Strict")
    assert "searchapp_session" not in page.evaluate("document.cookie")  # no script reads it
    page.reload()  # the cookie, not the tab, carries the login now
    page.get_by_role("heading", name="Upload").wait_for(timeout=30_000)
    page.get_by_role("link", name="Jobs").click()
    page.get_by_role("heading", name="Jobs").wait_for(timeout=30_000)
    page.get_by_role("button", name="Log out").click()
    assert_locked(page)
    page.get_by_text("You are logged out.").wait_for(timeout=30_000)
    page.context.add_cookies([cookie])  # the old cookie, put back: it opens nothing now
    page.goto(f"{url}/jobs")
    assert_locked(page)
