"""The default clusters job on a million documents: time per step and memory, with the tree's
leaves fitted on a sample (now) against fitted on every row (before), same data, same run.

Data: the 1M corpus of ``query_latency.py --parts synthetic --synthetic-docs 1000000``
(real texts, synthetic clustered vectors; its data folder is reused). Each run deletes
the stored result, queues the ``clusters`` job (auto, PCA map) and works it here as the
worker would, reading its progress messages; "before" sets ``hierarchy.SPLIT_SAMPLE`` so
high that every cluster is split on all its rows, as before the change. Peak memory is
this process' maximum resident size after each run (it only grows: the second run's
figure covers both).

Run:  PYTHONPATH=. nice .venv/bin/python benchmarks/clusters_1m.py
Writes benchmarks/results/clusters_1m.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE / ".cache" / "query-latency" / "app"
RESULTS = HERE / "results" / "clusters_1m.json"


def run(app, corpus: str, split_sample: int) -> dict:
    from searchapp.clusters import ClusterParams, hierarchy, request_clusters
    from searchapp.jobs.worker import run_until_done
    from searchapp.store import repo
    from searchapp.store.schema import Analysis

    params = ClusterParams(projection="pca").validated()
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        s.execute(Analysis.__table__.delete().where(
            Analysis.corpus_id == state.id, Analysis.kind == "clusters"))
    app.memo.clear()
    hierarchy.SPLIT_SAMPLE = split_sample
    messages: list[str] = []
    started = time.perf_counter()
    _, job_id = request_clusters(app, corpus, params)
    job = run_until_done(app, job_id, lambda j: messages.append(j.message or ""))
    wall = time.perf_counter() - started
    result, _ = request_clusters(app, corpus, params)
    return {"split_sample": split_sample, "status": job.status, "job_seconds": round(wall, 1),
            "steps": result.seconds, "clusters": len(result.clusters),
            "levels": result.level_counts, "progress_messages": len(set(messages)),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--corpus", default="synthetic1000000")
    args = parser.parse_args()
    os.environ["SEARCHAPP_DATA_DIR"] = str(args.data)
    from searchapp.clusters import hierarchy
    from searchapp.context import App

    app = App()
    now = run(app, args.corpus, hierarchy.SPLIT_SAMPLE)
    print(f"now:    {now['job_seconds']} s, steps {now['steps']}", flush=True)
    before = run(app, args.corpus, 10**12)
    print(f"before: {before['job_seconds']} s, steps {before['steps']}", flush=True)
    out = {"corpus": args.corpus, "cpus": os.cpu_count(), "load": os.getloadavg(),
           "when": time.strftime("%Y-%m-%d %H:%M"), "now": now, "before": before,
           "before_over_now": round(before["job_seconds"] / now["job_seconds"], 2)}
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(f"before / now: {out['before_over_now']}×; wrote {RESULTS}")


if __name__ == "__main__":
    main()
