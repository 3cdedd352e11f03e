"""Fast key presses in Chromium: a decision lands only on a pair the reviewer was shown.

The Duplicates review is answered with D faster than the next pair can be drawn
(keys 30 ms apart). The page records every pair it draws (a MutationObserver on
the two text cards); every stored decision must be on one of them. Needs
/usr/bin/chromium and Playwright; skips without them. The server is stopped by pid.
"""

from __future__ import annotations

import re
import time

import pytest

from searchapp.context import App
from searchapp.duplicates import review
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service
from tests.browser import IDLE, browser_page, chromium, playwright_or_skip, served_app
from tests.label_driver import SETTLED
from tests.test_duplicates import FAQ, make_corpus

WAIT = 60_000
PRESSES = 8
# Every pair drawn, as "a|b" from the cards' "id ..." captions, recorded at each change.
RECORD = """() => {
    window.drawnPairs = new Set();
    const read = () => {
        const ids = ['.st-key-review-a', '.st-key-review-b'].map(s => {
            const el = document.querySelector(s + ' [data-testid="stCaptionContainer"]');
            return el ? el.innerText.replace(/^id /, '') : null;
        });
        if (ids[0] && ids[1]) window.drawnPairs.add(ids.join('|'));
    };
    read();
    new MutationObserver(read).observe(document.body,
        {subtree: true, childList: true, characterData: true});
}"""


def settled_on_count(page, app) -> None:
    """Wait until no script runs, nothing is stale, and the page's count of decisions is
    the number stored (every press answered, none still on its way)."""
    deadline = time.monotonic() + WAIT / 1000
    while True:
        page.wait_for_selector(IDLE, timeout=WAIT)
        page.wait_for_function(SETTLED, timeout=WAIT, polling="raf")
        said = re.search(r"This session: (\d+) duplicate", page.inner_text("body"))
        if said and int(said.group(1)) == len(service.list_judgements(app, "faq")):
            return
        assert time.monotonic() < deadline, "the page and the store never agreed"
        page.wait_for_timeout(100)  # poll interval of this deadline loop


@pytest.mark.browser
def test_fast_key_presses_never_decide_a_pair_not_drawn(tmp_path, data_dir, request,
                                                        bundled_encoder):
    sync_api = playwright_or_skip()
    app = App()
    make_corpus(app, bundled_encoder, "faq", FAQ)
    run_until_done(app, review.request_review_mining(app, "faq", 0.8, 10))  # the page's default
    assert len(review.review_queue(app, "faq", 0.8, 10, n=50).items) > PRESSES
    with served_app(data_dir, tmp_path / "streamlit.log") as (_, url), \
            chromium(sync_api) as browser, browser_page(browser, request) as page:
        page.goto(f"{url}/duplicates?corpus=faq")
        page.get_by_role("tab", name="Review").click()
        page.locator(".st-key-review-current").wait_for(timeout=WAIT)
        page.get_by_role("button", name="Undo").wait_for(timeout=WAIT)
        page.wait_for_function(SETTLED, timeout=WAIT, polling="raf")
        page.evaluate(RECORD)
        page.locator("h1").first.click()  # the focus on the page, not in a field
        for _ in range(PRESSES):
            page.keyboard.press("d")
            page.wait_for_timeout(30)  # a person's fast double press, not a synchronisation
        settled_on_count(page, app)
        drawn = set(page.evaluate("() => [...window.drawnPairs]"))
    decided = {f"{j.a}|{j.b}" for j in service.list_judgements(app, "faq")}
    both_ways = drawn | {"|".join(reversed(p.split("|"))) for p in drawn}
    assert decided, "no press was stored"
    assert decided <= both_ways, f"decided on pairs never drawn: {decided - both_ways}"
    app.db.dispose()
