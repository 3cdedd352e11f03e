"""The payloads of the evaluation job kinds: what a request writes and the job reads.

Below both the requests (which build them) and the declarations in ``job_kinds`` (which
run them), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp.jobs.kinds import OPTIONAL


@dataclass
class EvaluatePayload:
    """Measure ``model`` on ``corpus``: on its judgements, or on the copies of the
    benchmark files ``queries`` and ``qrels``; ``note`` says which, in the result."""

    corpus: str
    model: str
    queries: str | None = field(default=None, metadata=OPTIONAL)
    qrels: str | None = field(default=None, metadata=OPTIONAL)
    note: str = ""


@dataclass
class FitFusionPayload:
    """Fit the fusion of ``corpus`` with ``model`` (None: the corpus' own)."""

    corpus: str
    model: str | None = None
