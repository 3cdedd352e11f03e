"""A web page's hit opens at its section, in headless Chromium on a real server on 127.0.0.1:
an HTML file of several long sections is ingested, a sentence of a later section is
searched on the Search page, and the hit's "Open at <heading>" opens a new tab, the app's
reader view, scrolled to that section (its heading in the viewport, the first screen's
heading out of it) with the passage in a <mark>; no script of the page ran there.
Needs /usr/bin/chromium."""

from __future__ import annotations

from urllib.parse import quote_plus

import pytest

from searchapp.intake.files_job import request_ingest
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from tests.browser import ARTIFACTS, browser_page, served_without_worker

pytestmark = pytest.mark.browser
WAIT = 120_000  # ms
FILLER = ("<p>The trail climbs through pine forest and crosses three wooden bridges before "
          "it reaches the high meadow, where the path is marked by painted stones.</p>")
SENTENCE = "Scrub the cooking pots with sand far away from the mountain stream."
PAGE = ("<html><head><title>Field guide</title><script>window.__pwned = 1</script></head><body>"
        "<h1>Field guide</h1><p>Welcome to the guide for the summer camp.</p>"
        "<h2>Walking in</h2>" + FILLER * 14 +
        "<h2>Setting up camp</h2>" + FILLER.replace("trail", "tent") * 14 +
        f"<h2>Washing up</h2><p>{SENTENCE}</p><p>Dry them in the sun before packing.</p>"
        "<h2>Leaving</h2><p>Carry out every piece of litter.</p></body></html>")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser-reader")
    (tmp / "site").mkdir()
    (tmp / "site" / "guide.html").write_text(PAGE, encoding="utf-8")
    (tmp / "site" / "kitchen.md").write_text(
        "# Kitchen\n\nThe kitchen tent holds two stoves and the water filter.\n",
        encoding="utf-8")

    def prepare(app):
        request_ingest(app, "camp", [tmp / "site"])
        while (job := queue.claim(app.db, "test-worker")) is not None:
            run_job(app, job)

    with served_without_worker(tmp, prepare) as (url, browser, _app):
        yield url, browser


def test_an_html_hit_opens_in_a_new_tab_at_its_section_with_the_passage_marked(served, request):
    url, browser = served
    with browser_page(browser, request) as page:
        page.goto(f"{url}/search?corpus=camp&q={quote_plus('how do I clean the pots')}")
        hit = page.locator(".st-key-hit-1")
        hit.wait_for(timeout=WAIT)
        assert "guide.html · Field guide > Washing up" in hit.inner_text()
        link = hit.get_by_role("link", name="Open at Washing up")
        assert link.get_attribute("target") == "_blank"
        with page.context.expect_page(timeout=WAIT) as opened:
            link.click()
        tab = opened.value
        tab.wait_for_load_state("load", timeout=WAIT)
        assert "/view/camp/guide.html?mark=" in tab.url and "#s-" in tab.url
        heading = tab.get_by_role("heading", name="Washing up")
        assert in_viewport(tab, heading), "the tab is scrolled to the hit's section"
        assert not in_viewport(tab, tab.locator("header h1")), \
            "not left at the top of the page"
        marked = tab.locator("mark")
        assert SENTENCE in " ".join(marked.all_inner_texts())
        assert marked.first.evaluate("m => m.closest('section').id") == tab.url.split("#")[1]
        assert tab.evaluate("window.__pwned") is None
        tab.screenshot(path=str(ARTIFACTS / "browser-reader-section.png"))


def in_viewport(tab, locator) -> bool:
    """Whether any of the element is inside the window's visible area."""
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); "
                            "return r.bottom > 0 && r.top < window.innerHeight; }")
