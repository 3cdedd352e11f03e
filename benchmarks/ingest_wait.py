"""``searchapp ingest --wait`` against the worker, on the same files, in the same run.

Both are whole processes as a user starts them, each on a data folder of its own:

- ``cli``: ``searchapp ingest PILE --corpus pile --wait``, timed from start to exit;
- ``worker``: ``searchapp worker`` started first and left to load (not timed, as the app's
  worker is running before the upload), then ``searchapp ingest PILE --corpus pile`` and the
  time until the queue holds no unfinished job (the jobs table, polled).

The worker runs at niceness 10 (``jobs.worker.yield_to_searches``: searches first) and the
command at the shell's, so on a machine others use too the worker gets the smaller share
of the cores; ``jobs_s`` says how long each job ran and waited to be claimed.

The runs alternate (cli, worker, then worker, cli, ...) so a change in the machine's load
falls on both. The pile: the first ``--files`` pages of Debian's PostgreSQL manual (HTML).

Run:
    PYTHONPATH=. .venv/bin/python benchmarks/ingest_wait.py --files 120 --rounds 1
Writes benchmarks/results/ingest_wait.json (and prints it).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MANUAL = "/usr/share/doc/postgresql-doc-*/html"


def pile(folder: Path, files: int) -> Path:
    """A folder holding the first ``files`` pages of the PostgreSQL manual (sorted names)."""
    pages = sorted(glob.glob(f"{MANUAL}/*.html"))[:files]
    if not pages:
        sys.exit(f"no pages under {MANUAL}: apt-get install postgresql-doc")
    target = folder / "pile"
    target.mkdir()
    for page in pages:
        shutil.copy(page, target)
    return target


def env_for(data_dir: Path) -> dict:
    return {**os.environ, "SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu",
            "PYTHONPATH": str(ROOT)}


def searchapp(*args: str) -> list[str]:
    return [sys.executable, "-m", "searchapp", *args]


def time_cli(data_dir: Path, files: Path) -> float:
    start = time.perf_counter()
    subprocess.run(searchapp("ingest", str(files), "--corpus", "pile", "--wait"),
                   env=env_for(data_dir), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_worker(data_dir: Path, files: Path) -> float:
    env = env_for(data_dir)
    worker = subprocess.Popen(searchapp("worker"), env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: (data_dir / "worker.pid").is_file()
                 and (data_dir / "worker.pid").read_text().strip() == str(worker.pid))
        start = time.perf_counter()
        subprocess.run(searchapp("ingest", str(files), "--corpus", "pile"), env=env, check=True,
                       stdout=subprocess.DEVNULL)
        wait_for(lambda: all_done(data_dir), poll=0.5)
        return time.perf_counter() - start
    finally:
        os.kill(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)


def all_done(data_dir: Path) -> bool:
    """Whether the jobs table holds jobs and none is unfinished (read with sqlite3 here: a
    ``searchapp jobs`` process per poll would take CPU from the worker being timed)."""
    with sqlite3.connect(f"file:{data_dir / 'searchapp.db'}?mode=ro", uri=True) as db:
        statuses = [s for (s,) in db.execute("SELECT status FROM jobs")]
    return bool(statuses) and all(s not in ("queued", "running") for s in statuses)


def job_seconds(data_dir: Path) -> dict[str, float]:
    """{kind: seconds from its start to its end} of the folder's jobs: where the time went."""
    with sqlite3.connect(f"file:{data_dir / 'searchapp.db'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT kind, julianday(finished_at) - julianday(started_at), "
                          "julianday(started_at) - julianday(created_at) FROM jobs").fetchall()
    seconds = {}
    for kind, ran, waited in rows:
        seconds[f"{kind}_ran"] = round((ran or 0) * 86400, 2)
        seconds[f"{kind}_waited"] = round((waited or 0) * 86400, 2)
    return seconds


def wait_for(condition, timeout: float = 1800, poll: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("gave up waiting")
        time.sleep(poll)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--label", default="", help="a name for this measurement in the JSON")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"cli": [], "worker": []}
    jobs: dict[str, list[dict]] = {"cli": [], "worker": []}
    with tempfile.TemporaryDirectory() as tmp:
        files = pile(Path(tmp), args.files)
        for n in range(args.rounds):
            order = (("cli", time_cli), ("worker", time_worker))
            for name, run in order if n % 2 == 0 else order[::-1]:  # cli first, then worker
                folder = Path(tmp) / f"{name}-{n}"
                times[name].append(round(run(folder, files), 2))
                jobs[name].append(job_seconds(folder))
                print(name, times[name][-1], jobs[name][-1], flush=True)
    cli, worker = statistics.median(times["cli"]), statistics.median(times["worker"])
    result = {"files": args.files, "rounds": args.rounds, "label": args.label,
              "cli_ingest_wait_s": times["cli"], "worker_s": times["worker"],
              "median_cli_s": cli, "median_worker_s": worker, "jobs_s": jobs,
              "ratio_cli_over_worker": round(cli / worker, 2), "cpus": os.cpu_count(),
              "load_average": os.getloadavg()}
    RESULTS.mkdir(exist_ok=True)
    name = f"ingest_wait{'_' + args.label if args.label else ''}.json"
    (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
