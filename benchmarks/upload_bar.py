"""The Upload page while a corpus is embedded: does the bar say what the table under it says?

A user reported a bar at 25% beside a table at 38.74% (7,600 news items: 1,920 and
2,944 embedded, one batch of 1,024 apart). This starts the app (``serve.py`` with its
real background worker) on an empty data folder, stores a table of short texts
through the CLI (``searchapp ingest``), opens the Upload page (``/?job=ID``) in Chromium at
1400×1000 and, until the job ends, reads the bar's "N of M (P%)" and the corpus' row
of the table together (one ``evaluate``, so the two are of the same moment) every
60 ms. It counts the samples where the two differ and the longest time they stayed
apart.

"Ours" is this checkout; ``--before DIR`` runs another checkout (e.g. ``git worktree
add /tmp/before HEAD~1``) on the same texts in the same run.

Run:
    PYTHONPATH=. .venv/bin/python benchmarks/upload_bar.py --rows 6000 --before /tmp/before
Writes benchmarks/results/upload_bar.json (and prints it).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NLI = ROOT.parent / "shared" / "data" / "nli" / "nli-train-small.tsv.gz"
SAMPLE_MS = 60
# The bar's text and the corpus' row ([corpus, documents, embedded, percent, model]) of
# whichever table the checkout draws (a data grid's accessible table, or a static one).
READ_BOTH = """(corpus) => {
  const bar = document.querySelector('[data-testid="stProgress"]');
  const rows = [...document.querySelectorAll(
      '[data-testid="stDataFrame"] [role=row], [data-testid="stTable"] tr')]
    .map(r => [...r.querySelectorAll('[role=gridcell], td')].map(c => c.textContent));
  return [bar ? bar.innerText : null, rows.find(cells => cells[0] === corpus) || null];
}"""
COUNT = re.compile(r"([\d,]+) of ([\d,]+) \((\d+)%\)")


def texts(rows: int) -> list[tuple[str, str]]:
    """(title, description) pairs: NLI premises and hypotheses where ../shared has them."""
    pairs: list[tuple[str, str]] = []
    if NLI.exists():
        with gzip.open(NLI, "rt", encoding="utf-8") as f:
            for line in list(csv.reader(f, delimiter="\t"))[1:]:
                if (line[1][:80], line[2]) not in pairs[-3:]:
                    pairs.append((line[1][:80], f"{line[2]} {line[1]}"))
                if len(pairs) == rows:
                    return pairs
    words = ["river", "storm", "council", "market", "film", "league", "airport", "factory",
             "school", "museum"]
    while len(pairs) < rows:
        i = len(pairs)
        pairs.append((f"{words[i % 10]} {words[(3 * i) % 10]} {i}",
                      " ".join(words[(i * j) % 10] for j in range(20))))
    return pairs


def measure(checkout: Path, table: Path, work: Path, browser) -> dict:
    """One run of ``checkout``: samples, how many disagree, the longest gap in ms."""
    sys.path.insert(0, str(checkout / "tests"))
    import browser as helpers  # the checkout's own server helpers (tests/browser.py)

    data = work / "data"
    data.mkdir(parents=True)
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data), "SEARCHAPP_DEVICE": "cpu",
           "PYTHONPATH": str(checkout)}
    with helpers.served_app(data, work / "streamlit.log") as (_proc, url):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/")
        out = subprocess.run([sys.executable, "-m", "searchapp", "ingest", str(table),
                              "--corpus", "news", "--text-column", "title",
                              "--text-column", "description"],
                             env=env, capture_output=True, text=True, check=True, cwd=checkout)
        job = int(re.search(r"job (\d+)", out.stdout).group(1))
        page.goto(f"{url}/?job={job}")
        samples = apart = 0
        longest = since = 0.0
        started = time.monotonic()
        while time.monotonic() - started < 600:
            bar, row = page.evaluate(READ_BOTH, "news")
            if page.get_by_text("Embedding 'news': done").count():
                break
            count = COUNT.search(bar or "")
            if count and row:
                samples += 1
                same = count.group(1).replace(",", "") == row[2].replace(",", "")
                now = time.monotonic()
                if not same:
                    apart += 1
                    since = since or now
                    longest = max(longest, now - since)
                else:
                    since = 0.0
            page.wait_for_timeout(SAMPLE_MS)
        page.close()
    sys.path.remove(str(checkout / "tests"))
    sys.modules.pop("browser", None)
    return {"samples": samples, "disagreeing": apart,
            "longest_apart_ms": round(1000 * longest), "seconds": round(time.monotonic()
                                                                         - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=6000)
    parser.add_argument("--before", type=Path, help="another checkout, run as the peer")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from browser import CHROMIUM, CHROMIUM_ARGS

    sys.path.remove(str(ROOT / "tests"))
    sys.modules.pop("browser", None)
    result: dict = {"rows": args.rows, "sample_ms": SAMPLE_MS}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        table = Path(tmp) / "news.csv"
        with open(table, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["title", "description"])
            writer.writerows(texts(args.rows))
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        runs = [("ours", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
        for name, checkout in runs:
            result[name] = measure(checkout, table, Path(tmp) / name, browser)
            print(name, result[name], flush=True)
        browser.close()
    out = ROOT / "benchmarks" / "results" / "upload_bar.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
