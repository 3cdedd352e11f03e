"""What the suggestions under the search box are made from, read a chunk at a time.

For each document with an id above a given one (ids only grow, so "the documents
added since I last looked"): its title as the metadata holds it, its external id
(a file's path: the file name is the title when the metadata has none), its
first line (the start of its text only: 200 characters are read, never the whole
text) and its section headings (``document_layouts``' heading paths). The
in-memory completion index (``search/completions.py``) reads these once per
corpus and then only the rows added since, with ``removed_since`` for deletions.

Example:
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = get_or_create_corpus(s, "faq", "m")
    ...     _ = add_documents(s, c, [NewDocument("a.md", "Port\\nThe default port", {})])
    ...     [(r.external_id, r.first_line) for rows in sources_after(s, c.id, 0) for r in rows]
    [('a.md', 'Port')]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from searchapp.store.catalog import get_or_create_corpus  # noqa: F401 - used in the doctest
from searchapp.store.db import Database  # noqa: F401 - used in the doctest
from searchapp.store.documents import NewDocument, add_documents  # noqa: F401 - doctest
from searchapp.store.schema import Corpus, Document, DocumentLayout

FIRST_CHARS = 200  # characters of a document's text read for its first line
CHUNK = 20_000  # documents per chunk


@dataclass(frozen=True)
class CompletionSource:
    """One document's words that suggestions may offer."""

    id: int
    external_id: str
    title: str | None
    first_line: str
    headings: tuple[str, ...]
    from_file: bool


def sources_after(s: Session, corpus_id: int, after_id: int, chunk: int = CHUNK
                  ) -> Iterator[list[CompletionSource]]:
    """The corpus' documents with ids above ``after_id``, in id order, ``chunk`` at a time."""
    q = (select(Document.id, Document.external_id, Document.meta,
                func.substr(Document.text, 1, FIRST_CHARS), DocumentLayout.parts)
         .outerjoin(DocumentLayout, DocumentLayout.document_id == Document.id)
         .where(Document.corpus_id == corpus_id, Document.id > after_id)
         .order_by(Document.id).execution_options(yield_per=chunk))
    for rows in s.execute(q).partitions(chunk):
        yield [_source(*row) for row in rows]


def _source(doc_id: int, external_id: str, meta, start: str | None, parts) -> CompletionSource:
    title = meta.get("title") if isinstance(meta, dict) else None
    first = (start or "").strip().split("\n", 1)[0].strip()
    return CompletionSource(int(doc_id), external_id, title if isinstance(title, str) else None,
                            first, _headings(parts), parts is not None)


def _headings(parts) -> tuple[str, ...]:
    """Every heading named in a layout's section paths (``"Install > Ports"``), in order."""
    seen: dict[str, None] = {}
    for part in parts or ():
        section = part[3] if isinstance(part, list | tuple) and len(part) > 3 else None
        if isinstance(section, str):
            for heading in section.split(" > "):
                if heading.strip():
                    seen.setdefault(heading.strip(), None)
    return tuple(seen)


def count_after(s: Session, corpus_id: int, after_id: int) -> int:
    """How many of the corpus' documents have an id above ``after_id``: the work a catch-up
    has ahead of it (an indexed count)."""
    return int(s.execute(select(func.count()).select_from(Document).where(
        Document.corpus_id == corpus_id, Document.id > after_id)).scalar() or 0)


def generation_of(s: Session, corpus_id: int) -> int:
    """The corpus' generation now (-1 when it is gone)."""
    value = s.execute(select(Corpus.generation).where(Corpus.id == corpus_id)).scalar()
    return -1 if value is None else int(value)
