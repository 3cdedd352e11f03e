"""A document's metadata value in SQL, for any key a file can name.

Metadata is a JSON object per document (``documents.meta``), written by
SQLAlchemy's JSON type with ``json.dumps`` defaults: keys are escaped as
``json.dumps`` escapes them (``"città"`` is stored as ``"citt\\u00e0"``). The
key is always a bound parameter, never part of the SQL text:

- PostgreSQL: ``d.meta ->> :key`` (the server compares the unescaped key).
- SQLite: ``json_extract(d.meta, :path)`` with the path built here as
  ``$.`` + the key escaped exactly as stored, which SQLite compares with the
  stored key as written (SQLite 3.45 and later compare unescaped, and match
  too). A key holding ``"`` cannot be written in a SQLite JSON path: its value
  comes from ``json_each`` (about twice the cost, for such keys only).

Example:
    >>> value_sql("sqlite", "città", "k0")
    ('json_extract(d.meta, :k0)', {'k0': '$."citt\\\\u00e0"'})
    >>> value_sql("sqlite", 'say "hi"', "k0")[0]
    '(SELECT j.value FROM json_each(d.meta) AS j WHERE j.key = :k0)'
    >>> value_sql("postgresql", 'say "hi"', "k0")
    ('(d.meta ->> :k0)', {'k0': 'say "hi"'})
"""

from __future__ import annotations

import json


def value_sql(dialect: str, key: str, param: str) -> tuple[str, dict]:
    """SQL for the value of metadata ``key`` of ``documents d`` (NULL when the document has
    no such key), and its bound parameter named ``param``."""
    if dialect == "postgresql":
        return f"(d.meta ->> :{param})", {param: key}
    if '"' in key:
        return f"(SELECT j.value FROM json_each(d.meta) AS j WHERE j.key = :{param})", \
            {param: key}
    return f"json_extract(d.meta, :{param})", {param: "$." + json.dumps(key)}
