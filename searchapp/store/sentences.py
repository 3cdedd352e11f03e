"""Sentences of passages: their spans and vectors per model, written at embed time, read by
primary key when an answer is sought (``searchapp.answers``).

A row is one passage of one document for one model (``schema.PassageSentences``):
``spans`` (s, 2) int32 character offsets into the document's text, ``vectors`` (s, dim)
float16 (half the bytes of float32; a cosine moves by about 1e-3, far below what ranks
an answer). Reading the sentences of a search's top passages is a handful of primary-key
reads, whatever the corpus' size.

Example:
    >>> from searchapp.store.db import Database
    >>> from searchapp.store.catalog import get_or_create_corpus, get_or_create_model
    >>> from searchapp.store.documents import NewDocument, add_documents
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "m")
    ...     _ = add_documents(s, c, [NewDocument("a", "One. Two.")])
    ...     m = get_or_create_model(s, "m", 2)
    ...     doc = s.scalar(select(Document.id))
    ...     save_sentences(s, m.id, {doc: [(0, np.array([[0, 4], [5, 9]]), np.eye(2))]})
    >>> with db.session() as s:
    ...     spans, vectors = read_sentences(s, m.id, [(doc, 0)])[(doc, 0)]
    >>> spans.tolist(), vectors.dtype
    ([[0, 4], [5, 9]], dtype('float32'))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from searchapp.store.documents import IN_LIMIT, chunks
from searchapp.store.schema import Document, PassageSentences  # noqa: F401 - Document: doctest

# per document: [(passage number, spans (s, 2), vectors (s, dim))]
SentenceRows = Mapping[int, Sequence[tuple[int, np.ndarray, np.ndarray]]]


def save_sentences(s: Session, model_id: int, rows: SentenceRows,
                   replace: Iterable[int] = ()) -> None:
    """Store the sentences of documents for a model, replacing what the documents in
    ``rows`` (and in ``replace``: documents embedded again without sentences) held."""
    docs = sorted({int(d) for d in rows} | {int(d) for d in replace})
    for part in chunks(docs, IN_LIMIT):
        s.execute(delete(PassageSentences).where(PassageSentences.model_id == model_id,
                                                 PassageSentences.document_id.in_(part)))
    records = [{"document_id": int(doc), "model_id": int(model_id), "passage": int(p),
                "spans": np.ascontiguousarray(spans, np.int32).tobytes(),
                "vectors": np.ascontiguousarray(vectors, np.float16).tobytes()}
               for doc, parts in rows.items() for p, spans, vectors in parts if len(spans)]
    for part in chunks(records, IN_LIMIT):
        s.execute(insert(PassageSentences), part)


def read_sentences(s, model_id: int, keys: Iterable[tuple[int, int]]
                   ) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """{(document, passage): (spans (s, 2) int32, vectors (s, dim) float32)} of the keys
    stored for the model (a Session or a Connection); keys without a row are left out.

    One primary-key range read per document (``document_id = ? AND model_id = ? AND
    passage IN (...)``): SQLite answers a row-value ``IN`` over both columns by scanning
    the table (5.4 ms a query at 10,000 passages, growing with the corpus).
    """
    by_doc: dict[int, set[int]] = {}
    for d, p in keys:
        by_doc.setdefault(int(d), set()).add(int(p))
    out: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    for doc, passages in sorted(by_doc.items()):
        rows = s.execute(select(PassageSentences.passage, PassageSentences.spans,
                                PassageSentences.vectors).where(
            PassageSentences.document_id == doc, PassageSentences.model_id == int(model_id),
            PassageSentences.passage.in_(sorted(passages)))).all()
        for passage, spans, vectors in rows:
            spans = np.frombuffer(spans, dtype=np.int32).reshape(-1, 2)
            vectors = np.frombuffer(vectors, dtype=np.float16).reshape(len(spans), -1)
            out[(doc, int(passage))] = (spans, vectors.astype(np.float32))
    return out


def sentence_count(s, model_id: int, doc_ids: Iterable[int]) -> int:
    """How many of ``doc_ids`` have sentences stored for the model (0: embedded before
    sentences were kept, or not yet)."""
    found = 0
    for part in chunks(sorted({int(d) for d in doc_ids}), IN_LIMIT):
        found += len(set(s.scalars(select(PassageSentences.document_id).where(
            PassageSentences.model_id == int(model_id),
            PassageSentences.document_id.in_(part)))))
    return found
