"""``searchapp jobs`` and ``searchapp worker``: the queue listed, cancelled and worked.

An ingest job names every file it did not read, with why and what to do: `jobs show
ID` lists them, and `jobs --json` carries them as each job's ``failures``.

Example:
    $ searchapp jobs
    $ searchapp jobs show 12
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
    c = sub.add_parser("jobs", help="list jobs; `jobs show ID` shows one with every file it "
                       "did not read; `jobs cancel ID` cancels one")
    c.add_argument("action", nargs="?", choices=["list", "show", "cancel"], default="list")
    c.add_argument("job_id", nargs="?", type=row_id)
    c.add_argument("--limit", type=count, default=20)
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=jobs)

    c = sub.add_parser("worker", help="run background jobs until stopped (and answer "
                       "`searchapp search` on this data folder with its loaded model)")
    c.add_argument("--once", action="store_true", help="run what is queued, then exit")
    c.set_defaults(func=worker)


def jobs(args: argparse.Namespace) -> int:
    from searchapp.intake.report import problems_of
    from searchapp.jobs import queue

    app = common.open_app()
    if args.action == "cancel":
        if args.job_id is None:
            raise SearchAppError("Say which job to cancel: searchapp jobs cancel ID")
        job = queue.cancel(app.db, args.job_id)
        print(f"Job {job.id}: {'cancelled' if job.finished else 'cancel requested'}.")
        return 0
    if args.action == "show":
        if args.job_id is None:
            raise SearchAppError("Say which job to show: searchapp jobs show ID")
        show(queue.get(app.db, args.job_id), args.json)
        return 0
    recent = queue.recent(app.db, args.limit)
    rows = [job_row(j) for j in recent]
    for row, job in zip(rows, recent, strict=True):  # the table says where the names are
        if missing := len(problems_of(job)):
            row["detail"] = f"{missing:,} not read: jobs show {job.id} · {row['detail']}"[:70]
    if args.json:
        print_json({"jobs": [{**job_row(j), "failures": problems_of(j)} for j in recent]})
    elif not rows:
        print("No jobs yet.")
    else:
        print_table(rows, ["id", "kind", "status", "progress", "rate", "left", "created",
                           "detail"])
    return 0


def show(job, as_json: bool = False) -> None:
    """One job: status, progress, times, its outcome and every file it did not read."""
    from searchapp.intake.report import of_job, problem_line, problems_of

    failures = problems_of(job)
    if as_json:
        print_json({"job": {**job_detail(job), "failures": failures}})
        return
    target = " · ".join(f"{k} {job.payload[k]!r}" for k in ("corpus", "model", "name")
                        if k in job.payload)
    print(f"Job {job.id}: {job.kind}{' · ' + target if target else ''} · {job.status}")
    times = [f"created {job.created_at:%Y-%m-%d %H:%M:%S}"]
    if job.started_at and job.finished_at:
        times.append(f"ran {(job.finished_at - job.started_at).total_seconds():.0f} s")
    print(f"{' · '.join(times)} · progress {job.progress_done:,}/{job.progress_total:,}")
    report = of_job(job)
    if job.error:
        print(f"Error: {job.error}")
    elif report is not None:
        print(report.describe())
    elif job.message:
        print(job.message)
    if failures:
        print(f"Files not read ({len(failures):,}):")
        for p in failures:
            print(f"  {problem_line(p)} [{p['kind']}]")
    for note in report.notes if report else []:
        print(f"  note: {note}")


def job_detail(job) -> dict:
    """A job as `jobs show --json` prints it (the API's job has the same keys)."""
    return {"id": job.id, "kind": job.kind, "status": job.status,
            "progress_done": job.progress_done, "progress_total": job.progress_total,
            "message": job.message, "error": job.error,
            "cancel_requested": job.cancel_requested, "created_at": job.created_at,
            "started_at": job.started_at, "finished_at": job.finished_at,
            "payload": dict(job.payload or {}), "result": job.result}


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
    from searchapp.answers.service import answer_request
    from searchapp.search.query_server import QueryServer
    from searchapp.watching.keeper import Keeper

    # beside the jobs: the watched folders kept in step, and `searchapp search` answered
    # with the loaded model (DATA_DIR/run/query.sock); idle, the process starts afresh
    queries = QueryServer(lambda: app, app.settings.data_dir, answer_request)
    serve(app, companions=[Keeper(app).run, queries.run], start_afresh=True)
    return 0
