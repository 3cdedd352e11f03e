"""The app on a big corpus, in a real browser: how long each page takes to open, and memory.

Starts ``streamlit run serve.py`` (as ``make run``) on an existing data folder (for example the one
``benchmarks/scale.py synthetic --work DIR`` leaves, with its stored duplicate
and cluster results), opens every page from the sidebar several times in
Debian's Chromium through Playwright, and times each from the click to the
end of the page's script run (its title shown and Streamlit's
``data-test-script-state`` at ``notRunning``). The first round includes loading the index and
the stored results; the later rounds are what a user sees afterwards. It also
times a search from Enter to the end of the run, and reports the resident
memory of the app and of the background worker it started.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/app_scale.py --data DIR/data --corpus scale
Writes benchmarks/results/app_scale_{documents}.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser import CHROMIUM, CHROMIUM_ARGS, free_port, stop, wait_healthy  # noqa: E402

PAGES = ["Upload", "Search", "Duplicates", "Clusters", "Models", "Jobs"]
RESULTS = ROOT / "benchmarks" / "results"
# A page switch ends when the new page's title is shown and no script runs. (Counting
# "running" states missed runs: a page whose run takes 30 ms may never render one, and
# the wait then lasted until its timeout.)
PAGE_DONE = """(title) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const shown = [...document.querySelectorAll('h1')].some(h => h.innerText.trim() === title);
  return shown && app.dataset.testScriptState === 'notRunning';
}"""
# A search ends when the results (the caption "N results in X ms" and the first hit)
# differ from before Enter and no script runs.
SEARCH_SIGNATURE = """() => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
  .map(e => e.innerText).filter(t => / results? in /.test(t)).join('|') + '#'
  + (document.querySelector('.st-key-hit-1')?.innerText ?? '')"""
SEARCH_DONE = """(before) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return (""" + SEARCH_SIGNATURE + """)() !== before
      && app.dataset.testScriptState === 'notRunning';
}"""


def rss_mib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        return None
    return None


def open_page(page, name: str) -> float:
    """Seconds from the click on a sidebar link to the end of the new page's run."""
    link = page.locator('[data-testid="stSidebarNavLink"]', has_text=name).first
    started = time.perf_counter()
    link.click()
    page.wait_for_function(PAGE_DONE, arg=name, timeout=600_000, polling=20)
    return time.perf_counter() - started


def search(page, query: str) -> float:
    """Seconds from Enter to the end of the run that shows the results."""
    box = page.get_by_label("Query")
    box.fill(query)
    before = page.evaluate(SEARCH_SIGNATURE)
    started = time.perf_counter()
    box.press("Enter")
    page.wait_for_function(SEARCH_DONE, arg=before, timeout=600_000, polling=20)
    return time.perf_counter() - started


def measure(url: str, corpus: str, rounds: int, shots: Path | None, settle: float = 0.0
            ) -> dict:
    from playwright.sync_api import sync_playwright

    opened: dict[str, list[float]] = {name: [] for name in PAGES}
    searches: list[float] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                               timeout=600_000)
        time.sleep(settle)  # --settle: let the warm-up (models, indexes) finish first
        for round_ in range(rounds):
            for name in PAGES[1:] + PAGES[:1]:  # the app opens on Upload: start elsewhere
                opened[name].append(round(open_page(page, name), 3))
                if shots and round_ == rounds - 1:
                    page.screenshot(path=str(shots / f"{name.lower()}.png"), full_page=True)
            print(f"round {round_ + 1}: " + ", ".join(
                f"{n} {opened[n][-1]:.2f} s" for n in PAGES), flush=True)
        open_page(page, "Search")
        for query in ("synthetic document 12345", "how do I reset my password",
                      "a dog runs on the beach", "invoice missing", "printer jams"):
            searches.append(round(search(page, query), 3))
        browser.close()
    later = {n: t[1:] for n, t in opened.items()}
    return {"corpus": corpus, "rounds": rounds, "page_open_s": opened,
            "first_open_s": {n: t[0] for n, t in opened.items()},
            "later_opens_max_s": {n: max(t) for n, t in later.items() if t},
            "later_opens_median_s": {n: statistics.median(t) for n, t in later.items() if t},
            "search_enter_to_done_s": searches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="the data folder with the corpus")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--screenshots", help="folder for a screenshot of each page")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds to wait after the first page before timing (the "
                             "warm-up thread opens the models and indexes meanwhile)")
    parser.add_argument("--suffix", default="", help="added to the result file's name")
    args = parser.parse_args()
    data = Path(args.data).resolve()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data), "SEARCHAPP_DEVICE": "cpu",
           "PYTHONPATH": str(ROOT)}
    log = open(data / "app_scale.log", "wb")  # noqa: SIM115 - closed below
    app = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true",
         "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env, stdout=log,
        stderr=subprocess.STDOUT)
    worker = None
    try:
        wait_healthy(url, app, timeout=120)
        shots = Path(args.screenshots) if args.screenshots else None
        if shots:
            shots.mkdir(parents=True, exist_ok=True)
        result = measure(url, args.corpus, args.rounds, shots, args.settle)
        pid_file = data / "worker.pid"
        worker = int(pid_file.read_text()) if pid_file.is_file() else None
        result["memory_mib"] = {"app": rss_mib(app.pid),
                                "worker": rss_mib(worker) if worker else None}
    finally:
        stop(app.pid)
        stop(worker)
        log.close()
    from searchapp.context import App
    from searchapp.store import repo

    os.environ["SEARCHAPP_DATA_DIR"] = str(data)
    with App().db.session() as s:
        documents = repo.corpus_state(s, args.corpus).documents
    result["documents"] = documents
    result["settle_s"] = args.settle
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"app_scale_{documents}{args.suffix}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
