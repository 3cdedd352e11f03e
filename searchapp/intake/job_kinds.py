"""The intake's job kind, declared once: ``ingest`` (files, folders and archives read into a
corpus; ``files_job``).

Example:
    >>> parse_payload(INGEST, {"corpus": "faq", "paths": ["/data/faq"], "model": "m"}).sync
    False
"""

from __future__ import annotations

from searchapp.intake.job_payloads import IngestPayload
from searchapp.jobs.kinds import declare, parse_payload  # noqa: F401 - doctest
from searchapp.jobs.tasks import TaskContext


def _ingest(ctx: TaskContext, payload: IngestPayload) -> dict:
    from searchapp.intake.files_job import ingest_task

    return ingest_task(ctx, payload)


INGEST = declare("ingest", unit="files", payload=IngestPayload, run=_ingest, doing="Reading")
