"""The Search page as a person uses it, in Chromium: any k should cost what one page costs.

On a data folder with a large corpus of short texts (a title line and a description,
like news items) and a smaller one of long texts (several paragraphs), both stored
through the real store with clustered vectors (``benchmarks/synthetic.py``: the
encoder is skipped when building, not when searching), it measures for each app:

- usable page: from ``goto(/search?corpus=..&q=..&k=K)`` to the first hit painted
  and no script running;
- new query: from Enter in the query box to the new list painted, no script running;
- judgement click: from a click on hit 1's "Relevant" to the rerun it starts ending;
- hits per screen: the hits wholly visible in a 1400×1000 window, hit 1 at the top,
  for the short-text and the long-text corpus; and first-screen hits: those in view as
  the search opens, under the page's controls, before any scrolling.

"Ours" is this checkout; the peer is the same app before this change (``--before
DIR``: another checkout, e.g. ``git worktree add /tmp/before main``), on the same
data in the same run. k = 10, 100 and 1,000.

Run:
    PYTHONPATH=. .venv/bin/python benchmarks/ui_pages.py --work /tmp/ui-pages \\
        --documents 100000 --before /tmp/before
Writes benchmarks/results/ui_pages_{documents}.json (and prints it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic import clustered_vectors, store_corpus  # noqa: E402
from benchmarks.ui_latency import streamlit  # noqa: E402
from tests.browser import CHROMIUM_ARGS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
KS = (10, 100, 1000)
QUERIES = ["bank card stolen yesterday", "river flood warning city", "team wins final match",
           "new phone battery life", "coffee prices rise again", "school exam results out",
           "train delays this morning", "election debate on taxes"]
VOCAB_TEXT = ("bank card stolen city river flood warning team wins final match phone battery life "
         "coffee prices rise school exam results train delays morning election debate taxes "
         "market shares fall storm coast power cut hospital nurses strike museum opens art "
         "film festival award singer tour tickets football league injury player transfer "
         "weather snow roads closed airport flights cancelled company profits jobs factory "
         "minister plan housing rents students loans science space launch rocket moon")
VOCAB = VOCAB_TEXT.split()
# Resolves when the rerun a click or a key starts has run and its result is painted.
ARM_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__run = {start: performance.now(), ran: false, end: null};
  const obs = new MutationObserver(() => {
    const state = app.getAttribute('data-test-script-state');
    if (state === 'running') window.__run.ran = true;
    if (window.__run.ran && state === 'notRunning' && window.__run.end === null) {
      obs.disconnect();
      requestAnimationFrame(() => setTimeout(() => { window.__run.end = performance.now(); }, 0));
    }
  });
  obs.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
DONE_JS = "() => window.__run.end !== null"
# wholly in view, to a pixel: scrolled "to the top", hit 1 can sit 0.4 px above the window
COUNT_VISIBLE = """() => [...document.querySelectorAll('[class*="st-key-hit-"]')]
  .filter(e => /st-key-hit-\\d+(\\s|$)/.test(e.className))
  .filter(e => { const r = e.getBoundingClientRect();
                 return r.top >= -1 && r.bottom <= window.innerHeight + 1 && r.height > 0; })
  .length"""
WAIT = 600_000


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def texts(n: int, long: bool, seed: int) -> list[str]:
    """Short: a title line and a one-line description; long: a title and 5 paragraphs."""
    rng = np.random.default_rng(seed)
    words = np.array(VOCAB)

    def line(count: int) -> str:
        return " ".join(words[rng.integers(0, len(words), size=count)]).capitalize()

    if not long:
        return [f"{line(8)}\n{line(24)}." for _ in range(n)]
    return ["\n\n".join([line(8)] + [line(70) + "." for _ in range(5)]) for _ in range(n)]


def build(data: Path, documents: int, long_documents: int) -> None:
    """The two corpora in ``data`` (skipped when they are there)."""
    from searchapp.config import Settings
    from searchapp.context import App

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data)}))
    for name, n, long in (("short", documents, False), ("long", long_documents, True)):
        store_corpus(app, name, texts(n, long, seed=n), clustered_vectors(n, seed=n), log=log)
    app.db.dispose()


def timed_run(page, action) -> float:
    """ms from ``action()`` to the end of the rerun it starts, painted."""
    page.evaluate(ARM_JS)
    started = time.perf_counter()
    action()
    page.wait_for_function(DONE_JS, timeout=WAIT, polling="raf")
    return (time.perf_counter() - started) * 1000


def usable_page(page, url: str, corpus: str, k: int, query: str) -> float:
    """ms from navigation to the first hit painted with no script running."""
    started = time.perf_counter()
    page.goto(f"{url}/search?corpus={corpus}&q={query.replace(' ', '+')}&k={k}")
    page.locator(".st-key-hit-1").wait_for(timeout=WAIT)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=WAIT)
    page.wait_for_function("() => !document.querySelector('[data-stale=\"true\"]')",
                           timeout=WAIT, polling="raf")
    return (time.perf_counter() - started) * 1000


def new_query(page, query: str) -> float:
    box = page.get_by_label("Query", exact=True)
    box.fill(query)
    return timed_run(page, lambda: box.press("Enter"))


def judgement_click(page) -> float:
    button = page.locator(".st-key-hit-1").get_by_role("radio", name="Relevant", exact=True)
    button.wait_for(timeout=WAIT)
    return timed_run(page, button.click)


def hits_per_screen(page, url: str, corpus: str) -> tuple[int, int]:
    """(hits wholly in view as the search opens, hits in view with hit 1 scrolled to the
    top)."""
    usable_page(page, url, corpus, 20, QUERIES[0])
    # the actions of the hits drawn: until their code has loaded, buttons are taller
    # placeholders
    page.locator(".st-key-hit-12").get_by_role("button", name="More like this").wait_for(
        timeout=WAIT)
    first_screen = page.evaluate(COUNT_VISIBLE)
    page.evaluate("document.querySelector('.st-key-hit-1').scrollIntoView({block: 'start'})")
    return first_screen, page.evaluate(COUNT_VISIBLE)


def median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def measure(browser, url: str, rounds: int, out: dict, save) -> dict:
    """Every number for one app at ``url``, into ``out`` (``save()`` after each step, so a
    run stopped on a slow app keeps what it measured)."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(WAIT)
    out["hits_per_screen"], out["first_screen_hits"] = {}, {}
    log("warm-up (the model, the index)")
    out["first_visit_ms"] = round(usable_page(page, url, "short", 10, QUERIES[0]), 1)
    usable_page(page, url, "long", 10, QUERIES[0])
    for corpus in ("short", "long"):
        out["first_screen_hits"][corpus], out["hits_per_screen"][corpus] = \
            hits_per_screen(page, url, corpus)
        save()
    log(f"hits per screen: {out['hits_per_screen']}; in the first screen, unscrolled: "
        f"{out['first_screen_hits']}")
    for k in KS:
        usable, queries, clicks = [], [], []
        for r in range(rounds):
            usable.append(usable_page(page, url, "short", k, QUERIES[r % len(QUERIES)]))
            queries.append(new_query(page, QUERIES[(r + 3) % len(QUERIES)]))
            clicks.append(judgement_click(page))
        out[f"k{k}"] = {"usable_page_ms": median(usable), "new_query_ms": median(queries),
                        "judgement_click_ms": median(clicks),
                        "samples": {"usable": [round(v) for v in usable],
                                    "query": [round(v) for v in queries],
                                    "click": [round(v) for v in clicks]}}
        log(f"k={k}: {out[f'k{k}']}")
        save()
    page.context.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="the data folder goes here")
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--long-documents", type=int, default=2_000)
    parser.add_argument("--before", type=Path, help="a checkout of the app before (the peer)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    data = args.work / "data"
    started = time.perf_counter()
    build(data, args.documents, args.long_documents)
    result = {"documents": args.documents, "long_documents": args.long_documents,
              "build_seconds": round(time.perf_counter() - started, 1),
              "load_1min_before": os.getloadavg()[0], "rounds": args.rounds}
    apps = {"ours": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"ui_pages_{args.documents}.json"

    def save() -> None:
        path.write_text(json.dumps(result, indent=2) + "\n")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for name, checkout in apps.items():
            log(f"{name}: {checkout}")
            with streamlit("serve.py", data, {"PYTHONPATH": str(checkout)},
                           args.work / f"{name}.log", cwd=checkout) as url:
                measure(browser, url, args.rounds, result.setdefault(name, {}), save)
        browser.close()
    if "before" in result:
        result["before_over_ours"] = {
            f"k{k}": {m: round(result["before"][f"k{k}"][m] / result["ours"][f"k{k}"][m], 2)
                      for m in ("usable_page_ms", "new_query_ms", "judgement_click_ms")}
            for k in KS}
    result["load_1min_after"] = os.getloadavg()[0]
    save()
    log(f"wrote {path}")
    print(json.dumps({k: v for k, v in result.items()}, indent=2))


if __name__ == "__main__":
    main()
