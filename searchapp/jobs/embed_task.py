"""The ``embed`` task: vectors for every document of a corpus that lacks one.

Works in batches; each batch is committed to the database and added to the
index before the next, so a worker killed mid-job loses at most one batch, and
started again it embeds only what is still missing. The index file is saved
every few seconds and at the end (a stale file is repaired on load anyway).

Payload: ``{"corpus": NAME, "model": MODEL (default: the corpus' model),
"switch": bool}``; with ``switch`` the corpus moves to MODEL once every document
has a vector for it, so the old index serves searches until then.
"""

from __future__ import annotations

import time

from searchapp.jobs.tasks import TaskContext
from searchapp.store import repo

SAVE_EVERY_SECONDS = 10.0


def embed_corpus(ctx: TaskContext, payload: dict) -> dict:
    app = ctx.app
    with app.db.session() as s:
        corpus = repo.get_corpus(s, payload["corpus"])
        corpus_id, model_name = corpus.id, payload.get("model") or corpus.model_name
    model = app.model_ref(model_name)
    encoder = app.encoder(model_name)
    on_cuda = encoder.device.type == "cuda"
    batch_size = 2048 if on_cuda else 256
    index = app.index(corpus_id, model)
    with app.db.session() as s:
        total = repo.count_documents(s, corpus_id)
        done = already = repo.count_embedded(s, corpus_id, model.id)
    started, last_save = time.monotonic(), time.monotonic()
    ctx.progress(done, total, f"Embedding {total - done} documents with {model_name}", force=True)
    while True:
        with app.db.session() as s:
            rows = repo.documents_missing_embedding(s, corpus_id, model.id, batch_size)
        if not rows:
            break
        ids = [doc_id for doc_id, _ in rows]
        vectors = encoder.encode([text for _, text in rows], batch_size=256 if on_cuda else 32)
        with app.db.session() as s:
            repo.save_embeddings(s, model.id, ids, vectors)
        index.add(ids, vectors)
        done += len(rows)
        if time.monotonic() - last_save > SAVE_EVERY_SECONDS:
            app.save_index(corpus_id, model, index)
            last_save = time.monotonic()
        ctx.progress(done, max(total, done), f"Embedded {done} of {max(total, done)}")
    app.save_index(corpus_id, model, index)
    if payload.get("switch"):
        with app.db.session() as s:
            repo.get_corpus(s, payload["corpus"]).model_name = model_name
    seconds = time.monotonic() - started
    return {"corpus": payload["corpus"], "model": model_name, "embedded": done - already,
            "documents": done, "seconds": round(seconds, 2)}
