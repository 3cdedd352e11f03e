"""The clusters' job kind, declared once: ``clusters`` (cluster a corpus, store the result).

Example:
    >>> CLUSTERS.submit(app.db, ClustersPayload("faq", asdict(params), key))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from searchapp.jobs.kinds import declare
from searchapp.jobs.tasks import TaskContext


@dataclass
class ClustersPayload:
    """``params``: the ClusterParams as a dict; ``key``: corpus and params, so the same
    request finds the job already queued (``queue.active_for``)."""

    corpus: str
    params: dict[str, Any] = field(default_factory=dict)
    key: str | None = None


def _clusters(ctx: TaskContext, payload: ClustersPayload) -> dict:
    from searchapp.clusters.service import clusters_task

    return clusters_task(ctx, payload)


CLUSTERS = declare("clusters", unit="documents", payload=ClustersPayload, run=_clusters)
