"""What every command shares: the App it works on and running a job to its end here.

Commands call ``common.open_app()`` (tests replace it to share a loaded
encoder). A command that needs a job's result runs the queue in its own
process until that job ends (``run_job``), so ``--wait`` needs no worker.

Example:
    >>> app = open_app()                                        # doctest: +SKIP
    >>> run_job(app, "embed job 1")(1)                          # doctest: +SKIP
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from searchapp.cli.output import progress_printer
from searchapp.errors import JobError


def open_app():
    """The App of this command (settings from the environment)."""
    from searchapp.context import App

    return App()


def one_query_app():
    """The App of a command that encodes one query and ends (``searchapp search`` with nothing
    running to ask): with ``SEARCHAPP_PRECISION`` auto, its model loads in float32.

    On a CPU with bf16, ``auto`` checks bf16 against float32 on probe texts and times a query
    on both as the model loads (6-13 s on a busy 2-core machine, 0.2 s for float32 alone,
    ``benchmarks/cli_search.py``); that choice is for batches of documents. A query may
    always go on float32, the reference the probe compares with, so one query pays nothing
    for a choice it would not use. An App given by a test (an encoder installed) is kept.

    Example:
        >>> one_query_app().settings.precision                       # doctest: +SKIP
        'fp32'
    """
    from dataclasses import replace

    app = open_app()
    if app.settings.precision == "auto" and not app.loaded_models:
        app.settings = replace(app.settings, precision="fp32")
    return app


def run_job(app, label: str) -> Callable[[int], None]:
    """A function that works the queue here until job ``job_id`` ends, printing progress.

    It raises JobError (printed as one ``error:`` line, exit code 1) when the job
    does not succeed.
    """
    from searchapp.jobs.worker import run_until_done

    def run(job_id: int) -> None:
        job = run_until_done(app, job_id, progress_printer(f"{label} {job_id}"))
        if job.status != "succeeded":
            raise JobError(f"job {job.id} {job.status}: {job.error or job.message or ''}"
                           .rstrip())

    return run


def job_result(app, job_id: int) -> dict:
    """The stored result of a finished job (empty when it has none)."""
    from searchapp.jobs import queue

    return queue.get(app.db, job_id).result or {}


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1, else a usage error naming it."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def row_id(text: str) -> int:
    """An argparse type: an id the database can hold (1 to 2^63 - 1), else a usage error.

    Example:
        >>> row_id("12")
        12
        >>> row_id("99999999999999999999")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: '99999999999999999999' is not an id: use a whole number ...
    """
    return _whole(text, 1, "an id")


def count(text: str) -> int:
    """An argparse type: how many to show, 0 to 2^63 - 1, else a usage error.

    Example:
        >>> count("0"), count("20")
        (0, 20)
    """
    return _whole(text, 0, "a count")


def _whole(text: str, low: int, what: str) -> int:
    from searchapp.store.failures import MAX_INTEGER

    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if not low <= value <= MAX_INTEGER:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {what}: use a whole number from {low} to {MAX_INTEGER}")
    return value
