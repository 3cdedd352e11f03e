"""The payload of the saved searches' job kind: what a request writes and the job reads.

Below both the request (``check.request_check``) and the declaration in ``job_kinds``,
so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SavedCheckPayload:
    """Check the saved searches of ``corpus`` against the documents that arrived since each
    one's last check (``saved.check``)."""

    corpus: str
