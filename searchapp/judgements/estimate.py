"""The running estimate the Label page shows: how good the corpus' answers look so far.

- Pairs: the precision at the current duplicate threshold among the judged
  pairs whose cosine reaches it (with how many that is), from the vectors the
  index holds: no model runs.
- Queries: precision@10 of judged results: of the judged documents that hybrid
  search puts in a judged query's top 10, the share judged relevant. Each
  query's top 10 is searched once per corpus generation.

These are what a person can read between two answers; the evaluation
(``searchapp evaluate``) gives the full metrics with intervals.

Example:
    >>> e = estimate(app, "faq")                                      # doctest: +SKIP
    >>> e.pair_precision, e.pairs_above, e.query_precision            # doctest: +SKIP
    (0.8, 10, 0.5)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from searchapp.judgements import service
from searchapp.pairs.threshold import resolve_threshold
from searchapp.search.service import search
from searchapp.store import judgement_rows as rows
from searchapp.vectors.handle import CorpusHandle, as_handle

if TYPE_CHECKING:
    from searchapp.context import App

TOP_K = 10
NEW_SEARCHES = 3  # judged queries searched per call at most: one answer never waits on 40


@dataclass(frozen=True)
class Estimate:
    threshold: float
    pairs_judged: int
    pairs_above: int  # judged pairs with cosine ≥ threshold
    pair_precision: float | None  # of those, the share judged duplicate
    queries: int  # judged queries
    query_results: int  # judged documents in their query's top 10
    query_precision: float | None  # of those, the share judged relevant
    waiting: bool = False  # judged queries not searched: the model was not loaded yet


def pair_cosines(app: App, handle: CorpusHandle, pairs: Sequence[tuple[str, str]]
                 ) -> np.ndarray:
    """Cosine of each (a, b) external-id pair under the corpus' vectors; NaN where a
    document has no vector (deleted, or not embedded yet). Shape (len(pairs),)."""
    with app.db.session() as s:
        ids = rows.ids_by_external_id(s, handle.corpus_id, {x for p in pairs for x in p})
    found, vectors = handle.index.vectors_of(np.fromiter(ids.values(), np.int64, len(ids)))
    row = {int(d): i for i, d in enumerate(found.tolist())}
    out = np.full(len(pairs), np.nan, np.float32)
    for n, (a, b) in enumerate(pairs):
        ra, rb = row.get(ids.get(a, -1)), row.get(ids.get(b, -1))
        if ra is not None and rb is not None:
            out[n] = float(vectors[ra] @ vectors[rb])
    return out


@dataclass
class _TopCache:
    tops: dict[str, list[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _top_ids(app: App, handle: CorpusHandle, query: str, encode: bool = True
             ) -> list[str] | None:
    """The query's top 10 ids (searched once per generation); None when not searched yet
    and ``encode`` is False."""
    cache = app.memo.get_or_make(handle.corpus_id, handle.generation,
                                 ("estimate", "top", handle.model.id), _TopCache)
    with cache.lock:
        found = cache.tops.get(query)
    if found is None and not encode:
        return None
    if found is None:
        found = [h.id for h in search(app, handle, query, k=TOP_K)]
        with cache.lock:
            cache.tops[query] = found
    return found


def estimate(app: App, corpus: str | CorpusHandle, threshold: float | None = None,
             encode: bool = True) -> Estimate:
    """Pair precision at the threshold and query precision@10, from the judgements so far.

    Each judged query's top 10 is searched once per corpus generation, at most
    ``NEW_SEARCHES`` of them per call: with 40 judged queries and the model just
    loaded, the first answer after it waited 20 s for all 40. Queries not
    searched yet are left out and ``waiting`` says so; ``encode=False`` searches
    none (a page answering while the model loads).
    """
    handle = as_handle(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    judged = service.list_judgements(app, handle.name)
    pairs = [j for j in judged if j.kind == "pair"]
    cos = pair_cosines(app, handle, [(j.a, j.b) for j in pairs])
    above = np.flatnonzero(cos >= threshold)
    labels = np.array([j.label for j in pairs])
    pair_precision = float(labels[above].mean()) if len(above) else None
    by_query: dict[str, dict[str, int]] = {}
    for j in judged:
        if j.kind == "query":
            by_query.setdefault(j.query, {})[j.a] = j.label
    hits = relevant = 0
    waiting = False
    budget = NEW_SEARCHES if encode else 0
    for query, labelled in by_query.items():
        top = _top_ids(app, handle, query, encode=False)  # searched before: free
        if top is None and budget > 0:
            top = _top_ids(app, handle, query)
            budget -= 1
        waiting |= top is None
        for doc in top or []:
            if doc in labelled:
                hits += 1
                relevant += labelled[doc] >= 1
    return Estimate(threshold, len(pairs), len(above), pair_precision, len(by_query), hits,
                    relevant / hits if hits else None, waiting)
