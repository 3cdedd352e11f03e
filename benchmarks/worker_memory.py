"""The worker's memory against the corpus size: while it embeds, just after, and at rest;
ours (it rests after ``--rest`` idle seconds: models, indexes and memos freed, heap
trimmed) against the same worker that never rests (``SEARCHAPP_WORKER_REST=0``, what
every worker did before), on the same corpus in the same run, one fresh data folder each.

Per size: a CSV of N real sentences (STSb, then NLI premises and hypotheses from
../shared/data), queued with ``searchapp ingest``; a real ``searchapp worker`` runs the
ingest and embed jobs; its resident memory (``VmRSS``) and peak (``VmHWM``) are read
from /proc when the embed job has ended, and again ``--rest`` + 15 s later (for both
workers). Then the parts, in a fresh process on that data folder, each added in turn:
the imports a worker makes, the encoder loaded, the corpus' index and passage index.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/worker_memory.py [--sizes 2000 20000]
Writes benchmarks/results/worker_memory.json (and prints the table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
RESULTS = ROOT / "benchmarks" / "results" / "worker_memory.json"

PARTS = r"""
import json, os, sys
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
out = {"python": rss()}
from searchapp.context import App
from searchapp.jobs import worker  # noqa: F401 - what `searchapp worker` imports
from searchapp.watching.keeper import Keeper  # noqa: F401
out["imports"] = rss()
app = App()
app.encoder(app.settings.model)
out["encoder"] = rss()
from searchapp.store import repo
with app.db.session() as s:
    state = repo.corpus_state(s, "bench")
ref = app.model_ref(state.model_name)
index, generation = app.indexes.get(state.id, ref, state.generation)
out["index"] = rss()
app.passage_indexes.get(state.id, ref, generation)
out["passage_index"] = rss()
print(json.dumps(out))
"""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def status_mb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of ``pid`` in MB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(line.split()[1]) // 1024
    return out


def corpus_state(env: dict) -> dict:
    proc = subprocess.run([sys.executable, "-m", "searchapp", "corpora", "--json"], env=env,
                          capture_output=True, text=True, timeout=300)
    rows = json.loads(proc.stdout or "[]")
    rows = rows.get("corpora", rows) if isinstance(rows, dict) else rows
    return next((r for r in rows if r.get("name") == "bench"), {})


def jobs_done(env: dict) -> bool:
    proc = subprocess.run([sys.executable, "-m", "searchapp", "jobs", "--json"], env=env,
                          capture_output=True, text=True, timeout=300)
    jobs = json.loads(proc.stdout or "{}")
    jobs = jobs.get("jobs", jobs) if isinstance(jobs, dict) else jobs
    return bool(jobs) and all(j["status"] not in ("queued", "running") for j in jobs)


def one_run(work: Path, csv: Path, rest: float, size: int, wait: float) -> dict:
    data = work / f"data-{size}-rest{int(rest)}"
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data), "SEARCHAPP_DEVICE": "cpu",
           "SEARCHAPP_WORKER_REST": str(rest), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "searchapp", "ingest", str(csv), "--corpus", "bench"],
                   env=env, check=True, capture_output=True, timeout=600)
    started = time.monotonic()
    with open(work / f"worker-{size}-{int(rest)}.log", "wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "searchapp", "worker"], env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        while not jobs_done(env):
            time.sleep(2)
            if worker.poll() is not None:
                raise SystemExit(f"the worker ended ({worker.returncode}); see its log")
        embedded_s = time.monotonic() - started
        after = status_mb(worker.pid)
        state = corpus_state(env)
        time.sleep(wait)  # the same wait for the worker that never rests
        later = status_mb(worker.pid)
    finally:
        worker.terminate()
        worker.wait(60)
    parts = subprocess.run([sys.executable, "-c", PARTS], env=env, capture_output=True,
                           text=True, timeout=600)
    result = {"rest_s": rest, "documents": state.get("documents"),
              "embedded": state.get("embedded"), "embed_s": round(embedded_s, 1),
              # a fresh start (exec) begins a new peak: the jobs' peak is the one read first
              "peak_mb": max(after["VmHWM"], later["VmHWM"]), "after_jobs_mb": after["VmRSS"],
              "later_mb": later["VmRSS"]}
    if parts.returncode == 0:
        result["parts_mb"] = json.loads(parts.stdout.strip().splitlines()[-1])
    else:
        result["parts_error"] = parts.stderr[-500:]
    return result


def main() -> None:
    from sentence_cache import first_sentences

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--rest", type=float, default=30.0, help="ours: idle seconds before rest")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="worker-memory-"))
    results = {"machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                           "load_before": os.getloadavg()}, "args": vars(args), "runs": []}
    try:
        for size in args.sizes:
            csv = work / f"sentences-{size}.csv"
            import pandas as pd
            pd.DataFrame({"id": range(size), "text": first_sentences(size)}).to_csv(
                csv, index=False)
            for rest in (args.rest, 0.0):
                log(f"{size:,} sentences, rest {'never' if not rest else f'{rest:g} s'}")
                run = {"size": size, **one_run(work, csv, rest, size, args.rest + 15)}
                log(f"  {run}")
                results["runs"].append(run)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["machine"]["load_after"] = os.getloadavg()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{'documents':>10} {'worker':>12} {'peak MB':>8} {'after jobs':>11} "
          f"{'rest+15 s':>12}")
    for run in results["runs"]:
        who = "ours (rests)" if run["rest_s"] else "never rests"
        print(f"{run['size']:>10,} {who:>12} {run['peak_mb']:>8} {run['after_jobs_mb']:>11} "
              f"{run['later_mb']:>12}")
    print("\nparts (MB, each added in turn):")
    for run in results["runs"]:
        if run["rest_s"] and "parts_mb" in run:
            print(f"{run['size']:>10,} {run['parts_mb']}")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
