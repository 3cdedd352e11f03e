"""The saved filters of a corpus: which ``column=value`` tags the app wrote, and over what.

A saved filter tags a set of documents (a cluster) with a metadata value
(``document_edits.set_meta_value``); this list remembers each one, so a page can
offer them again, so removing one finds its documents, and so a column the
corpus' own files brought (``product``, ``author``) is never taken for a tag:
only columns listed here, or new ones, are written. It is one row of the
``analyses`` table per corpus (kind ``saved-filters``), read whichever model it was
written under: a tag belongs to the documents, whichever model embeds them.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c, m = get_or_create_corpus(s, "faq", "m"), get_or_create_model(s, "m", 384)
    ...     remember(s, c.id, m.id, {"column": "cluster", "value": "Cards", "documents": 2})
    ...     [f["value"] for f in saved_filters(s, c.id)], tag_columns(s, c.id)
    (['Cards'], {'cluster'})
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from searchapp.store.catalog import (  # noqa: F401 - used in the doctest
    get_or_create_corpus,
    get_or_create_model,
)
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.schema import Analysis, utcnow

KIND = "saved-filters"
KEY = "filters"


def _row(s: Session, corpus_id: int) -> Analysis | None:
    """The newest list, under whichever model it was written."""
    return s.scalar(select(Analysis).where(
        Analysis.corpus_id == corpus_id, Analysis.kind == KIND, Analysis.params_key == KEY)
        .order_by(Analysis.id.desc()).limit(1))


def saved_filters(s: Session, corpus_id: int) -> list[dict]:
    """The corpus' saved filters, oldest first: dicts with ``column``, ``value`` and what
    the saver recorded (``documents``, ``saved_at``, ...)."""
    row = _row(s, corpus_id)
    return list(row.result.get("filters", [])) if row is not None else []


def tag_columns(s: Session, corpus_id: int) -> set[str]:
    """The metadata columns that saved filters write (and may write again)."""
    return {f["column"] for f in saved_filters(s, corpus_id)}


def remember(s: Session, corpus_id: int, model_id: int, entry: dict) -> None:
    """Add ``entry`` (``column``, ``value``, ...), replacing one with the same column and
    value (saved again: the set moved)."""
    entry = {**entry, "saved_at": utcnow().isoformat(timespec="seconds")}
    _write(s, corpus_id, model_id,
           [*_others(s, corpus_id, entry["column"], entry["value"]), entry])


def forget(s: Session, corpus_id: int, model_id: int, column: str, value: str) -> bool:
    """Drop the entry for ``column=value``; whether there was one."""
    kept = _others(s, corpus_id, column, value)
    if len(kept) == len(saved_filters(s, corpus_id)):
        return False
    _write(s, corpus_id, model_id, kept)
    return True


def _others(s: Session, corpus_id: int, column: str, value: str) -> list[dict]:
    return [f for f in saved_filters(s, corpus_id)
            if (f["column"], f["value"]) != (column, value)]


def _write(s: Session, corpus_id: int, model_id: int, filters: list[dict]) -> None:
    """One row, under ``model_id`` (the corpus' model now); the rows of other models go."""
    s.execute(delete(Analysis).where(Analysis.corpus_id == corpus_id, Analysis.kind == KIND,
                                     Analysis.model_id != model_id))
    row = s.scalar(select(Analysis).where(
        Analysis.corpus_id == corpus_id, Analysis.model_id == model_id, Analysis.kind == KIND,
        Analysis.params_key == KEY))
    if row is None:
        row = Analysis(corpus_id=corpus_id, model_id=model_id, kind=KIND, params_key=KEY,
                       params={}, generation=-1)
        s.add(row)
    row.result, row.created_at = {"filters": filters}, utcnow()
    s.flush()
