"""Labelling speed in a real browser: judgements per minute by keyboard, against marking by mouse.

A scripted person in headless Chromium (Playwright, /usr/bin/chromium) answers
the moment the next item is painted, so the numbers are the app's ceiling, the
time a person's reading adds comes on top. On one corpus (the bundled sample,
3,025 captions, embedded first into a fresh data folder) it measures:

- ``label_pairs`` / ``label_everything``: the Label page, "Duplicate pairs" and
  "Everything" (pairs and query results mixed), answered with Y / N, with a
  skip every 10th item and an undo every 20th (``--answers`` key presses each);
- ``review``: the Duplicates page's Review tab (D / N / S / U), after the mining
  it needs;
- ``search_marks`` (the peer: how a person judges without the Label page):
  the Search page, a query typed, then a click on "Relevant" / "Not relevant"
  on each of its 10 results, query after query.

Each answer is timed from the key press (or click) to the next item painted with
nothing stale left; the rate is answers (and stored judgements) over the whole
wall time, refills of the proposal queue included. The requirement is at least
one judgement per second sustained (60 per minute).

Run (2 busy CPU cores: about 10 minutes, 3 of them embedding the sample; ``--data``
reuses a folder an earlier run prepared, ``--settle 60`` lets the app's model
warm-up finish before the first key):
    PYTHONPATH=. .venv/bin/python benchmarks/label_speed.py --answers 120 --settle 60
Writes benchmarks/results/label_speed.json (and prints it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import CHROMIUM_ARGS, served_app  # noqa: E402
from tests.label_driver import CHANGED, SETTLED, label_by_keyboard  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
QUERIES = ["a dog running on the beach", "a man playing guitar", "children playing football",
           "a woman cooking dinner", "a cat sleeping on a sofa", "an airplane taking off",
           "a boy riding a bicycle", "people dancing at a wedding", "snow on the mountains",
           "a horse jumping a fence", "a train arriving at the station", "a baby laughing"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def keys_for(n: int, yes: str = "y", no: str = "n") -> str:
    """A fixed answer sequence: a skip every 10th, an undo every 20th, yes/no otherwise."""
    out = []
    for i in range(n):
        if i % 20 == 19:
            out.append("u")
        elif i % 10 == 9:
            out.append("s")
        else:
            out.append(yes if (i * 7) % 5 < 2 else no)
    return "".join(out)


def net_judgements(keys: str) -> int:
    """Judgements stored by a key sequence: each y/n/d one, each u takes the last action back."""
    stack = []
    for k in keys:
        if k == "u":
            if stack:
                stack.pop()
        else:
            stack.append(k)
    return sum(1 for k in stack if k != "s")


def summary(name: str, seconds: list[float], wall: float, judgements: int) -> dict:
    ordered = sorted(seconds)
    return {"view": name, "answers": len(seconds), "judgements": judgements,
            "wall_s": round(wall, 2),
            "answers_per_minute": round(60 * len(seconds) / wall, 1),
            "judgements_per_minute": round(60 * judgements / wall, 1),
            "p50_s": round(statistics.median(ordered), 3),
            "p95_s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
            "max_s": round(ordered[-1], 3), "max_at": seconds.index(ordered[-1]),
            "first_s": round(seconds[0], 3),
            "seconds": [round(x, 3) for x in seconds]}


def prepare(data: Path) -> None:
    """The sample corpus, embedded, in a fresh data folder (in this process)."""
    os.environ["SEARCHAPP_DATA_DIR"] = str(data)
    from searchapp.context import App
    from searchapp.duplicates import review
    from searchapp.jobs.worker import run_until_done
    from searchapp.sample import load_sample

    app = App()
    started = time.perf_counter()
    job = load_sample(app).job_id
    assert run_until_done(app, job).status == "succeeded"
    log(f"embedded the sample in {time.perf_counter() - started:.1f} s")
    mining = review.request_review_mining(app, "captions", None, 10)
    assert run_until_done(app, mining).status == "succeeded"
    app.db.dispose()


_APPS: dict = {}


def stored_judgements(data: Path) -> int:
    """The corpus' judgement count, read through an App of this process (kept open)."""
    from searchapp.context import App
    from searchapp.judgements import service

    if data not in _APPS:
        _APPS[data] = App()
    return service.counts(_APPS[data], "captions")["total"]


def forget_search_marks(data: Path) -> None:
    from searchapp.judgements import service

    stored_judgements(data)
    app = _APPS[data]
    for j in service.list_judgements(app, "captions", kind="query"):
        if j.source == "search":
            service.remove(app, "captions", j.id)


def wait_stored(data: Path, total: int, timeout: float = 120.0) -> None:
    """Poll the database until the corpus has ``total`` judgements."""
    deadline = time.monotonic() + timeout
    while stored_judgements(data) < total:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the judgement did not arrive within {timeout:.0f} s")
        time.sleep(0.01)


def label_page(page, url: str, kind: str, keys: str) -> tuple[list[float], float]:
    page.goto(f"{url}/label")
    page.get_by_role("heading", name="Label").wait_for(timeout=120_000)
    page.get_by_role("radio", name=kind, exact=True).click()
    page.locator(".st-key-label-current").wait_for(timeout=120_000)
    page.wait_for_function(SETTLED, timeout=120_000, polling="raf")
    started = time.perf_counter()
    seconds = label_by_keyboard(page, keys, ".st-key-label-current", timeout_ms=120_000)
    return seconds, time.perf_counter() - started


def review_tab(page, url: str, keys: str) -> tuple[list[float], float]:
    page.goto(f"{url}/duplicates")
    page.get_by_role("tab", name="Review").click()
    page.locator(".st-key-review-current").wait_for(timeout=120_000)
    page.wait_for_function(SETTLED, timeout=120_000, polling="raf")
    started = time.perf_counter()
    seconds = label_by_keyboard(page, keys, ".st-key-review-current", timeout_ms=120_000)
    return seconds, time.perf_counter() - started


def search_marks(page, url: str, n: int, data: Path) -> tuple[list[float], float]:
    """Marks clicked on the Search page's hits, 10 per query; query typing not timed. A mark
    is done when its judgement is stored (polled in the database) and the page settled."""
    page.goto(f"{url}/search")
    first = stored_judgements(data)
    seconds: list[float] = []
    wall = 0.0
    for q, query in enumerate(QUERIES):
        box = page.get_by_label("Query")
        before = page.locator(".st-key-hit-1").inner_text() if q else ""
        box.fill(query)
        box.press("Enter")
        page.wait_for_function(CHANGED, arg=[".st-key-hit-1", before], timeout=120_000,
                               polling="raf")  # this query's results, not the last one's
        page.locator(".st-key-hit-10").wait_for(timeout=120_000)
        page.wait_for_function(SETTLED, timeout=120_000, polling="raf")
        started = time.perf_counter()
        for rank in range(1, 11):
            if len(seconds) >= n:
                break
            choice = "Relevant" if (q + rank) % 3 else "Not relevant"
            hit = page.locator(f".st-key-hit-{rank}")
            t0 = time.perf_counter()
            hit.get_by_role("radio", name=choice, exact=True).click()
            wait_stored(data, len(seconds) + first + 1)
            page.wait_for_function(SETTLED, timeout=120_000, polling="raf")
            seconds.append(time.perf_counter() - t0)
        wall += time.perf_counter() - started
        if len(seconds) >= n:
            break
    return seconds, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=120, help="key presses per view")
    parser.add_argument("--out", default=str(RESULTS / "label_speed.json"))
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds to wait after the app starts (its model warm-up) before "
                             "measuring; 0 measures a person who starts at once")
    parser.add_argument("--data", help="a data folder prepared by an earlier run (kept, with "
                        "the judgements made there); default: a new one, embedded first")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="label-speed-"))
    data = Path(args.data) if args.data else work / "data"
    if not (data / "searchapp.db").exists():
        prepare(data)
    os.environ["SEARCHAPP_DATA_DIR"] = str(data)
    results = []
    with served_app(data, work / "streamlit.log") as (_, url), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        page.goto(url)  # the first session starts the warm-up (torch, the model)
        time.sleep(args.settle)
        for name, kind in (("label_pairs", "Duplicate pairs"), ("label_everything",
                                                                "Everything")):
            before = stored_judgements(data)
            keys = keys_for(args.answers)
            seconds, wall = label_page(page, url, kind, keys)
            stored = stored_judgements(data) - before
            assert stored == net_judgements(keys), (stored, net_judgements(keys))
            results.append(summary(name, seconds, wall, stored))
            log(json.dumps(results[-1]))
        before = stored_judgements(data)
        keys = keys_for(args.answers, yes="d")
        seconds, wall = review_tab(page, url, keys)
        results.append(summary("review", seconds, wall, stored_judgements(data) - before))
        log(json.dumps(results[-1]))
        forget_search_marks(data)  # marks of an earlier run would be clicked off, not on
        before = stored_judgements(data)
        seconds, wall = search_marks(page, url, args.answers, data)
        results.append(summary("search_marks (peer)", seconds, wall,
                               stored_judgements(data) - before))
        log(json.dumps(results[-1]))
        browser.close()
    peer = results[-1]["judgements_per_minute"]
    out = {"benchmark": "label_speed", "corpus": "captions (3,025)", "settle_s": args.settle,
           "load_average": os.getloadavg(),
           "machine": f"{platform.processor() or platform.machine()}, "
                      f"{os.cpu_count()} CPUs visible",
           "requirement_judgements_per_minute": 60, "views": results,
           "ratio_to_peer": {r["view"]: round(r["judgements_per_minute"] / peer, 2)
                             for r in results[:-1]},
           "ratio_to_requirement": {r["view"]: round(r["judgements_per_minute"] / 60, 2)
                                    for r in results}}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
