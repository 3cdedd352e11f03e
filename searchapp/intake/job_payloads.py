"""The payload of the ``ingest`` job: what a request writes and the job reads.

Below both the request (``files_job.request_ingest``) and the declaration in
``job_kinds`` (which runs it), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp.jobs.kinds import OPTIONAL


@dataclass
class IngestPayload:
    """Read ``paths`` (files, folders, archives) into ``corpus`` (``corpora.files_job``).

    ``sync``: remove what is gone from the paths; ``staged``: the folder of uploaded
    files the job owns, with their ``names``, the report's ``notes`` and the uploaded
    files ``skipped`` unread (problems the report lists: path, reason, kind); ``overlap``:
    embed while reading. A watched folder's sync carries its id (``watch``), its
    ``include``/``exclude`` globs, ``settle`` seconds, ``device`` and the ``roots``
    it must stay under.
    """

    corpus: str
    paths: list[str]
    model: str
    sync: bool = False
    staged: str | None = None
    overlap: bool = True
    names: dict[str, str] = field(default_factory=dict, metadata=OPTIONAL)
    notes: list[str] = field(default_factory=list, metadata=OPTIONAL)
    skipped: list[dict[str, str]] = field(default_factory=list, metadata=OPTIONAL)
    watch: int | None = field(default=None, metadata=OPTIONAL)
    include: list[str] | None = field(default=None, metadata=OPTIONAL)
    exclude: list[str] | None = field(default=None, metadata=OPTIONAL)
    settle: float | None = field(default=None, metadata=OPTIONAL)
    device: str | None = field(default=None, metadata=OPTIONAL)
    roots: list[str] | None = field(default=None, metadata=OPTIONAL)
