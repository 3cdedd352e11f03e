"""A corpus' judgements as evaluation items, counted, and kept in a job step's JSON.

The learn, adapt and rerank jobs all start from ``corpus_items``; the learn job
saves its split in its work folder (``items_json``) and reads it back after a
restart (``items_from``), so a resumed job trains on the same split.

Example:
    >>> import json
    >>> items = Items([JudgedQuery("q", {"d": 1})], [JudgedPair("a", "b", 0)])
    >>> items_from(json.loads(json.dumps(items_json(items)))) == items
    True
    >>> counts(items)
    {'judgements': 2, 'queries': 1, 'pairs': 1}
"""

from __future__ import annotations

from searchapp.context import App
from searchapp.evaluation.judged import Items, JudgedPair, JudgedQuery, from_judgements
from searchapp.judgements.service import list_judgements


def corpus_items(app: App, corpus: str) -> Items:
    """The corpus' judgements as evaluation items (``searchapp.evaluation.judged``)."""
    return from_judgements(list_judgements(app, corpus))


def counts(items: Items) -> dict:
    """How many judgements, judged queries and judged pairs ``items`` hold."""
    return {"judgements": items.judgements, "queries": len(items.queries),
            "pairs": len(items.pairs)}


def positives(items: Items) -> int:
    """The relevant judgements: relevant documents of queries and pairs judged the same."""
    return sum(len(q.relevant) for q in items.queries) + sum(p.label for p in items.pairs)


def items_json(items: Items) -> dict:
    """``items`` as plain JSON (a step's saved result)."""
    return {"queries": [[q.query, q.grades] for q in items.queries],
            "pairs": [[p.a, p.b, p.label] for p in items.pairs],
            "skipped": items.skipped_queries}


def items_from(data: dict) -> Items:
    """The items ``items_json`` wrote."""
    return Items([JudgedQuery(q, {d: int(g) for d, g in grades.items()})
                  for q, grades in data["queries"]],
                 [JudgedPair(a, b, int(label)) for a, b, label in data["pairs"]],
                 data.get("skipped", 0))
