"""Embedding a corpus on a Ray cluster: one encoder actor per GPU (or per few CPUs).

``searchapp embed --corpus NAME --engine ray [--address auto|ray://HOST:PORT]``
queues an ``embed`` job with ``"engine": "ray"``; the process that runs the job
is the Ray driver:

1. It reads the ids of the documents still without a vector in keyset pages
   (ids only, as the local job reads its pages) and cuts them into blocks of
   one batch each (1,024 documents; 8,192 on GPUs).
2. Ray Data ``map_batches`` sends the blocks to a pool of ``EncodeAndStore``
   actors. Each actor loads the encoder once, reads the texts of its block that
   still lack a vector, encodes them (long ones through their passages, as the
   local job does: ``searchapp.embedding.passages.embed_documents``), and commits them with
   ``repo.save_embeddings``: the same store function, generation bump and
   counters as the local worker, one transaction per batch.
3. The driver counts the committed batches for the job's progress (a cancel
   stops the run at the next batch), then brings its index forward from the
   database (only the vectors written since its generation) and saves it;
   any other process' index catches up the same way at its next query.

A node that dies loses at most the batch its actor had not committed: Ray
restarts the actor and retries the block, which reads only what is still
missing. A run that stops (driver killed, cluster gone) is resumed by running
it again: it embeds only what is missing.

Every node needs searchapp installed (``pip install -e .[ray]``), the model
(the bundled one comes with the package; a fine-tuned one must sit at the same
path on every node) and the database: a PostgreSQL URL, or a SQLite file for a
cluster on one machine.

Example (with ray installed; ``address=None`` starts a local cluster):
    >>> app = App()                                                  # doctest: +SKIP
    >>> run_embed(app, "faq", RayOptions(address=None))["embedded"]  # doctest: +SKIP
    3025
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from searchapp.config import Settings
from searchapp.context import App
from searchapp.corpora.embed_batches import BATCH_CPU, BATCH_GPU  # per block, encode call, commit
from searchapp.corpora.job_payloads import EmbedPayload
from searchapp.errors import ConfigError
from searchapp.store import repo
from searchapp.vectors.handle import open_corpus

log = logging.getLogger(__name__)
ID_PAGE = 100_000  # ids per keyset page while planning the blocks
MAX_CPUS_PER_ACTOR = 4  # torch threads of one CPU actor; more actors beyond that


@dataclass(frozen=True)
class RayOptions:
    """Where the cluster is and how to use it.

    ``address``: None starts a local cluster in this process; ``"auto"`` joins the
    cluster started on this machine by ``ray start``; ``"ray://HOST:10001"`` a
    remote one through Ray Client. ``actors`` / ``cpus_per_actor`` / ``batch``:
    None picks from the cluster (one actor per GPU; else one per
    ``MAX_CPUS_PER_ACTOR`` CPUs) and the device.
    """

    address: str | None = "auto"
    actors: int | None = None
    cpus_per_actor: int | None = None
    batch: int | None = None
    actor_env: dict | None = None  # extra environment of the actors (fault-injection tests)
    max_restarts: int | None = None  # None: Ray Data's default (restart and retry, forever)

    @classmethod
    def from_payload(cls, payload: EmbedPayload) -> RayOptions:
        """The options an ``embed`` job's payload carries ("" or "local": a local cluster)."""
        address = payload.address
        return cls(address=None if address in (None, "", "local") else address,
                   actors=payload.actors, cpus_per_actor=payload.cpus_per_actor,
                   batch=payload.batch)


@dataclass(frozen=True)
class Plan:
    """How the pool is laid out: ``actors`` actors of ``cpus`` CPUs and ``gpus`` GPUs each."""

    actors: int
    cpus: int
    gpus: int
    batch: int


def import_ray():
    """The ``ray`` module, or a ConfigError saying how to install it."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise ConfigError("The Ray engine needs Ray: pip install -e '.[ray]' (on every node), "
                          "or embed without --engine ray.") from None
    return ray


def connect(address: str | None) -> None:
    """Join (or start) the cluster unless this process is connected already.

    Ray Data's progress lines are kept out of the CLI's output and the worker
    log (the job's own progress says the same); its warnings stay.
    """
    ray = import_ray()
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    if ray.is_initialized():
        return
    try:
        if address is None:
            ray.init(address="local", include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    except ConnectionError as exc:
        raise ConfigError(f"Cannot reach the Ray cluster at {address!r}: {exc}. Start one with "
                          "`ray start --head`, or pass --address ray://HOST:10001.") from None


def plan(resources: dict, options: RayOptions) -> Plan:
    """One actor per GPU; without GPUs, one per ``MAX_CPUS_PER_ACTOR`` CPUs (at least one).

    Example:
        >>> plan({"CPU": 16.0}, RayOptions())
        Plan(actors=4, cpus=4, gpus=0, batch=1024)
        >>> plan({"CPU": 32.0, "GPU": 2.0}, RayOptions())
        Plan(actors=2, cpus=1, gpus=1, batch=8192)
        >>> plan({"CPU": 2.0}, RayOptions(cpus_per_actor=1, batch=64))
        Plan(actors=2, cpus=1, gpus=0, batch=64)
    """
    gpus, cpus = int(resources.get("GPU", 0)), max(1, int(resources.get("CPU", 1)))
    if gpus:
        return Plan(options.actors or gpus, options.cpus_per_actor or 1, 1,
                    options.batch or BATCH_GPU)
    per_actor = options.cpus_per_actor or min(MAX_CPUS_PER_ACTOR, cpus)
    return Plan(options.actors or max(1, cpus // per_actor), per_actor, 0,
                options.batch or BATCH_CPU)


def actor_settings(settings: Settings) -> dict[str, str]:
    """The settings an actor needs, as ``SEARCHAPP_*`` variables; refuses an in-memory
    database, which no other process can open."""
    url = settings.database_url
    if url in ("sqlite://", "sqlite:///:memory:"):
        raise ConfigError("The Ray engine needs a database its workers can open: "
                          "SEARCHAPP_DATABASE_URL=postgresql+psycopg://... (or a SQLite file "
                          "for a cluster on this machine), not an in-memory one.")
    env = {"SEARCHAPP_DATABASE_URL": url, "SEARCHAPP_DATA_DIR": str(settings.data_dir),
           "SEARCHAPP_MODEL": settings.model, "SEARCHAPP_DEVICE": settings.device,
           "SEARCHAPP_PRECISION": settings.precision}
    env["SEARCHAPP_BUSY_TIMEOUT"] = str(settings.busy_timeout)
    if settings.passage_tokens:
        env["SEARCHAPP_PASSAGE_TOKENS"] = str(settings.passage_tokens)
    if settings.shard_words_dir is not None:
        env["SEARCHAPP_SHARD_WORDS_DIR"] = str(settings.shard_words_dir)
    return env


class EncodeAndStore:
    """A Ray actor: the encoder, loaded once; each call encodes one block and commits it.

    Called with ``{"id": int64 (n,)}``; returns ``{"embedded": [m], "ids": [n]}``
    where m ≤ n are the documents it encoded (a retried block, or documents
    deleted meanwhile, give fewer).
    """

    def __init__(self, env: dict[str, str], corpus_id: int, model_name: str, model_id: int,
                 threads: int):
        import torch

        from searchapp.embedding.models import load_encoder
        from searchapp.store.db import Database

        torch.set_num_threads(max(1, threads))
        settings = Settings.from_env(env)
        self.db = Database(settings.database_url, settings.busy_timeout)
        self.passage_tokens = settings.passage_tokens
        self.sentences = settings.answer_sentences
        self.encoder = load_encoder(model_name, settings)
        self.corpus_id, self.model_id = corpus_id, model_id

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from searchapp.embedding.passages import embed_documents
        from searchapp.jobs.tasks import fault_point

        ids = batch["id"].tolist()
        with self.db.session() as s:
            rows = repo.texts_missing_embedding(s, self.corpus_id, self.model_id, ids)
        if rows:
            with self.db.session() as s:  # documents read from files: pages and sections
                layouts = repo.layouts_by_id(s, [i for i, _ in rows])
            embedded = embed_documents(self.encoder, [text for _, text in rows],
                                       self.passage_tokens, [layouts.get(i) for i, _ in rows],
                                       sentences=self.sentences)
            fault_point("ray embed batch encoded, not committed")
            with self.db.session() as s:
                repo.save_embeddings(s, self.corpus_id, self.model_id, [i for i, _ in rows],
                                     embedded.vectors, embedded.passages, embedded.sentences)
            fault_point("ray embed batch committed, not reported")
        return {"embedded": np.array([len(rows)]), "ids": np.array([len(ids)])}


def missing_ids(app: App, corpus_id: int, model_id: int) -> np.ndarray:
    """Every id still without a vector (int64, sorted), read in keyset pages of ids."""
    pages, after = [], 0
    while True:
        with app.db.session() as s:
            page = repo.missing_embedding_ids(s, corpus_id, model_id, after, ID_PAGE)
        if not page:
            break
        pages.append(np.asarray(page, dtype=np.int64))
        after = page[-1]
    return np.concatenate(pages) if pages else np.zeros(0, dtype=np.int64)


def run_embed(app: App, name: str, options: RayOptions, model: str | None = None,
              progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Embed every document of corpus ``name`` lacking a vector, on the Ray cluster.

    ``progress(done, total, message)`` is called after each committed batch (a
    task's ``ctx.progress``; raising there stops the run). Returns the same
    result as the local embed job, plus the engine and pool layout.
    """
    report = progress or (lambda done, total, message: None)
    handle = open_corpus(app, name, model=model, require_vectors=False)
    env = actor_settings(app.settings)
    ray = import_ray()
    connect(options.address)
    layout = plan(ray.cluster_resources(), options)
    started = time.monotonic()
    todo = missing_ids(app, handle.corpus_id, handle.model.id)
    with app.db.session() as s:
        already = repo.count_embedded(s, handle.corpus_id, handle.model.id)
    total, done, embedded = handle.documents, already, 0
    report(done, total, f"Embedding {len(todo):,} documents with {handle.model.name} on Ray "
           f"({layout.actors} actor{'' if layout.actors == 1 else 's'})")
    if len(todo):
        import pyarrow as pa

        blocks = [pa.table({"id": todo[i:i + layout.batch]})
                  for i in range(0, len(todo), layout.batch)]
        results = ray.data.from_arrow(blocks).map_batches(
            EncodeAndStore, batch_size=layout.batch,
            compute=ray.data.ActorPoolStrategy(size=layout.actors),
            fn_constructor_kwargs={"env": env, "corpus_id": handle.corpus_id,
                                   "model_name": handle.model.name,
                                   "model_id": handle.model.id, "threads": layout.cpus},
            num_cpus=layout.cpus, num_gpus=layout.gpus,
            runtime_env={"env_vars": options.actor_env} if options.actor_env else None,
            **({} if options.max_restarts is None else {"max_restarts": options.max_restarts}))
        for out in results.iter_batches(batch_size=None, batch_format="numpy"):
            embedded += int(out["embedded"].sum())
            done = already + embedded
            report(done, max(total, done), f"Embedded {done:,} of {max(total, done):,} on Ray")
        with app.db.session() as s:  # the counter, not the reports: a block committed by
            # an actor killed before it reported is retried, finds nothing, reports 0
            embedded = repo.count_embedded(s, handle.corpus_id, handle.model.id) - already
    for cache in (app.indexes, app.passage_indexes):
        cache.get(handle.corpus_id, handle.model)  # the vectors the actors wrote
        cache.save(handle.corpus_id, handle.model)
    seconds = time.monotonic() - started
    log.info("ray embed of %s: %s documents in %.1f s (%s)", name, embedded, seconds, layout)
    return {"corpus": name, "model": handle.model.name, "embedded": embedded,
            "documents": already + embedded, "seconds": round(seconds, 2), "engine": "ray",
            "actors": layout.actors, "batch": layout.batch}
