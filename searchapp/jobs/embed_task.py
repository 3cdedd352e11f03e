"""The ``embed`` task: vectors for every document of a corpus that lacks one.

Reads what is missing in keyset pages (ids after the last one done), so the
whole corpus is read once: O(n) for the job, not O(n) per batch. Each batch is
encoded, committed with its generation, and handed to the process' index before
the next, so a worker killed mid-job loses at most one batch, and started again
it embeds only what is still missing.

The index file is saved when saving is cheap relative to the work done since
the last save (at most ~5% of the time goes to writing it), and at the end; a
file that lags behind is brought forward from the database on load anyway.

Payload: ``{"corpus": NAME, "model": MODEL (default: the corpus' model),
"switch": bool}``; with ``switch`` the corpus moves to MODEL once every document
has a vector for it, so the old index serves searches until then.
"""

from __future__ import annotations

import time

from searchapp.handle import open_corpus
from searchapp.jobs.tasks import TaskContext, fault_point
from searchapp.store import repo

BATCH_CPU = 1024  # documents per committed batch
BATCH_CUDA = 8192
FIRST_BATCH = 128  # the first batches are smaller (doubling up): search opens and a rate
# shows within seconds of the model being loaded
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


def embed_corpus(ctx: TaskContext, payload: dict) -> dict:
    app, name = ctx.app, payload["corpus"]
    handle = open_corpus(app, name, model=payload.get("model"), require_vectors=False)
    model = handle.model
    ctx.progress(0, 0, f"Step 1 of 2: loading the model {model.name}", force=True)
    encoder = app.encoder(model.name)
    full_batch = BATCH_CUDA if encoder.device.type == "cuda" else BATCH_CPU
    batch = min(FIRST_BATCH, full_batch)
    with app.db.session() as s:
        already = repo.count_embedded(s, handle.corpus_id, model.id)
    total, done, after = handle.documents, already, 0
    clock, started = _SaveClock(), time.monotonic()
    path = getattr(encoder, "speed_path", encoder.device.type)
    ctx.progress(done, total, f"Step 2 of 2: embedding {total - done:,} documents with "
                 f"{model.name} ({path})", force=True)
    while True:
        with app.db.session() as s:
            rows = repo.documents_missing_embedding(s, handle.corpus_id, model.id, after, batch)
        if not rows:
            break
        after, batch = rows[-1][0], min(2 * batch, full_batch)
        ids = [doc_id for doc_id, _ in rows]
        vectors = encoder.encode([text for _, text in rows])
        with app.db.session() as s:
            generation = repo.save_embeddings(s, handle.corpus_id, model.id, ids, vectors)
            total = repo.count_documents(s, handle.corpus_id)
        fault_point("embed batch committed, index not advanced")
        app.indexes.advance(handle.corpus_id, model, generation, ids, vectors)
        done += len(rows)
        if clock.due():
            clock.saved(app.indexes.save(handle.corpus_id, model))
        ctx.progress(done, max(total, done),
                     f"Step 2 of 2: embedded {done:,} of {max(total, done):,}")
    app.indexes.get(handle.corpus_id, model)  # catch up with anything written meanwhile
    app.indexes.save(handle.corpus_id, model)
    if payload.get("switch"):
        with app.db.session() as s:
            repo.get_corpus(s, name).model_name = model.name
            repo.next_generation(s, handle.corpus_id)  # readers re-open with the new model
    seconds = time.monotonic() - started
    return {"corpus": name, "model": model.name, "embedded": done - already,
            "documents": done, "seconds": round(seconds, 2)}
