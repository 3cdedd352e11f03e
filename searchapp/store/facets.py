"""Facets: the most common values of one metadata column of a corpus, with their counts.

One grouped SQL pass over the corpus' rows (through the ``(corpus_id, id)``
index), reading one JSON key per row in the database, never in Python: at
100,000 documents a few tens of milliseconds, which is why callers keep the
answer per corpus generation (``searchapp.search.facets``).

Example:
    >>> from searchapp.store.db import Database
    >>> from searchapp.store import repo
    >>> db = Database("sqlite://")
    >>> with db.session() as s:
    ...     c = repo.get_or_create_corpus(s, "t", "m")
    ...     _ = repo.add_documents(s, c, [repo.NewDocument(str(i), f"text {i}",
    ...                                   {"product": p}) for i, p in enumerate("aab")])
    ...     top_values(s, c.id, "product", 10)
    [('a', 2), ('b', 1)]
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from searchapp.store.meta import value_sql


def top_values(s: Session | Connection, corpus_id: int, column: str, limit: int = 20
               ) -> list[tuple[str, int]]:
    """The ``limit`` most common non-empty values of ``column`` with their counts, most first.

    Values are compared as text (``2024`` and ``"2024"`` count together); ties
    go by value, so the order is stable.
    """
    dialect = (s.get_bind() if isinstance(s, Session) else s).dialect.name
    expr, params = value_sql(dialect, column, "col")  # the key bound, as filters bind it
    value = expr if dialect == "postgresql" else f"CAST({expr} AS TEXT)"
    sql = (f"SELECT {value} AS v, COUNT(*) AS n FROM documents d WHERE d.corpus_id = :corpus "
           f"AND {value} IS NOT NULL AND {value} != '' GROUP BY v ORDER BY n DESC, v LIMIT :limit")
    rows = s.execute(text(sql), {**params, "corpus": corpus_id, "limit": limit}).all()
    return [(str(v), int(n)) for v, n in rows]
