"""Stored analyses (duplicate pairs, clusters): one row per (corpus, model, kind, parameters).

A result records the corpus generation it was computed at and is current while
the vectors of its model are as they were then (``changes.unchanged_since``: no
vector of that model written, no document removed since), so switching a corpus to
another model and back keeps its duplicates and clusters. Per-document arrays travel as the
bytes of an ``.npz`` file (``pack_arrays``): a million pairs load in
milliseconds, where the same numbers as JSON take seconds to parse.

Example:
    >>> blob = pack_arrays({"a": np.arange(3)})
    >>> unpack_arrays(blob)["a"].tolist()
    [0, 1, 2]
"""

from __future__ import annotations

import io

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session, defer

from searchapp.store.changes import unchanged_since
from searchapp.store.schema import Analysis, utcnow


def pack_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def unpack_arrays(blob: bytes | None) -> dict[str, np.ndarray]:
    if not blob:
        return {}
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def get_analysis(s: Session, corpus_id: int, model_id: int, kind: str, params_key: str
                 ) -> Analysis | None:
    return s.scalar(select(Analysis).where(
        Analysis.corpus_id == corpus_id, Analysis.model_id == model_id,
        Analysis.kind == kind, Analysis.params_key == params_key))


def analysis_version(s: Session, corpus_id: int, model_id: int, kind: str, params_key: str
                     ) -> str | None:
    """When the stored result was written (None: none is stored), read without its
    arrays: a process that keeps results in memory sees another one replace a result at
    the same generation (clusters computed again with new judgements)."""
    row = s.execute(select(Analysis.id, Analysis.created_at).where(
        Analysis.corpus_id == corpus_id, Analysis.model_id == model_id,
        Analysis.kind == kind, Analysis.params_key == params_key)).first()
    return None if row is None else f"{row[0]}@{row[1].isoformat()}"


def current_analyses(s: Session, corpus_id: int, model_id: int, kind: str, generation: int
                     ) -> list[Analysis]:
    """Stored results of ``kind`` still current at ``generation`` (``is_current``), newest
    first.

    Their ``arrays`` load only when read (inside the session): choosing one of
    several stored results must not read the megabytes of all of them.
    """
    rows = s.scalars(select(Analysis).options(defer(Analysis.arrays)).where(
        Analysis.corpus_id == corpus_id, Analysis.model_id == model_id, Analysis.kind == kind,
        Analysis.generation <= generation,
    ).order_by(Analysis.created_at.desc(), Analysis.id.desc()))
    return [row for row in rows if is_current(s, row, generation)]


def is_current(s: Session, row: Analysis, generation: int) -> bool:
    """Whether a stored result still describes the corpus at ``generation``: computed at
    it, or at an earlier one with its model's vectors unchanged since."""
    if row.generation == generation:
        return True
    return row.generation < generation and \
        unchanged_since(s, row.corpus_id, row.model_id, row.generation)


def save_analysis(s: Session, corpus_id: int, model_id: int, kind: str, params_key: str,
                  params: dict, generation: int, result: dict, seconds: float,
                  arrays: dict[str, np.ndarray] | None = None) -> Analysis:
    """Store (or replace) the result for this (corpus, model, kind, parameters)."""
    row = get_analysis(s, corpus_id, model_id, kind, params_key)
    if row is None:
        row = Analysis(corpus_id=corpus_id, model_id=model_id, kind=kind, params_key=params_key)
        s.add(row)
    row.params, row.generation, row.result, row.seconds = params, generation, result, seconds
    row.arrays = pack_arrays(arrays) if arrays else None
    row.created_at = utcnow()
    s.flush()
    return row
