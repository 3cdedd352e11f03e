"""The corpora's job kind, declared once: ``embed`` (the ``ingest`` kind is the intake's).

Example:
    >>> parse_payload(EMBED, {"corpus": "faq", "model": "m"}).switch
    False
"""

from __future__ import annotations

from searchapp.corpora.job_payloads import EmbedPayload
from searchapp.jobs.kinds import OPTIONAL, declare, parse_payload  # noqa: F401 - doctest
from searchapp.jobs.tasks import TaskContext


def _embed(ctx: TaskContext, payload: EmbedPayload) -> dict:
    from searchapp.corpora.embed_job import embed_corpus

    return embed_corpus(ctx, payload)


EMBED = declare("embed", unit="documents", payload=EmbedPayload, run=_embed, doing="Embedding")
