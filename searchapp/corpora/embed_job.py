"""The ``embed`` task: vectors for every document of a corpus that lacks one.

Reads what is missing in keyset pages (ids after the last one done), so the
whole corpus is read once: O(n) for the job, not O(n) per batch. Each batch is
encoded, committed with its generation, and handed to the process' index before
the next, so a worker killed mid-job loses at most one batch, and started again
it embeds only what is still missing.

A batch is bounded by its documents and by its characters (``BATCH_CHARS_CPU``,
``BATCH_CHARS_GPU``): a thousand texts of 200,000 characters are many batches,
not one of gigabytes. Inside a batch the encoder calls ``ctx.checkpoint``
between its sub-batches, so a cancel or a SIGTERM lands within about a second
at any batch size; the half-encoded batch is not committed, and the job,
queued again or requested again, starts from the last committed one.

The index file is saved when saving is cheap relative to the work done since
the last save (at most ~5% of the time goes to writing it), and at the end; a
file that lags behind is brought forward from the database on load anyway.

Payload: ``EmbedPayload`` (``corpora.job_kinds``): ``corpus``, ``model`` (default: the
corpus' model), ``switch``, ``batch_chars``; with ``switch`` the corpus moves to the model
once every document has a vector for it, so the old index serves searches until then.
With ``engine`` "ray" (and ``address``, ``actors``, ``cpus_per_actor``, ``batch``) the
batches are encoded and committed by actors on a Ray cluster instead
(``searchapp.corpora.ray_embed``), through the same store functions.
"""

from __future__ import annotations

import time

import numpy as np

from searchapp.corpora.embed_batches import (
    BATCH_CHARS_CPU,
    BATCH_CHARS_GPU,
    BATCH_CPU,
    BATCH_GPU,
    FIRST_BATCH,
)
from searchapp.corpora.job_payloads import EmbedPayload
from searchapp.embedding.passages import embed_documents
from searchapp.jobs.tasks import TaskContext, fault_point
from searchapp.store import repo
from searchapp.vectors.handle import open_corpus
from searchapp.vectors.passage_index import STRIDE

MIN_SAVE_GAP_SECONDS = 10.0
SAVE_SHARE = 0.05  # the most of the time that saving the index may take


class _SaveClock:
    """When to write the index: not more often than every 20× the last save's duration."""

    def __init__(self) -> None:
        self.last, self.cost = time.monotonic(), 0.0

    def due(self) -> bool:
        return time.monotonic() - self.last > max(MIN_SAVE_GAP_SECONDS, self.cost / SAVE_SHARE)

    def saved(self, seconds: float) -> None:
        self.last, self.cost = time.monotonic(), seconds


def embed_corpus(ctx: TaskContext, payload: EmbedPayload) -> dict:
    """The ``embed`` job: vectors for what lacks one, then the switch if asked."""
    if payload.engine == "ray":
        return _embed_on_ray(ctx, payload)
    started = time.monotonic()  # the job's time includes loading the model
    app, name = ctx.app, payload.corpus
    handle = open_corpus(app, name, model=payload.model, require_vectors=False)
    model = handle.model
    ctx.progress(0, 0, f"Step 1 of 2: loading the model {model.name}", force=True)
    encoder = app.encoder(model.name)
    full_batch = BATCH_GPU if encoder.device.type == "cuda" else BATCH_CPU
    max_chars = _batch_chars(payload, encoder.device.type)
    batch = min(FIRST_BATCH, full_batch)
    with app.db.session() as s:
        already = repo.count_embedded(s, handle.corpus_id, model.id)
    total, done, after = handle.documents, already, 0
    clock = _SaveClock()
    split = passages = 0  # documents longer than the window, and their passages
    path = getattr(encoder, "speed_path", encoder.device.type)
    ctx.progress(done, total, f"Step 2 of 2: embedding {total - done:,} documents with "
                 f"{model.name} ({path})", force=True)
    while True:
        with app.db.session() as s:
            rows = repo.documents_missing_embedding(s, handle.corpus_id, model.id, after, batch,
                                                    max_chars)
        if not rows:
            break
        after, batch = rows[-1][0], min(2 * batch, full_batch)
        embedded = embed_rows(app, handle, encoder, rows, ctx.checkpoint)
        with app.db.session() as s:
            total = repo.count_documents(s, handle.corpus_id)
        done += len(rows)
        split += embedded.split
        passages += sum(len(v) for v, _ in embedded.passages.values())
        if clock.due():
            clock.saved(app.indexes.save(handle.corpus_id, model)
                        + app.passage_indexes.save(handle.corpus_id, model))
        ctx.progress(done, max(total, done),
                     f"Step 2 of 2: embedded {done:,} of {max(total, done):,}")
    for cache in (app.indexes, app.passage_indexes):
        cache.get(handle.corpus_id, model)  # catch up with anything written meanwhile
        cache.save(handle.corpus_id, model)
    _switch_if_asked(ctx, payload, handle.corpus_id, model.name)
    seconds = time.monotonic() - started
    return {"corpus": name, "model": model.name, "embedded": done - already,
            "documents": done, "split": split, "passages": passages,
            "seconds": round(seconds, 2)}


def embed_rows(app, handle, encoder, rows: list[tuple[int, str]], checkpoint=None):
    """Encode one batch of ``(document id, text)`` rows (passages by their stored layout),
    commit their vectors with a new generation, and hand them to this process' indexes.
    Returns what ``embed_documents`` gave (vectors, passages, how many were split).

    Example:
        >>> embed_rows(app, handle, encoder, [(7, "Hello there")])  # doctest: +SKIP
    """
    model, ids = handle.model, [doc_id for doc_id, _ in rows]
    with app.db.session() as s:  # documents read from files: their pages and sections
        layouts = repo.layouts_by_id(s, ids)
    embedded = embed_documents(encoder, [text for _, text in rows], app.settings.passage_tokens,
                               [layouts.get(i) for i in ids], checkpoint=checkpoint,
                               sentences=app.settings.answer_sentences)
    with app.db.session() as s:
        generation = repo.save_embeddings(s, handle.corpus_id, model.id, ids,
                                          embedded.vectors, embedded.passages,
                                          embedded.sentences)
    fault_point("embed batch committed, index not advanced")
    app.indexes.advance(handle.corpus_id, model, generation, ids, embedded.vectors)
    labels, passage_vectors = _passage_rows(ids, embedded, model.dimension)
    app.passage_indexes.advance(handle.corpus_id, model, generation, labels, passage_vectors)
    return embedded


def _batch_chars(payload: EmbedPayload, device_type: str) -> int:
    """The most characters one batch holds: the payload's ``batch_chars``, else per device.

    Example:
        >>> _batch_chars(EmbedPayload("faq"), "cpu")
        1000000
        >>> _batch_chars(EmbedPayload("faq", batch_chars=5000), "cuda")
        5000
    """
    default = BATCH_CHARS_GPU if device_type == "cuda" else BATCH_CHARS_CPU
    return max(1, int(payload.batch_chars or default))


def _passage_rows(ids: list[int], embedded, dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """The batch's passages as index rows: labels (m,) and vectors (m, dim)."""
    if not embedded.passages:
        return np.zeros(0, np.int64), np.zeros((0, dimension), np.float32)
    labels = [ids[row] * STRIDE + np.arange(len(v), dtype=np.int64)
              for row, (v, _) in embedded.passages.items()]
    return np.concatenate(labels), np.vstack([v for v, _ in embedded.passages.values()])


def _switch_if_asked(ctx: TaskContext, payload: EmbedPayload, corpus_id: int,
                     model_name: str) -> None:
    if payload.switch:
        with ctx.app.db.session() as s:
            repo.get_corpus(s, payload.corpus).model_name = model_name
            repo.next_generation(s, corpus_id)  # readers re-open with the new model


def _embed_on_ray(ctx: TaskContext, payload: EmbedPayload) -> dict:
    """The same job with the batches encoded and committed by Ray actors."""
    from searchapp.corpora.ray_embed import RayOptions, run_embed

    def report(done: int, total: int, message: str) -> None:
        ctx.progress(done, total, message, force=done == 0)

    result = run_embed(ctx.app, payload.corpus, RayOptions.from_payload(payload),
                       model=payload.model, progress=report)
    with ctx.app.db.session() as s:
        corpus_id = repo.corpus_state(s, payload.corpus).id
    _switch_if_asked(ctx, payload, corpus_id, result["model"])
    return result
