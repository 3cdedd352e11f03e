"""The cluster map at 100,000 and 1,000,000 documents, in Chromium: paint, interaction, memory.

For each data folder (from ``benchmarks/map_corpora.py``), in the same run:

- ours: the app as ``make run`` starts it, its Clusters page opened at
  ``/clusters?corpus=atlas`` (the stored community + UMAP result: 20,000 points
  sampled per cluster, cluster names on the map, an aggregate image of every
  document behind them);
- the peer: a bare Streamlit page drawing every document as one plotly WebGL
  scatter coloured by cluster (``map_scale_peer.py``), under the same server
  settings.

Measured from the navigation's start (the browser's own clock,
``performance.now()``): the first paint of the map (plotly has drawn its WebGL
points), and the interactive map (the page's script has ended and a click on a
point comes back with its document listed: ours lists it under the map; for
the peer, the click's selection round trip). Memory: the page's JavaScript heap
(``performance.memory.usedJSHeapSize``) and the resident memory of the page's
renderer process (the largest Chromium renderer started for it). A peer that
has not painted within ``--timeout`` seconds is reported as such.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/map_scale.py --data /tmp/map100k/data \
          --data /tmp/map1m/data
Writes benchmarks/results/map_scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser import CHROMIUM, CHROMIUM_ARGS, free_port, read_worker_pid, stop, wait_healthy  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CORPUS = "atlas"
PAINTED = """() => {
  const gd = document.querySelector('.stPlotlyChart .js-plotly-plot');
  return !!(gd && gd._fullData && gd._fullData.length && gd.querySelector('canvas'));
}"""
IDLE = """() => document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState
  === 'notRunning'"""
POINT = """() => {
  const gd = document.querySelector('.stPlotlyChart .js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, d = gd._fullData[0];
  const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
  return [box.left + xa.l2p(d.x[0]), box.top + ya.l2p(d.y[0]), d.x.length];
}"""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def rss_mib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        return None
    return None


def renderers() -> set[int]:
    """Pids of the Chromium renderer processes running now."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"chromium" in cmd and b"--type=renderer" in cmd:
                out.add(int(entry.name))
    return out


def serve(script: str, data: Path, log_path: Path, env: dict | None = None):
    port = free_port()
    full_env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, "SEARCHAPP_DATA_DIR": str(data),
                "SEARCHAPP_DEVICE": "cpu", "PYTHONPATH": str(ROOT), **(env or {})}
    out = open(log_path, "wb")  # noqa: SIM115 - closed by the caller through stop_server
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true",
         "--browser.gatherUsageStats", "false"], cwd=ROOT, env=full_env, stdout=out,
        stderr=subprocess.STDOUT)
    wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=300)
    return proc, out, f"http://127.0.0.1:{port}"


def poll(page, script: str, timeout: float) -> float | None:
    """``performance.now()`` (ms since the navigation began) when ``script`` first holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.evaluate(script):
            return page.evaluate("performance.now()")
        time.sleep(0.05)
    return None


def measure(browser, url: str, ours: bool, timeout: float, shot: Path | None) -> dict:
    before = renderers()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(timeout * 1000)
    out: dict = {}
    try:
        page.goto(url, wait_until="commit")
        painted = poll(page, PAINTED, timeout)
        out["first_paint_s"] = None if painted is None else round(painted / 1000, 2)
        if painted is None:
            out["note"] = f"the map had not painted after {timeout:.0f} s"
            return out
        idle = poll(page, f"() => ({IDLE})() && ({PAINTED})()", timeout)
        x, y, points = page.evaluate(POINT)
        out["points_drawn"] = points
        started = time.perf_counter()
        page.mouse.click(x, y)
        if ours:
            page.get_by_role("heading", name="Selected on the map (1)").wait_for()
        else:  # the peer's selection round trip: the script reruns with the selection
            page.wait_for_function(f"() => !({IDLE})()", timeout=timeout * 1000)
        poll(page, IDLE, timeout)
        click_s = time.perf_counter() - started
        out["interactive_s"] = round(idle / 1000, 2)
        out["click_to_listed_s"] = round(click_s, 2)
        out["js_heap_mib"] = round(page.evaluate("performance.memory.usedJSHeapSize") / 2**20)
        fresh = renderers() - before
        out["renderer_rss_mib"] = max((rss_mib(p) or 0 for p in fresh), default=None)
        if shot:
            page.screenshot(path=str(shot), full_page=False)
        return out
    finally:
        context.close()


def one_corpus(data: Path, args, browser) -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ["SEARCHAPP_DATA_DIR"] = str(data)
    from searchapp.store import repo
    from searchapp.store.db import Database

    db = Database(f"sqlite:///{data / 'searchapp.db'}")
    with db.session() as s:
        documents = repo.corpus_state(s, CORPUS).documents
    db.dispose()
    result: dict = {"documents": documents}
    for name, script, ours in (("ours", "app.py", True),
                               ("peer", "benchmarks/map_scale_peer.py", False)):
        proc, out, url = serve(script, data, data / f"map_scale_{name}.log",
                               {"MAP_CORPUS": CORPUS})
        try:
            path = f"{url}/clusters?corpus={CORPUS}" if ours else url
            rounds = []
            for i in range(args.rounds):
                shot = Path(args.shots) / f"map_{documents}_{name}.png" \
                    if args.shots and i == args.rounds - 1 else None
                rounds.append(measure(browser, path, ours, args.timeout, shot))
                log(f"{documents:,} {name} round {i + 1}: {rounds[-1]}")
                if rounds[-1].get("first_paint_s") is None:
                    break
            result[name] = {"rounds": rounds, "app_rss_mib": rss_mib(proc.pid)}
        finally:
            worker = read_worker_pid(data)
            stop(proc.pid)
            if worker and ours:
                stop(worker)
            out.close()
    for key in ("first_paint_s", "interactive_s", "js_heap_mib", "renderer_rss_mib"):
        ours_v = [r.get(key) for r in result["ours"]["rounds"] if r.get(key) is not None]
        peer_v = [r.get(key) for r in result["peer"]["rounds"] if r.get(key) is not None]
        if ours_v and peer_v:
            o, p = sorted(ours_v)[len(ours_v) // 2], sorted(peer_v)[len(peer_v) // 2]
            result[f"{key}_median"] = {"ours": o, "peer": p, "ours_over_peer": round(o / p, 3)}
            print(f"{documents:,} documents, {key}: ours {o}, peer {p}, ratio {o / p:.3f}")
        elif ours_v:
            result[f"{key}_median"] = {"ours": sorted(ours_v)[len(ours_v) // 2], "peer": None}
            print(f"{documents:,} documents, {key}: ours {result[f'{key}_median']['ours']}, "
                  "peer did not finish")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", action="append", required=True, type=Path,
                        help="a data folder from map_corpora.py (repeat for several)")
    parser.add_argument("--rounds", type=int, default=3, help="page opens per app")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--shots", help="folder for a screenshot of each map")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    if args.shots:
        Path(args.shots).mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    results = {"machine_load_at_start": [round(v, 1) for v in load], "corpora": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=[*CHROMIUM_ARGS, "--enable-precise-memory-info"])
        try:
            for data in args.data:
                results["corpora"].append(one_corpus(data.resolve(), args, browser))
        finally:
            browser.close()
    results["machine_load_at_end"] = [round(v, 1) for v in os.getloadavg()]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "map_scale.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
