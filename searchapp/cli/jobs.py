"""``searchapp jobs`` and ``searchapp worker``: the queue listed, cancelled and worked.

Example:
    $ searchapp jobs
    $ searchapp jobs cancel 12
    $ searchapp worker
"""

from __future__ import annotations

import argparse
import logging

from searchapp.cli import common
from searchapp.cli.common import count, row_id
from searchapp.cli.output import print_json, print_table
from searchapp.errors import SearchAppError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``jobs`` and ``worker`` to the command parser."""
    c = sub.add_parser("jobs", help="list jobs; `jobs cancel ID` cancels one")
    c.add_argument("action", nargs="?", choices=["list", "cancel"], default="list")
    c.add_argument("job_id", nargs="?", type=row_id)
    c.add_argument("--limit", type=count, default=20)
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=jobs)

    c = sub.add_parser("worker", help="run background jobs until stopped (and answer "
                       "`searchapp search` on this data folder with its loaded model)")
    c.add_argument("--once", action="store_true", help="run what is queued, then exit")
    c.set_defaults(func=worker)


def jobs(args: argparse.Namespace) -> int:
    from searchapp.jobs import queue

    app = common.open_app()
    if args.action == "cancel":
        if args.job_id is None:
            raise SearchAppError("Say which job to cancel: searchapp jobs cancel ID")
        job = queue.cancel(app.db, args.job_id)
        print(f"Job {job.id}: {'cancelled' if job.finished else 'cancel requested'}.")
        return 0
    rows = [job_row(j) for j in queue.recent(app.db, args.limit)]
    if args.json:
        print_json({"jobs": rows})
    elif not rows:
        print("No jobs yet.")
    else:
        print_table(rows, ["id", "kind", "status", "progress", "rate", "left", "created",
                           "detail"])
    return 0


def job_row(job) -> dict:
    """One row of `searchapp jobs`: a running job's rate and time left in their own columns."""
    from searchapp.jobs.horizon import SEPARATOR, split_message

    text, horizon = split_message(job.message) if not job.finished else (job.message, "")
    rate, _, left = horizon.partition(SEPARATOR)
    return {"id": job.id, "kind": job.kind, "status": job.status,
            "progress": f"{job.progress_done}/{job.progress_total}", "rate": rate,
            "left": left.removeprefix("about ").removesuffix(" left"),
            "created": job.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "detail": (job.error or text or "")[:70]}


def worker(args: argparse.Namespace) -> int:
    from searchapp.jobs.worker import serve, work

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    app = common.open_app()
    if args.once:
        print(f"Ran {work(app, stop_when_idle=True)} jobs.")
        return 0
    from searchapp.search.query_server import QueryServer
    from searchapp.watching.keeper import Keeper

    # beside the jobs: the watched folders kept in step, and `searchapp search` answered
    # with the loaded model (DATA_DIR/run/query.sock); idle, the process starts afresh
    queries = QueryServer(lambda: app, app.settings.data_dir)
    serve(app, companions=[Keeper(app).run, queries.run], start_afresh=True)
    return 0
