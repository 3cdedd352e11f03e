"""Which shard a document belongs to, and one shard's part of what changed since a generation.

A corpus served in ``n`` shards puts each document in shard

    shard_of(id) = ((id * 2654435761) mod 2^32) div 2^16 mod n

Knuth's multiplicative hash of the document's id (ids are never reused), read
from its well-mixed bits 16-31: stable (the same id, the same shard, in every
process and on every machine), balanced for the database's sequential ids, and
computable in SQL on SQLite and PostgreSQL alike, so a shard's server reads its
own rows only and adding documents touches only the shards they fall in.
``by="range"`` puts ids ``[i·span, (i+1)·span)`` in shard ``i mod n`` instead
(blocks of consecutive ids together: a user who asks for ranges).

Example:
    >>> shard_of(np.arange(1, 9), 4).tolist()
    [3, 2, 2, 1, 1, 0, 0, 3]
    >>> shard_of(np.arange(1, 9), 4, by="range", span=4).tolist()
    [0, 0, 0, 1, 1, 1, 1, 2]
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from searchapp.base.shard_layout import PLACEMENTS
from searchapp.errors import InvalidParameterError

MULTIPLIER = 2654435761  # Knuth: 2^32 / golden ratio, odd
MAX_SHARDS = 1024
RANGE_SPAN = 1_000_000  # ids per block of the range placement
READ_CHUNK = 20_000  # rows a shard server reads at a time (about 31 MB of 384-d vectors)


def check_shards(shards: int, placement: str = "hash") -> None:
    """An error a user can act on for a shard count or placement that cannot be served."""
    if not (isinstance(shards, int) and 1 <= shards <= MAX_SHARDS):
        raise InvalidParameterError(f"Shards must be a whole number from 1 to {MAX_SHARDS}; "
                                    f"got {shards!r}.")
    if placement not in PLACEMENTS:
        raise InvalidParameterError(f"Unknown shard placement {placement!r}; use one of "
                                    f"{', '.join(PLACEMENTS)}.")


def shard_of(ids, shards: int, by: str = "hash", span: int = RANGE_SPAN) -> np.ndarray:
    """The shard (int64) of each document id in ``ids`` among ``shards``."""
    ids = np.asarray(ids, dtype=np.int64)
    if by == "range":
        return (ids // span) % shards
    mixed = (ids.astype(np.uint64) * np.uint64(MULTIPLIER)) % np.uint64(2**32)
    return ((mixed // np.uint64(2**16)) % np.uint64(shards)).astype(np.int64)


def shard_sql(column: str, shards: int, by: str = "hash", span: int = RANGE_SPAN) -> str:
    """``shard_of`` as an SQL expression over an integer ``column`` (SQLite and PostgreSQL:
    the product stays below 2^63 for ids under 3.4 billion)."""
    if by == "range":
        return f"(({column} / {int(span)}) % {int(shards)})"
    return f"(((({column} * {MULTIPLIER}) % 4294967296) / 65536) % {int(shards)})"


def removed_in_shard(s: Session, corpus_id: int, generation: int, shard: int, shards: int,
                     by: str = "hash") -> np.ndarray:
    """Ids of the shard's documents tombstoned after ``generation``."""
    rows = s.execute(text(
        "SELECT document_id FROM document_tombstones WHERE corpus_id = :c "
        f"AND generation > :g AND {shard_sql('document_id', shards, by)} = :s"),
        {"c": corpus_id, "g": generation, "s": shard}).scalars().all()
    return np.asarray(rows, dtype=np.int64)


def vectors_in_shard(s: Session, corpus_id: int, model_id: int, generation: int,
                     dimension: int, shard: int, shards: int, by: str = "hash",
                     chunk: int | None = None
                     ) -> Iterator[tuple[np.ndarray, np.ndarray, list]]:
    """The shard's vectors written after ``generation``: chunks of (document ids (m,),
    their vectors (m, dim), their passages' vector blobs (None for a one-window text))."""
    q = text("SELECT document_id, vector, passages FROM embeddings WHERE corpus_id = :c "
             "AND model_id = :m AND generation > :g "
             f"AND {shard_sql('document_id', shards, by)} = :s")
    params = {"c": corpus_id, "m": model_id, "g": generation, "s": shard}
    chunk = chunk or READ_CHUNK
    result = s.execute(q.execution_options(yield_per=chunk), params)
    for rows in result.partitions(chunk):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        yield ids, matrix.reshape(len(rows), dimension), [r[2] for r in rows]


def stored_vectors(s: Session, model_id: int, doc_ids, dimension: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(the ids among ``doc_ids`` that have a vector (m,), their vectors (m, dim)): full
    vectors to re-rank a compressed shard's candidates; a document deleted meanwhile is
    left out, not an error."""
    ids = [int(i) for i in doc_ids]
    if not ids:
        return np.zeros(0, np.int64), np.zeros((0, dimension), np.float32)
    rows = s.execute(text("SELECT document_id, vector FROM embeddings WHERE model_id = :m "
                          f"AND document_id IN ({', '.join(str(i) for i in ids)})"),
                     {"m": model_id}).all()
    found = dict(rows)
    kept = [i for i in ids if i in found]
    matrix = np.frombuffer(b"".join(found[i] for i in kept), dtype=np.float32)
    return np.asarray(kept, np.int64), matrix.reshape(len(kept), dimension).copy()


def texts_of(s: Session, doc_ids) -> list[tuple[int, str]]:
    """(id, text) of those of ``doc_ids`` still stored, by id: a shard's full text is made
    from them (a document deleted meanwhile is left out)."""
    ids = [int(i) for i in doc_ids]
    if not ids:
        return []
    if s.get_bind().dialect.name == "postgresql":
        wanted, value = "id = ANY(:ids)", ids
    else:
        wanted, value = "id IN (SELECT value FROM json_each(:ids))", json.dumps(ids)
    rows = s.execute(text(f"SELECT id, text FROM documents WHERE {wanted} ORDER BY id"),
                     {"ids": value}).all()
    return [(int(i), t) for i, t in rows]


def stored_passages(s: Session, model_id: int, labels, dimension: int, stride: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(the passage labels among ``labels`` still stored (m,), their vectors (m, dim)); a
    label is ``document id * stride + passage number``, read from its document's
    passages blob (a compressed shard's exact passage scores)."""
    labels = np.asarray(labels, np.int64)
    docs = sorted({int(d) for d in (labels // stride).tolist()})
    if not docs:
        return np.zeros(0, np.int64), np.zeros((0, dimension), np.float32)
    rows = s.execute(text("SELECT document_id, passages FROM embeddings WHERE model_id = :m "
                          f"AND passages IS NOT NULL AND document_id IN "
                          f"({', '.join(str(d) for d in docs)})"), {"m": model_id}).all()
    blocks = {doc: np.frombuffer(blob, np.float32).reshape(-1, dimension) for doc, blob in rows}
    kept, vectors = [], []
    for label in labels.tolist():
        block = blocks.get(label // stride)
        if block is not None and label % stride < len(block):
            kept.append(label)
            vectors.append(block[label % stride])
    if not kept:
        return np.zeros(0, np.int64), np.zeros((0, dimension), np.float32)
    return np.asarray(kept, np.int64), np.vstack(vectors).astype(np.float32)


def count_in_shard(s: Session, corpus_id: int, model_id: int, shard: int, shards: int,
                   by: str = "hash") -> int:
    """How many of the corpus' vectors (one a document) fall in the shard: a build sizes
    its index once."""
    return int(s.execute(text(
        "SELECT count(*) FROM embeddings WHERE corpus_id = :c AND model_id = :m "
        f"AND {shard_sql('document_id', shards, by)} = :s"),
        {"c": corpus_id, "m": model_id, "s": shard}).scalar() or 0)
