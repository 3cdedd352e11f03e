"""``searchapp search`` as a user runs it (a whole process): cold, and with a worker running.

On a corpus of real pages (the first ``--pages`` of Debian's PostgreSQL manual, HTML),
in the same run:

- ``cold``: nothing runs on the data folder; each ``searchapp search`` loads the model;
- ``worker``: ``searchapp worker`` runs on the folder (started here, its first answer,
  which loads the model in the worker, reported apart); each ``searchapp search`` is
  answered over ``DATA_DIR/run/query.sock``.

Each is timed from the process' start to its exit, p50 and p95 over ``--runs`` queries
(ten paraphrased questions, in turn). ``breakdown`` says where a cold search's seconds go:
the interpreter, the CLI's imports, the search service's imports (torch, transformers),
the App and database, the model's load, the corpus' index, the first and a second query.

Run:
    PYTHONPATH=. .venv/bin/python benchmarks/cli_search.py --pages 300 --runs 20
    (``--data-dir DIR`` keeps the ingested corpus for the next run)
Writes benchmarks/results/cli_search.json (and prints it).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MANUAL = "/usr/share/doc/postgresql-doc-*/html"
CORPUS = "pg"
QUERIES = ["how do I make a backup of a database while it keeps running",
           "give a user permission to read a table", "why is my query slow",
           "store a date with its time zone", "undo the changes of a transaction",
           "find rows whose text contains a word", "copy a table into a csv file",
           "how many connections may the server accept", "make a column unique",
           "upgrade the server to a new major version"]
STAGES = r"""
import sys, time, json
t = [time.perf_counter()]
import searchapp.cli.main
t.append(time.perf_counter())
from searchapp.search import service
t.append(time.perf_counter())
from searchapp.cli.common import one_query_app
from searchapp.vectors.handle import open_corpus
app = one_query_app()
with app.db.session() as s: pass
t.append(time.perf_counter())
handle = open_corpus(app, sys.argv[1])
t.append(time.perf_counter())
import torch, transformers.models.auto.modeling_auto
t.append(time.perf_counter())
app.encoder(handle.model.name)
t.append(time.perf_counter())
service.search(app, handle, sys.argv[2], k=5)
t.append(time.perf_counter())
service.search(app, handle, sys.argv[3], k=5)
t.append(time.perf_counter())
names = ["cli_imports", "search_service_imports", "app_and_database", "corpus_and_index",
         "torch_and_transformers_imports", "model_load", "first_query", "second_query"]
print(json.dumps({n: round(b - a, 3) for n, a, b in zip(names, t, t[1:])}))
"""


def env_for(data_dir: Path) -> dict:
    return {**os.environ, "SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu",
            "PYTHONPATH": str(ROOT)}


def searchapp(*args: str) -> list[str]:
    return [sys.executable, "-m", "searchapp", *args]


def prepare(data_dir: Path, pages: int) -> None:
    """The corpus ``pg``: the first ``pages`` pages of the manual, embedded (kept if there)."""
    env = env_for(data_dir)
    listed = subprocess.run(searchapp("corpora", "--json"), env=env, capture_output=True,
                            text=True, check=True).stdout
    if CORPUS in listed:
        return
    found = sorted(glob.glob(f"{MANUAL}/*.html"))[:pages]
    if not found:
        sys.exit(f"no pages under {MANUAL}: apt-get install postgresql-doc")
    pile = data_dir.parent / "pile"
    pile.mkdir(exist_ok=True)
    for page in found:
        shutil.copy(page, pile)
    subprocess.run(searchapp("ingest", str(pile), "--corpus", CORPUS, "--wait"), env=env,
                   check=True, stdout=subprocess.DEVNULL)


def time_search(env: dict, query: str) -> float:
    start = time.perf_counter()
    subprocess.run(searchapp("search", "--corpus", CORPUS, query, "-k", "5"), env=env,
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def spread(times: list[float]) -> dict:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_s": round(statistics.median(ordered), 3), "p95_s": round(p95, 3),
            "runs": len(ordered), "all_s": [round(t, 3) for t in times]}


def with_worker(data_dir: Path, runs: int) -> tuple[float, list[float]]:
    """(the first answer's seconds, the next ``runs`` searches' seconds) with a worker."""
    env = env_for(data_dir)
    worker = subprocess.Popen(searchapp("worker"), env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (data_dir / "run" / "query.sock").exists():
            if time.monotonic() > deadline or worker.poll() is not None:
                raise RuntimeError("the worker never listened on its socket")
            time.sleep(0.1)
        first = time_search(env, QUERIES[0])
        return first, [time_search(env, QUERIES[i % len(QUERIES)]) for i in range(runs)]
    finally:
        os.kill(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)


def breakdown(data_dir: Path) -> dict:
    """Where a cold search's seconds go (one process, stage by stage)."""
    env = env_for(data_dir)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    interpreter = time.perf_counter() - start
    out = subprocess.run([sys.executable, "-c", STAGES, CORPUS, QUERIES[1], QUERIES[2]],
                         env=env, check=True, capture_output=True, text=True).stdout
    return {"interpreter": round(interpreter, 3), **json.loads(out.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--runs", type=int, default=20, help="searches with a worker running")
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--data-dir", help="keep the corpus here between runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(args.data_dir or Path(tmp) / "data")
        data_dir.mkdir(parents=True, exist_ok=True)
        prepare(data_dir, args.pages)
        env = env_for(data_dir)
        cold = [time_search(env, QUERIES[i % len(QUERIES)]) for i in range(args.cold_runs)]
        first, warm = with_worker(data_dir, args.runs)
        stages = breakdown(data_dir)
    result = {"pages": args.pages, "cold": spread(cold), "worker": spread(warm),
              "worker_first_answer_s": round(first, 3),
              "ratio_cold_over_worker_p50": round(statistics.median(cold)
                                                  / statistics.median(warm), 1),
              "cold_breakdown_s": stages, "cpus": os.cpu_count(),
              "load_average": [round(x, 1) for x in os.getloadavg()]}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cli_search.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
