"""The corpora's job kinds, declared once: ``embed`` and ``ingest``.

Example:
    >>> EMBED.submit(app.db, EmbedPayload(corpus="faq"))       # doctest: +SKIP
    >>> parse_payload(INGEST, {"corpus": "faq", "paths": ["/data/faq"], "model": "m"}).sync
    False
"""

from __future__ import annotations

from searchapp.corpora.job_payloads import EmbedPayload
from searchapp.jobs.kinds import OPTIONAL, declare, parse_payload  # noqa: F401 - doctest
from searchapp.jobs.tasks import TaskContext


def _embed(ctx: TaskContext, payload: EmbedPayload) -> dict:
    from searchapp.corpora.embed_job import embed_corpus

    return embed_corpus(ctx, payload)


EMBED = declare("embed", unit="documents", payload=EmbedPayload, run=_embed)
