"""Suggestions under the Search page's box in headless Chromium: typed, chosen by keyboard,
searched; the search then offered first as a recent one. Needs /usr/bin/chromium."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser import browser_page, served_without_worker
from tests.test_duplicates import make_corpus

pytestmark = pytest.mark.browser
WAIT = 90_000  # ms: the first search in the app loads the bundled model
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
NOTES = """id,title,text
n1,Changing the default port,The server listens on port 8080 unless told otherwise.
n2,Changing the admin password,Open the settings and type the new password twice.
n3,Backups every night,A backup runs at two in the morning.
n4,Channel list,The channels the bot posts to.
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory, bundled_encoder):
    with served_without_worker(tmp_path_factory.mktemp("browser-suggest"),
                               lambda app: make_corpus(app, bundled_encoder, "notes", NOTES)
                               ) as served:
        yield served


def options(page) -> list[str]:
    return page.locator('#searchapp-suggestions [role="option"]').all_inner_texts()


def test_a_suggestion_chosen_by_keyboard_is_searched_and_then_offered_first(served, request):
    url, browser, _app = served
    with browser_page(browser, request) as page:
        page.goto(f"{url}/search?corpus=notes")
        box = page.get_by_label("Query")
        box.wait_for(timeout=WAIT)
        page.locator(IDLE).wait_for(timeout=WAIT)
        page.wait_for_function("() => window.__searchappSuggest", timeout=WAIT)  # attached
        box.press_sequentially("chang")
        listbox = page.get_by_role("listbox", name="Suggestions")
        listbox.wait_for(state="visible", timeout=WAIT)
        assert any(o.startswith("Changing the default port") for o in options(page))
        box.press("ArrowDown")
        chosen = page.locator('[role="option"][aria-selected="true"]')
        assert chosen.count() == 1
        text = chosen.locator("span").first.inner_text()
        assert text.lower().startswith("chang")
        box.press("Enter")
        deadline = time.monotonic() + WAIT / 1000
        while time.monotonic() < deadline:
            q = parse_qs(urlsplit(page.url).query).get("q")
            if q == [text] and page.locator(IDLE).count() and \
                    page.locator(".st-key-hit-1").count():
                break
            page.wait_for_timeout(100)
        else:
            raise AssertionError(f"the search for {text!r} did not run; address {page.url}")
        assert box.input_value() == text
        assert not listbox.is_visible()
        # the search is kept: offered first as a recent search, listed under the box
        box.fill("")
        box.press_sequentially("cha")
        page.wait_for_function("""t => [...document.querySelectorAll(
            '#searchapp-suggestions [role="option"]')].some(o => o.textContent === t + 'recent')""",
                               arg=text, timeout=WAIT)
        assert options(page)[0] == f"{text}\nrecent" or options(page)[0].startswith(text)
        box.press("Escape")
        assert not listbox.is_visible()
        page.get_by_text("Recent searches").first.click()
        expander = page.locator('[data-testid="stExpander"]').filter(has_text="Recent searches")
        expander.get_by_text(text, exact=True).wait_for(timeout=WAIT)
