"""The payloads of the backups job kinds: what a request writes and the job reads.

Below both the requests (which build them) and the declarations in ``job_kinds`` (which
run them), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BackupPayload:
    """``name``: the snapshot's name (None: one made when the job starts)."""

    name: str | None = None
