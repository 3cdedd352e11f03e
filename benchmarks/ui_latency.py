"""UI latency in a real browser: Enter to painted results, page switches, the app's search time.

Starts the app as ``make run`` does (``streamlit run serve.py`` with the repository's
.streamlit/config.toml) on a data folder that already holds a corpus, and, as
the peer, the least Streamlit page doing the same search
(``benchmarks/ui_latency_peer.py``) on the same data. Headless Chromium
(Playwright, /usr/bin/chromium) then measures, in the page itself:

- Enter → painted: from the keydown of Enter in the query box to the first
  frame painted after the new results are in the DOM (a MutationObserver sees
  them; a requestAnimationFrame + setTimeout(0) lands after that paint);
- the app's own search time: the "N results in X ms" the page prints;
- page switch: from the click on a sidebar link to the first frame painted with
  the new page's title (each page visited ``--rounds`` times, after a warm-up).

Run (a corpus of 100,000 real texts, built by benchmarks/scale.py ingest --work DIR):
    PYTHONPATH=. .venv/bin/python benchmarks/ui_latency.py --data DIR/data --corpus bench
Writes benchmarks/results/ui_latency_{documents}.json (and prints it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import CHROMIUM_ARGS, free_port, stop, wait_healthy  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
QUERIES = [
    "a dog running on the beach", "the stock market fell sharply", "a man playing guitar",
    "children playing football in the park", "heavy rain and flooding", "a woman cooking dinner",
    "the president gave a speech", "a cat sleeping on a sofa", "an airplane taking off",
    "students studying for an exam", "a boy riding a bicycle", "the company reported profits",
    "people dancing at a wedding", "snow on the mountains", "a chef slicing vegetables",
    "police arrested a suspect", "a horse jumping a fence", "the team won the championship",
    "a baby laughing", "a train arriving at the station", "fishing on a lake at dawn",
]
# the peer page under the app's config, and under Streamlit's default post-run collection
PEERS = {"peer": {}, "peer_stock_gc": {"STREAMLIT_RUNNER_POST_SCRIPT_GC": "true"}}
PAGES = ["Duplicates", "Clusters", "Models", "Jobs", "Upload", "Search"]

# In-page timing: Enter's keydown starts the clock; the first paint after the results'
# signature (caption + first hit) changes stops it.
WATCH_JS = """
() => {
  const sig = () => {
    const hit = document.querySelector('.st-key-hit-1');
    const cap = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
      .map(e => e.innerText).filter(t => / results? in /.test(t)).join('|');
    return (hit ? hit.innerText : '') + '#' + cap;
  };
  window.__lat = {start: null, painted: null, before: sig()};
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && window.__lat.start === null) window.__lat.start = performance.now();
  }, {capture: true, once: true});
  const obs = new MutationObserver(() => {
    const now = sig();
    if (window.__lat.start !== null && now !== window.__lat.before && now.includes('#')
        && document.querySelector('.st-key-hit-1') && / results? in /.test(now)) {
      obs.disconnect();
      requestAnimationFrame(() => setTimeout(() => {
        window.__lat.painted = performance.now(); window.__lat.sig = now; }, 0));
    }
  });
  obs.observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""
PAGE_JS = """
(title) => new Promise(resolve => {
  const start = performance.now();
  const done = () => requestAnimationFrame(() => setTimeout(() =>
      resolve(performance.now() - start), 0));
  const has = () => [...document.querySelectorAll('h1')].some(h => h.innerText.trim() === title);
  const obs = new MutationObserver(() => { if (has()) { obs.disconnect(); done(); } });
  obs.observe(document.body, {subtree: true, childList: true, characterData: true});
  window.__click();
})
"""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


@contextmanager
def streamlit(script: str, data: Path, env: dict, log_path: Path, cwd: Path = ROOT):
    """``streamlit run SCRIPT`` as ``make run`` starts the app (in ``cwd``, a checkout);
    yields the url."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # as `make run` starts it: torch's threads wait passively unless the caller said otherwise
    full_env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, "SEARCHAPP_DATA_DIR": str(data),
                "PYTHONPATH": str(ROOT), **env}
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("streamlit")), "run", script,
             "--server.address", "127.0.0.1", "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=cwd, env=full_env, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_healthy(url, proc, timeout=120,
                         path="/healthz" if script == "serve.py" else "/_stcore/health")
            yield url
        finally:
            stop(proc.pid)


def percentiles(values: list[float]) -> dict:
    values = sorted(values)
    return {"p50": round(statistics.median(values), 1),
            "p90": round(values[min(len(values) - 1, int(0.9 * len(values)))], 1),
            "min": round(values[0], 1), "max": round(values[-1], 1), "n": len(values)}


def enter_to_paint(page, query: str) -> tuple[float, float | None]:
    """One search: (Enter → painted ms, the app's own ms from its caption, if shown)."""
    box = page.get_by_label("Query", exact=True)
    box.fill(query)
    page.evaluate(WATCH_JS)
    box.press("Enter")
    page.wait_for_function("() => window.__lat.painted !== null", timeout=120_000)
    lat = page.evaluate("() => window.__lat")
    own = None
    for part in lat["sig"].split("#", 1)[1].split("|"):
        if " results in " in part:
            own = float(part.split(" results in ", 1)[1].split(" ms", 1)[0].replace(",", ""))
    return lat["painted"] - lat["start"], own


def search_rounds(page, rounds: int) -> dict:
    for query in QUERIES[:2]:  # warm-up: the model, the index, the first render
        enter_to_paint(page, query)
    paint, own = [], []
    for i in range(rounds):
        ms, app_ms = enter_to_paint(page, QUERIES[2 + i % (len(QUERIES) - 2)])
        paint.append(ms)
        if app_ms is not None:
            own.append(app_ms)
    return {"enter_to_paint_ms": percentiles(paint),
            "own_search_ms": percentiles(own) if own else None,
            "samples": {"enter_to_paint_ms": [round(m, 1) for m in paint], "own_search_ms": own}}


def page_switches(page, rounds: int) -> dict:
    out = {}
    for r in range(rounds + 1):  # round 0 warms each page up (first visit builds caches)
        for title in PAGES:
            link = page.locator('[data-testid="stSidebarNav"] a', has_text=title).first
            link.evaluate("(el) => { window.__click = () => el.click(); }")
            ms = page.evaluate(PAGE_JS, title)
            if r:
                out.setdefault(title, []).append(ms)
            page.locator("h1", has_text=title).first.wait_for(timeout=120_000)
            page.wait_for_load_state("networkidle")
    return {title: percentiles(ms) for title, ms in out.items()} | {
        "all": percentiles([m for ms in out.values() for m in ms])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="SEARCHAPP_DATA_DIR")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--rounds", type=int, default=19, help="timed searches per app")
    parser.add_argument("--page-rounds", type=int, default=3)
    parser.add_argument("--screenshots", type=Path, help="save one screenshot per page here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.store import repo

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(args.data)}))
    with app.db.session() as s:
        [summary] = [c for c in repo.summaries(s) if c.name == args.corpus]
    app.db.dispose()
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    result = {"documents": summary.documents, "embedded": summary.embedded,
              "corpus": args.corpus, "load_1min_before": os.getloadavg()[0]}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        with streamlit("serve.py", args.data, {}, logs / "ui_latency_app.log") as url:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.goto(f"{url}/search")
            page.get_by_label("Query", exact=True).wait_for(timeout=120_000)
            log("ours: searches")
            result["ours"] = search_rounds(page, args.rounds)
            log(f"ours: {result['ours']}")
            log("ours: page switches")
            result["page_switch_ms"] = page_switches(page, args.page_rounds)
            log(f"page switches: {result['page_switch_ms']['all']}")
            if args.screenshots:
                shoot(page, args.screenshots)
        for name, extra in PEERS.items():
            with streamlit("benchmarks/ui_latency_peer.py", args.data,
                           {"UI_LATENCY_CORPUS": args.corpus, **extra},
                           logs / f"ui_latency_{name}.log") as url:
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                page.goto(url)
                page.get_by_label("Query", exact=True).wait_for(timeout=120_000)
                log(f"{name}: searches")
                result[name] = search_rounds(page, args.rounds)
                log(f"{name}: {result[name]}")
        browser.close()
    ours = result["ours"]["enter_to_paint_ms"]["p50"]
    peer = result["peer"]["enter_to_paint_ms"]["p50"]
    result["ours_over_peer_p50"] = round(ours / peer, 3)
    result["peer_is"] = ("a bare Streamlit page: one text input, the same search call, plain "
                         "results, under the repository's .streamlit/config.toml")
    result["peer_stock_gc_is"] = ("the same page with Streamlit's default full garbage "
                                  "collection after every run (runner.postScriptGC true)")
    result["load_1min_after"] = os.getloadavg()[0]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"ui_latency_{summary.documents}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {path}")
    print(json.dumps(result, indent=2))


def shoot(page, folder: Path) -> None:
    """One full-page screenshot per page, for the README."""
    folder.mkdir(parents=True, exist_ok=True)
    for title in PAGES:
        page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
        page.locator("h1", has_text=title).first.wait_for(timeout=120_000)
        if title == "Search":
            page.get_by_label("Query", exact=True).fill("a dog running on the beach")
            page.get_by_label("Query", exact=True).press("Enter")
            page.locator(".st-key-hit-1").wait_for(timeout=60_000)
        if title == "Clusters":  # the first view of a large corpus
            page.locator(".stPlotlyChart").first.wait_for(timeout=120_000)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(1500)  # let charts finish drawing before the picture
        page.screenshot(path=str(folder / f"{title.lower()}.png"), full_page=True)


if __name__ == "__main__":
    main()
