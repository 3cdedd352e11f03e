"""The search box as a person uses it, in headless Chromium against a real server: a
phrase, an exclusion, a filter chip taken out, a facet clicked into the query.

One server for the module (a stand-in worker: the corpus is embedded by the test before
the server starts). Needs /usr/bin/chromium.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import pandas as pd
import pytest

from tests.browser import IDLE, browser_page, served_without_worker
from tests.test_duplicates import make_corpus as embedded_corpus
from tests.test_query_language_search import ROWS

pytestmark = pytest.mark.browser
WAIT = 90_000  # ms: the first search in the app loads the bundled model
DOCS_CSV = pd.DataFrame(ROWS, columns=["id", "text", "folder", "file", "type", "author",
                                      "modified", "year"]).to_csv(index=False)
TEXT = {"lease-a": "three months", "lease-b": "one month", "lease-draft": "six weeks",
        "port": "default port", "dog": "chasing a ball", "mycontracts": "kept elsewhere"}
HITS = """() => [...document.querySelectorAll('[class*="st-key-hit-"]')]
  .filter(e => /(^| )st-key-hit-[0-9]+( |$)/.test(e.className)).map(e => e.innerText)"""


@pytest.fixture(scope="module")
def served(tmp_path_factory, bundled_encoder):
    with served_without_worker(tmp_path_factory.mktemp("search-box"), lambda app: (
            embedded_corpus(app, bundled_encoder, "docs", DOCS_CSV))) as served:
        yield served


@pytest.fixture
def page(served, request):
    _url, browser, _app = served
    with browser_page(browser, request) as page:
        page.set_default_timeout(WAIT)
        yield page


def query_of(page) -> str:
    return parse_qs(urlsplit(page.url).query).get("q", [""])[0]


def shown(page, query: str) -> set[str]:
    """Wait until the page shows the search for ``query`` (the address holds it, no script
    runs, hits drawn or "no document" said); the ids of its hits."""
    page.wait_for_function("""q => new URLSearchParams(location.search).get('q') === q""",
                           arg=query, timeout=WAIT)
    page.wait_for_function("""() => document.querySelector('[class*="st-key-hit-1"]') ||
        document.body.innerText.includes('No document matches')""", timeout=WAIT)
    page.wait_for_selector(IDLE, timeout=WAIT)
    texts = page.evaluate(HITS)
    return {doc for doc, words in TEXT.items() if any(words in t for t in texts)}


def open_search(page, url: str, query: str) -> set[str]:
    page.goto(f"{url}/search?corpus=docs&q={quote(query)}")
    return shown(page, query)


def test_a_phrase_and_an_exclusion_typed_in_the_box(served, page):
    url, _browser, _app = served
    assert open_search(page, url, "when does the lease end") >= {"lease-a", "lease-b",
                                                                 "lease-draft"}
    assert open_search(page, url, 'when does the lease end "notice period"') == \
        {"lease-a", "lease-draft", "mycontracts"}
    assert open_search(page, url, 'when does the lease end "notice period" -draft') == \
        {"lease-a", "mycontracts"}


def test_a_filter_chip_removed_and_a_facet_clicked(served, page):
    url, _browser, _app = served
    assert open_search(page, url, "lease type:pdf") == {"lease-a", "mycontracts"}
    page.get_by_role("button", name="type:pdf").click()  # the chip
    found = shown(page, "lease")
    assert {"lease-a", "lease-b", "lease-draft"} <= found
    assert page.locator(".st-key-search-chip-0").count() == 0
    # the facets beside the hits: a type clicked goes into the query
    page.get_by_role("button", name="md (").first.click()
    assert shown(page, "lease type:md") <= {"lease-draft", "port"}
    page.get_by_role("button", name="drafts").first.click()
    assert shown(page, "lease type:md folder:drafts") == {"lease-draft"}
