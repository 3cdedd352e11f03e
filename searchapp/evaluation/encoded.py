"""A corpus opened with a model it is not embedded with: encoded in memory, stored nowhere.

A fine-tuned model is judged on the corpus before the user decides to switch,
so its vectors must not go into the store (writing them would move the
corpus' generation and make every stored duplicate and cluster result stale
for a model the user may reject). Instead the corpus' texts are encoded into
an in-memory index, exactly as the embed job would (long documents in
passages, a document's vector the mean of its passages'), and wrapped in a
``CorpusHandle``: the real search code (``searchapp.search.service.search``)
then ranks with it in every mode, the same path users get after a switch.

A model that already has a vector for every document in the store (the
corpus' own model, or one switched away from) is opened from the store.

Example:
    >>> handle = handle_for(app, "faq", "support-v2")          # doctest: +SKIP
    >>> handle.model.name, handle.index.count                  # doctest: +SKIP
    ('support-v2', 13)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from searchapp.context import App
from searchapp.embedding.passages import embed_documents
from searchapp.store import repo
from searchapp.store.catalog import ModelRef
from searchapp.vectors.handle import CorpusHandle, open_corpus
from searchapp.vectors.index import VectorIndex
from searchapp.vectors.passage_index import STRIDE, PassageIndex

ENCODE_CHUNK = 1024  # documents encoded between two progress reports
Progress = Callable[[int, int, str], None]


def is_stored(app: App, corpus: str, model: str) -> bool:
    """True when every document of ``corpus`` has a stored vector for ``model``."""
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        found = repo.find_model(s, model)
        return found is not None and state.documents > 0 and \
            repo.count_embedded(s, state.id, found.id) >= state.documents


def handle_for(app: App, corpus: str, model: str | None = None,
               progress: Progress | None = None, store: bool = False) -> CorpusHandle:
    """The corpus ready to search with ``model`` (default: its own): stored, or encoded here
    (and with ``store`` its vectors saved, so that switching the corpus to it later
    re-embeds nothing)."""
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    model = model or state.model_name
    if model == state.model_name or is_stored(app, corpus, model):
        return open_corpus(app, corpus, model=None if model == state.model_name else model)
    return encode_corpus(app, corpus, model, progress, store=store)


def encode_corpus(app: App, corpus: str, model: str, progress: Progress | None = None,
                  encoder=None, only: set[str] | None = None,
                  store: bool = False) -> CorpusHandle:
    """Encode every document of ``corpus`` with ``model`` into in-memory indexes.

    ``progress(done, total, message)`` is called after each chunk (a job's
    ``ctx.progress``, which also stops the work when the job is cancelled).
    ``encoder``: a model that is not registered (a candidate a job trained):
    it is installed in the App under the name ``model`` for the query path,
    and no model row is written (``app.forget_encoder(model)`` drops it after).
    ``only``: encode just these documents (external ids): enough to score judged
    pairs, not to search. ``store``: a registered model's vectors are also saved as the
    embed job saves them (a learning job's verdict encodes the corpus with the new
    model; the switch to it then finds every vector stored).
    """
    report = progress or (lambda done, total, message: None)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    if encoder is None:
        ref, encoder = app.model_ref(model), app.encoder(model)
    else:
        app.install_encoder(model, encoder)
        ref = ModelRef(0, model, encoder.dimension)
    index = VectorIndex(ref.dimension, capacity=max(state.documents, 16))
    passages = PassageIndex(ref.dimension)
    done = 0
    report(0, state.documents, f"Encoding the documents with {model}")
    with app.db.session() as s:
        chunks = list(repo.iter_texts(s, state.id, ENCODE_CHUNK))
        if only is not None:
            wanted = {pk for pk, (ext, _) in repo.document_texts(s, state.id).items()
                      if ext in only}
            chunks = [([i for i in ids if i in wanted],
                       [t for i, t in zip(ids, texts, strict=True) if i in wanted])
                      for ids, texts in chunks]
            chunks = [(ids, texts) for ids, texts in chunks if ids]
    total = sum(len(ids) for ids, _ in chunks)
    for ids, texts in chunks:
        with app.db.session() as s:  # documents read from files: pages and sections
            layouts = repo.layouts_by_id(s, ids)
        embedded = embed_documents(encoder, texts, app.settings.passage_tokens,
                                   [layouts.get(i) for i in ids])
        if store and ref.id and only is None:
            with app.db.session() as s:
                repo.save_embeddings(s, state.id, ref.id, ids, embedded.vectors,
                                     embedded.passages)
        index.add(np.asarray(ids, dtype=np.int64), embedded.vectors)
        for row, (vectors, _spans) in embedded.passages.items():
            labels = ids[row] * STRIDE + np.arange(len(vectors), dtype=np.int64)
            passages.add(labels, vectors)
        done += len(ids)
        report(done, total, f"Encoded {done:,} of {total:,} documents with {model}")
    return CorpusHandle(state.id, state.name, ref, state.generation, state.documents, index,
                        passages if passages.count else None, tuple(state.meta_columns))
