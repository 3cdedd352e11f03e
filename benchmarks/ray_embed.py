"""Embedding through Ray actors against the plain worker, on this machine's local cluster.

The bundled sample corpus (3,025 image captions, repeated ``--copies`` times
with the copy number appended, so every text is new) is uploaded once per run
into one SQLite database. The peer is the plain worker: the ``embed`` job run
in this process. Ours: the same job with ``"engine": "ray"`` on a local Ray
cluster started in this process with the machine's CPUs, as 1 actor with all
CPUs and as one actor per CPU. Two rates each: "cold" (the whole call; model
load included, for Ray also the actors' start) and "steady" (the plain
worker's second run, its model loaded; for Ray the documents committed between
the first and the last block's report over that time). The cluster's own
start is reported apart. Both write through the same store
functions; vector agreement is the cosine between the two corpora's vectors of
each caption. The plain worker runs again after the Ray runs (the first run
pays for cold caches), and ``OMP_WAIT_POLICY=PASSIVE`` is set for every process
(this script, and through it the Ray workers): on a shared, busy machine
torch's spinning threads otherwise decide the result, not the engine.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/ray_embed.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads its OpenMP runtime
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from searchapp.config import Settings  # noqa: E402
from searchapp.context import App  # noqa: E402
from searchapp.corpora import service as corpora  # noqa: E402
from searchapp.corpora.ray_embed import RayOptions, run_embed  # noqa: E402
from searchapp.intake.ingest import read_table  # noqa: E402
from searchapp.jobs import queue  # noqa: E402
from searchapp.jobs.worker import run_until_done  # noqa: E402
from tests.helpers import vectors_by_external_id as vectors  # noqa: E402

SAMPLE = HERE.parent / "searchapp" / "sample" / "captions.csv.gz"


def copies_of(table, copies: int):
    """The sample repeated ``copies`` times, ids and texts made unique per copy."""
    import pandas as pd

    frames = []
    for c in range(copies):
        f = table.frame.copy()
        f["id"] = f["id"] + f"-{c}"
        f["text"] = f["text"] + (f" ({c})" if c else "")
        frames.append(f)
    table.frame = pd.concat(frames, ignore_index=True)
    return table


def fresh_corpus(app: App, table, name: str) -> int:
    """Upload ``table`` as corpus ``name``; its queued embed job is cancelled (we run it)."""
    summary = corpora.upload(app, table, name)
    queue.cancel(app.db, summary.job_id)
    return summary.added


def plain_run(app: App, table, name: str, runs: dict, label: str) -> int:
    """The plain worker: the embed job in this process (model load included once)."""
    n = fresh_corpus(app, table, name)
    started = time.perf_counter()
    job = run_until_done(app, corpora.request_embed(app, name))
    seconds = time.perf_counter() - started
    assert job.status == "succeeded", job.error
    runs[label] = {"seconds": round(seconds, 2), "sentences_per_s": round(n / seconds, 1),
                   "speed_path": app.encoder(app.settings.model).speed_path}
    print(label, runs[label], flush=True)
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(HERE / "results" / "ray_embed.json"))
    parser.add_argument("--copies", type=int, default=4)
    args = parser.parse_args()
    import ray

    cpus = os.cpu_count() or 1
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SEARCHAPP_DATA_DIR"] = tmp
        app = App(Settings.from_env())
        table = copies_of(read_table(SAMPLE), args.copies)
        runs = {}
        n = plain_run(app, table, "plain", runs, "plain_worker")
        started = time.perf_counter()
        ray.init(address="local", num_cpus=cpus, include_dashboard=False,
                 log_to_driver=False)
        cluster_start = time.perf_counter() - started
        plain = vectors(app, "plain")
        for label, options in (
                (f"ray_1_actor_{cpus}_cpus", RayOptions(address=None, cpus_per_actor=cpus)),
                (f"ray_{cpus}_actors_1_cpu", RayOptions(address=None, cpus_per_actor=1))):
            name = label.replace("_", "-")
            fresh_corpus(app, table, name)
            reports: list[tuple[float, int]] = []
            started = time.perf_counter()
            result = run_embed(app, name, options, progress=lambda done, total, message,
                               into=reports: into.append((time.perf_counter(), done)))
            seconds = time.perf_counter() - started
            (t0, d0), (t1, d1) = reports[1], reports[-1]  # first and last committed block
            got = vectors(app, name)
            cosines = np.array([float(plain[k] @ got[k]) for k in plain])
            runs[label] = {"seconds": round(seconds, 2), "sentences_per_s": round(n / seconds, 1),
                           "steady_sentences_per_s": round((d1 - d0) / (t1 - t0), 1),
                           "actors": result["actors"], "embedded": result["embedded"],
                           "min_cosine_to_plain": round(float(cosines.min()), 6),
                           "mean_cosine_to_plain": round(float(cosines.mean()), 6),
                           "same_documents": plain.keys() == got.keys()}
            print(label, runs[label], flush=True)
        ray.shutdown()
        plain_run(app, table, "plain-again", runs, "plain_worker_again")
        again = vectors(app, "plain-again")
        runs["plain_worker_again"]["min_cosine_to_plain"] = round(min(
            float(plain[k] @ again[k]) for k in plain), 6)
        app.db.dispose()
    cold = runs["plain_worker"]["sentences_per_s"]
    steady = runs["plain_worker_again"]["sentences_per_s"]
    for label, run in runs.items():
        if label.startswith("ray"):
            run["cold_ratio_to_plain_worker"] = round(run["sentences_per_s"] / cold, 2)
            run["steady_ratio_to_plain_worker"] = round(run["steady_sentences_per_s"] / steady, 2)
            print(f"{label}: cold {run['sentences_per_s']} sentences/s against the plain "
                  f"worker's {cold} ({run['cold_ratio_to_plain_worker']}x), steady "
                  f"{run['steady_sentences_per_s']} against {steady} "
                  f"({run['steady_ratio_to_plain_worker']}x); min cosine "
                  f"{run['min_cosine_to_plain']}")
    out = {"benchmark": "ray_embed", "documents": n, "cpus": cpus,
           "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
           "cold": "whole call, model load (and actor start) included",
           "steady": "plain: second run, model loaded; ray: between first and last block",
           "ray_cluster_start_s": round(cluster_start, 2),
           "load_before": [round(x, 1) for x in load_before],
           "load_after": [round(x, 1) for x in os.getloadavg()], "runs": runs}
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
