"""The clusters' job kind, declared once: ``clusters`` (cluster a corpus, store the result).

Example:
    >>> CLUSTERS.submit(app.db, ClustersPayload("faq", asdict(params), key))  # doctest: +SKIP
"""

from __future__ import annotations

from searchapp.clusters.job_payloads import ClustersPayload
from searchapp.jobs.kinds import declare
from searchapp.jobs.tasks import TaskContext


def _clusters(ctx: TaskContext, payload: ClustersPayload) -> dict:
    from searchapp.clusters.service import clusters_task

    return clusters_task(ctx, payload)


CLUSTERS = declare("clusters", unit="documents", payload=ClustersPayload, run=_clusters,
                   doing="Clustering")
