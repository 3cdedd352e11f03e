"""A screenshot of every page, for the README and the guide (docs/screenshots).

Starts the app as ``make run`` starts it (``serve.py``) on an existing data folder,
opens each page in Chromium at 1400×1000 with something on it (a search, the stored
duplicates and clusters) and saves a picture of each. The guide's pictures are of the
sample corpus (``docs/browser.md`` says how that folder is made); a large one, e.g.
``benchmarks/map_corpora.py build100k``'s, works the same way.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/screenshots.py --data DATA_DIR \
          --corpus captions --out docs/screenshots
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from map_scale import CHROMIUM, CHROMIUM_ARGS, IDLE, PAINTED, poll, read_worker_pid, serve, stop  # noqa: E402

QUERY = "a dog running on the beach"
WAIT = 300_000


def shoot(url: str, corpus: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(WAIT)
        for name, path in (("upload", "/"),
                           ("search", f"/search?corpus={corpus}&q={quote(QUERY)}"),
                           ("duplicates", f"/duplicates?corpus={corpus}"),
                           ("clusters", f"/clusters?corpus={corpus}"),
                           ("models", "/models"), ("jobs", "/jobs")):
            page.goto(url + path)
            page.locator("h1").first.wait_for()
            if name == "search":
                page.locator(".st-key-hit-1").wait_for()
            if name == "clusters":
                poll(page, PAINTED, WAIT / 1000)
            if name == "duplicates":
                page.get_by_text("Download pairs (CSV)").first.wait_for()
            poll(page, IDLE, WAIT / 1000)
            page.locator('[data-testid="stSkeleton"]').first.wait_for(state="detached")
            page.wait_for_timeout(2000)  # let charts finish drawing before the picture
            page.screenshot(path=str(out / f"{name}.png"), full_page=name != "clusters")
            print(f"{name}: {out / f'{name}.png'}", flush=True)
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    data = args.data.resolve()
    proc, log, url = serve("serve.py", data, data / "screenshots.log")  # as make run
    try:
        shoot(url, args.corpus, args.out)
    finally:
        worker = read_worker_pid(data)
        stop(proc.pid)
        if worker:
            stop(worker)
        log.close()


if __name__ == "__main__":
    main()
