"""Labelling by keyboard in a real browser: press a key, wait until the next item is on screen.

Shared by the browser test (``tests/test_browser_label.py``) and the speed
benchmark (``benchmarks/label_speed.py``): a scripted person who answers the
moment the next item is painted, so the time per answer is the app's own
(the key's round trip: callback, judgement stored, fragment rerun, repaint).

Example:
    >>> seconds = label_by_keyboard(page, "ynsyu", ".st-key-label-current")  # doctest: +SKIP
"""

from __future__ import annotations

import time

CHANGED = """([selector, before]) => {
    const el = document.querySelector(selector);
    return el !== null && el.innerText !== before;
}"""
# Streamlit marks what a rerun has not redrawn yet as stale; none left: the rerun is painted.
SETTLED = """() => document.querySelector('[data-stale="true"]') === null"""


def current_text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


def label_by_keyboard(page, keys: str, selector: str, timeout_ms: float = 60_000
                      ) -> list[float]:
    """Press each key in turn; after each, wait until ``selector``'s text changes.

    Returns the seconds from each key press to the next item on screen (the
    item painted and nothing stale left; the next key is pressed only then, as a
    person would after reading it).
    """
    page.locator(selector).wait_for(timeout=timeout_ms)
    page.get_by_role("button", name="Undo").wait_for(timeout=timeout_ms)  # keys listen now
    page.wait_for_function(SETTLED, timeout=timeout_ms, polling="raf")
    page.locator("h1").first.click()  # the focus on the page, not in a text field
    took = []
    for key in keys:
        before = current_text(page, selector)
        started = time.perf_counter()
        page.keyboard.press(key)
        page.wait_for_function(CHANGED, arg=[selector, before], timeout=timeout_ms,
                               polling="raf")
        page.wait_for_function(SETTLED, timeout=timeout_ms, polling="raf")
        took.append(time.perf_counter() - started)
    return took
