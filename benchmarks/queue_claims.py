"""Queue claims with 8 worker processes on PostgreSQL: SKIP LOCKED against compare-and-set.

A throwaway PostgreSQL server (``tests/postgres.py``; Debian's ``postgresql``
package and psycopg needed) gets N queued jobs; 8 worker processes start at
one barrier and each claims and finishes jobs until the queue is empty. Peer:
the portable compare-and-set claim (``queue.claim_compare_and_set``: read the
candidates, ``UPDATE ... WHERE`` unchanged, retry on the next when another
worker won). Ours on PostgreSQL: ``queue.claim_skip_locked`` (``SELECT ... FOR
UPDATE SKIP LOCKED LIMIT 1``). The same in the same run, on fresh databases of
the same server; the SQLite compare-and-set (the default store) for reference.

Reported per method: jobs per second (a claim plus its finish, as a worker
does), double claims (a job claimed by two workers, or with attempts > 1),
jobs never claimed, and how the jobs spread over the workers.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/queue_claims.py --jobs 2000 --workers 8
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from sqlalchemy import insert, select

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from searchapp.jobs import queue  # noqa: E402
from searchapp.store.db import Database  # noqa: E402
from searchapp.store.schema import Job, utcnow  # noqa: E402
from tests.claimers import claim_until_empty  # noqa: E402
from tests.claimers import start as start_processes  # noqa: E402
from tests.postgres import PostgresServer, unavailable_reason  # noqa: E402

TIMEOUT = 1800.0


def fill(url: str, jobs: int) -> None:
    db = Database(url)
    with db.session() as s:
        s.execute(insert(Job), [{"kind": "embed", "status": "queued", "payload": {"n": i},
                                 "progress_done": 0, "progress_total": 0,
                                 "cancel_requested": False, "attempts": 0,
                                 "created_at": utcnow()} for i in range(jobs)])
    db.dispose()


def run(url: str, jobs: int, workers: int, claim) -> dict:
    """Fill the queue, let ``workers`` processes empty it with ``claim``; what happened."""
    fill(url, jobs)
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(workers + 1), ctx.Queue()
    procs = [ctx.Process(target=claim_until_empty, args=(url, f"bench:{i}", start, out, claim))
             for i in range(workers)]
    start_processes(procs)
    start.wait(TIMEOUT)
    began = time.perf_counter()
    reports = [out.get(timeout=TIMEOUT) for _ in procs]
    wall = time.perf_counter() - began
    for p in procs:
        p.join(timeout=60)
    claimed = [j for _, got, _ in reports for j in got]
    db = Database(url)
    with db.session() as s:
        rows = s.execute(select(Job.id, Job.attempts, Job.status)).all()
    db.dispose()
    twice = sum(n - 1 for n in Counter(claimed).values() if n > 1)
    return {
        "jobs": jobs, "workers": workers, "seconds": round(wall, 3),
        "jobs_per_second": round(jobs / wall, 1),
        "double_claims": twice + sum(1 for _, a, _ in rows if a != 1),
        "never_claimed": sum(1 for _, _, st in rows if st != "succeeded"),
        "per_worker": sorted((len(got) for _, got, _ in reports), reverse=True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--out", default=str(HERE / "results" / "queue_claims_postgres.json"))
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        sys.exit(f"cannot run: {reason}")
    load_before = os.getloadavg()
    results = {}
    with PostgresServer.start() as server:
        for name, claim in (("postgres_compare_and_set", queue.claim_compare_and_set),
                            ("postgres_skip_locked", queue.claim_skip_locked)):
            results[name] = run(server.create_database(), args.jobs, args.workers, claim)
            print(name, results[name], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        name = "sqlite_compare_and_set"
        results[name] = run(f"sqlite:///{tmp}/q.db", args.jobs, args.workers,
                            queue.claim_compare_and_set)
        print(name, results[name], flush=True)
    ours, peer = results["postgres_skip_locked"], results["postgres_compare_and_set"]
    ratio = round(ours["jobs_per_second"] / peer["jobs_per_second"], 2)
    print(f"PostgreSQL, {args.workers} workers: SKIP LOCKED {ours['jobs_per_second']} jobs/s, "
          f"compare-and-set {peer['jobs_per_second']} jobs/s: {ratio}x; double claims "
          f"{ours['double_claims']} / {peer['double_claims']}")
    out = {"benchmark": "queue_claims", "cpus": os.cpu_count(),
           "load_before": [round(x, 1) for x in load_before],
           "load_after": [round(x, 1) for x in os.getloadavg()],
           "ratio_skip_locked_over_compare_and_set": ratio, "results": results}
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
