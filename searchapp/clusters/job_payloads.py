"""The payloads of the clusters job kinds: what a request writes and the job reads.

Below both the requests (which build them) and the declarations in ``job_kinds`` (which
run them), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClustersPayload:
    """``params``: the ClusterParams as a dict; ``key``: corpus and params, so the same
    request finds the job already queued (``queue.active_for``)."""

    corpus: str
    params: dict[str, Any] = field(default_factory=dict)
    key: str | None = None
