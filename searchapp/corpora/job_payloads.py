"""The payloads of the corpora job kinds: what a request writes and the job reads.

Below both the requests (which build them) and the declarations in ``job_kinds`` (which
run them), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp.jobs.kinds import OPTIONAL


@dataclass
class EmbedPayload:
    """Vectors for the documents of ``corpus`` still without one (``corpora.embed_job``).

    ``model`` (None: the corpus' own) and ``switch``: move the corpus to ``model`` once
    every document has a vector for it. ``engine`` "ray" encodes on a Ray cluster at
    ``address`` (None, "" or "local": one started here; "auto": the one on this machine)
    with ``actors``, ``cpus_per_actor`` and ``batch`` (None: chosen by the cluster).
    ``batch_chars``: the most characters one batch holds (None: by device).
    """

    corpus: str
    model: str | None = field(default=None, metadata=OPTIONAL)
    switch: bool = field(default=False, metadata=OPTIONAL)
    engine: str | None = field(default=None, metadata=OPTIONAL)
    address: str | None = field(default="auto", metadata=OPTIONAL)
    actors: int | None = field(default=None, metadata=OPTIONAL)
    cpus_per_actor: int | None = field(default=None, metadata=OPTIONAL)
    batch: int | None = field(default=None, metadata=OPTIONAL)
    batch_chars: int | None = field(default=None, metadata=OPTIONAL)
