"""The payloads of the duplicates job kinds: what a request writes and the job reads.

Below both the requests (which build them) and the declarations in ``job_kinds`` (which
run them), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp.duplicates.params import DEFAULT_K
from searchapp.jobs.kinds import OPTIONAL


@dataclass
class DuplicatesPayload:
    """Mine ``corpus`` down to ``threshold`` (None: the model's) with ``k`` neighbours."""

    corpus: str
    threshold: float | None = None
    k: int = DEFAULT_K


@dataclass
class CalibratePayload:
    """Score the labelled pairs kept at ``path`` (known as ``filename``) with ``model``;
    ``save``: keep the threshold found as the model's."""

    model: str
    path: str
    filename: str | None = None
    save: bool = field(default=False, metadata=OPTIONAL)
