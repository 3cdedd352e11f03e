"""The search box as a person uses it, in headless Chromium against a real server: a
phrase, an exclusion, a filter chip taken out, a facet clicked into the query.

One server for the module (a stand-in worker: the corpus is embedded by the test before
the server starts). Needs /usr/bin/chromium.
"""

from __future__ import annotations

from contextlib import suppress
from urllib.parse import parse_qs, quote, urlsplit

import pandas as pd
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.browser import IDLE, browser_page, served_without_worker
from tests.test_duplicates import make_corpus as embedded_corpus
from tests.test_query_language_search import ROWS

pytestmark = pytest.mark.browser
WAIT = 90_000  # ms: the first search in the app loads the bundled model
DOCS_CSV = pd.DataFrame(ROWS, columns=["id", "text", "folder", "file", "type", "author",
                                      "modified", "year"]).to_csv(index=False)
TEXT = {"lease-a": "three months", "lease-b": "one month", "lease-draft": "six weeks",
        "port": "default port", "dog": "chasing a ball", "mycontracts": "kept elsewhere"}


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


FOUND = """text => [...document.querySelectorAll('[class*="st-key-hit-"]')]
  .filter(e => /(^| )st-key-hit-[0-9]+( |$)/.test(e.className)).map(e => e.innerText)
  .flatMap(t => Object.entries(text).filter(([, words]) => t.includes(words)).map(([d]) => d))"""
SETTLED = f"""([text, want, how, idle]) => {{
  if (!document.querySelector(idle)) return false;
  const found = new Set(({FOUND})(text)), drawn = document.querySelector('[class*="st-key-hit-1"]')
    || document.body.innerText.includes('No document matches');
  const has = d => found.has(d);
  return drawn && (how === 'at least' ? want.every(has) :
    how === 'at most' ? [...found].every(d => want.includes(d)) :
    want.every(has) && found.size === want.length);
}}"""


def shown(page, query: str, want: set[str], how: str = "exactly") -> set[str]:
    """The ids of the hits the page shows for ``query`` once they are ``how`` ("exactly",
    "at least" or "at most") ``want``: a condition waited for up to WAIT, since a rerun can
    draw a hit or two of the last search before its own (the address already holds the new
    query). On a timeout, the ids shown then, for the caller's assertion to print."""
    page.wait_for_function("""q => new URLSearchParams(location.search).get('q') === q""",
                           arg=query, timeout=WAIT)
    with suppress(PlaywrightTimeout):  # the caller's assertion says what was shown instead
        page.wait_for_function(SETTLED, arg=[TEXT, sorted(want), how, IDLE], timeout=WAIT)
    return set(page.evaluate(FOUND, TEXT))


def open_search(page, url: str, query: str, want: set[str], how: str = "exactly") -> set[str]:
    page.goto(f"{url}/search?corpus=docs&q={quote(query)}")
    return shown(page, query, want, how)


def test_a_phrase_and_an_exclusion_typed_in_the_box(served, page):
    url, _browser, _app = served
    want = {"lease-a", "lease-b", "lease-draft"}
    assert open_search(page, url, "when does the lease end", want, "at least") >= want
    want = {"lease-a", "lease-draft", "mycontracts"}
    assert open_search(page, url, 'when does the lease end "notice period"', want) == want
    want = {"lease-a", "mycontracts"}
    assert open_search(page, url, 'when does the lease end "notice period" -draft',
                       want) == want


def test_a_filter_chip_removed_and_a_facet_clicked(served, page):
    url, _browser, _app = served
    want = {"lease-a", "mycontracts"}
    assert open_search(page, url, "lease type:pdf", want) == want
    page.get_by_role("button", name="type:pdf").click()  # the chip
    want = {"lease-a", "lease-b", "lease-draft"}
    assert shown(page, "lease", want, "at least") >= want
    # The page drawn for the query the chip left: no chip. Read after a reload, since on a
    # loaded machine Streamlit's front end can keep the last run's chip on the live page when
    # the sidebar's jobs fragment starts a run as this one ends (an open race, docs/browser.md
    # "Known issue").
    page.reload()
    assert shown(page, "lease", want, "at least") >= want
    expect(page.locator(".st-key-search-chip-0")).to_have_count(0, timeout=WAIT)
    # the facets beside the hits: a type clicked goes into the query
    page.get_by_role("button", name="md (").first.click()
    want = {"lease-draft", "port"}
    assert shown(page, "lease type:md", want, "at most") <= want
    page.get_by_role("button", name="drafts").first.click()
    assert shown(page, "lease type:md folder:drafts", {"lease-draft"}) == {"lease-draft"}


def test_a_misspelt_word_is_corrected_and_the_typed_words_can_be_searched(served, page):
    url, _browser, _app = served
    found = open_search(page, url, "lease notise period", {"lease-a", "lease-draft"},
                        "at least")
    line = page.locator(".st-key-did-you-mean")
    line.wait_for(timeout=WAIT)
    assert "Showing results for lease notice period" in " ".join(line.inner_text().split())
    assert {"lease-a", "lease-draft"} <= found  # the corrected query's hits
    page.get_by_role("button", name="notise").click()  # search instead as typed
    page.wait_for_function("""() => !document.querySelector('.st-key-did-you-mean')""",
                           timeout=WAIT)


def test_a_search_saved_then_its_new_hit_shown_first(served, page):
    from searchapp.corpora.documents import Doc, upsert
    from searchapp.jobs.worker import work
    from searchapp.saved import service as saved

    url, _browser, app = served
    open_search(page, url, "garden hedge trimming", set(), "at least")
    page.get_by_role("button", name="Save this search").click()
    form = page.locator('[data-testid="stPopoverBody"]')
    form.get_by_label("Name").fill("hedges")
    form.get_by_role("button", name="Save").click()
    page.get_by_role("link", name="hedges").wait_for(timeout=WAIT)  # listed in the sidebar
    assert [v.name for v in saved.list_saved(app, "docs")] == ["hedges"]

    # a document arrives (as the API's upsert brings one); the worker embeds it and checks
    upsert(app, "docs", [Doc("hedge", "Trim the garden hedge in late spring, after nesting.",
                             {"folder": "garden", "type": "md"})])
    work(app, stop_when_idle=True)
    assert saved.list_saved(app, "docs")[0].new == 1
    page.reload()
    page.get_by_role("link", name="hedges · 1 new").click()
    news = page.get_by_text("1 new for saved search hedges")
    news.wait_for(timeout=WAIT)
    assert "Trim the garden hedge" in page.locator('[data-testid="stMain"]').inner_text()
    page.wait_for_selector(IDLE, timeout=WAIT)
    assert saved.list_saved(app, "docs")[0].new == 0  # opening it was the look
