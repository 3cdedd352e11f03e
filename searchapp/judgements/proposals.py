"""Which to ask next: the items whose answer teaches the most, a few strategies mixed.

A person's time is the scarce thing, so the Label page, the review queue and
``searchapp judge next`` ask about items where an answer changes something:

- ``threshold`` (pairs): neighbouring documents whose cosine lies closest to the
  model's duplicate threshold. Far above or below it the answer is already
  known; near it, it decides where the threshold belongs (uncertainty sampling).
  Exact copies (the same text once normalised, as the duplicates page defines
  them) are never asked: nobody needs to review them.
- ``disagreement`` (query → document): a document that search by meaning ranks
  near the top for a query and search by words ranks low or not at all, or the
  reverse. One of the two is wrong about it; the answer says which. Queries
  are the corpus' judged queries first, then document texts used as queries
  (the document itself left out).
- ``border`` (pairs, when a clusters result is stored): close neighbours the
  clustering put in different clusters: duplicates split apart, or a border
  drawn in the right place.

The strategies are interleaved (one from each in turn, a strategy that runs out
leaves its turns to the others), so none starves another; an item already
judged, or in ``exclude``, is never proposed; a document appears at most once
per batch of pair proposals. The neighbour pairs, their order and the query
rankings are computed once per corpus generation and kept in the App's memo:
after the first call (about a second for 20,000 documents), a batch costs
milliseconds, so a person labelling one item a second never waits.

Example:
    >>> [p.reason for p in propose(app, "faq", 2)]                    # doctest: +SKIP
    ['cosine 0.801, at the duplicate threshold 0.800',
     'meaning ranks it #2, words do not find it']
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from searchapp.judgements.items import check_kind, normalise_query
from searchapp.pairs.text_keys import normalise
from searchapp.pairs.threshold import resolve_threshold
from searchapp.search.service import semantic_candidates
from searchapp.store import fulltext, repo
from searchapp.store import judgement_rows as rows
from searchapp.vectors.handle import CorpusHandle, as_handle

if TYPE_CHECKING:
    from searchapp.context import App

POOL_DOCS = 20_000  # documents whose neighbours form the pair pool (a fixed sample above it)
POOL_K = 10  # neighbours per document in the pool
EXACT_COSINE = 0.9999  # at or above: the same text (a quick first filter; texts decide)
RANK_DEPTH = 30  # results of each search compared for a disagreement
TOP = 5  # a document in one search's top TOP ...
QUERY_DOCS = 2_000  # documents used as queries, at most (a fixed sample of them)
QUERY_CHARS = 300  # a document used as a query: its beginning
CLUSTERS_KIND = "clusters"  # the analyses kind of stored cluster results
NEW_QUERIES = 40  # queries searched for disagreements per call, at most
FETCH_CHUNK = 256  # pair proposals whose documents are fetched in one query


@dataclass(frozen=True)
class Proposal:
    """One item to ask about, with its texts and why it was chosen.

    ``score`` orders proposals within a strategy (higher: ask sooner).
    ``key`` is (kind, query, a, b) as a judgement of it would be stored.
    """

    kind: str
    query: str | None
    a: str
    b: str | None
    a_text: str
    b_text: str | None
    reason: str
    score: float
    strategy: str = ""
    cosine: float | None = None  # the pair's cosine, or the query's to the document

    @property
    def key(self) -> tuple[str, str | None, str, str | None]:
        return (self.kind, self.query, self.a, self.b)


@dataclass
class _PairPool:
    """Neighbour pairs of the sampled documents, each once (a < b by document id)."""

    a: np.ndarray  # (p,) int64 document ids
    b: np.ndarray
    score: np.ndarray  # (p,) float32 cosine


@dataclass
class _QueryCache:
    """Per corpus generation: each query's disagreements, computed once."""

    found: dict[str, list[tuple[int, float, str, float]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


# ---- what is already answered ------------------------------------------------------------
def judged_keys(app: App, corpus_id: int) -> set[tuple]:
    """(kind, query, a, b) of every judgement of the corpus."""
    with app.db.session() as s:
        return {(r.kind, r.query, r.a_id, r.b_id) for r in rows.judgement_rows(s, corpus_id)}


def _exclusions(exclude: Iterable) -> set[tuple]:
    """Proposals, or (kind, query, a, b) keys, as keys (pairs in stored order)."""
    out = set()
    for item in exclude:
        kind, query, a, b = item.key if isinstance(item, Proposal) else tuple(item)
        if kind == "pair":
            a, b = sorted((a, b))
        else:
            query = normalise_query(query or "")
        out.add((kind, query, a, b))
    return out


# ---- pairs -------------------------------------------------------------------------------
def _sample(labels: np.ndarray, limit: int, seed: int) -> np.ndarray:
    if len(labels) <= limit:
        return labels
    return np.sort(np.random.default_rng(seed).choice(labels, limit, replace=False))


def pair_pool(app: App, handle: CorpusHandle) -> _PairPool:
    """The neighbour pairs of (a fixed sample of) the corpus, kept per generation."""

    def make() -> _PairPool:
        labels = _sample(handle.index.labels(), POOL_DOCS, handle.corpus_id)
        parts_a, parts_b, parts_s = [], [], []
        for batch, found, scores in handle.index.iter_neighbours(POOL_K, labels=labels):
            parts_a.append(np.repeat(batch, found.shape[1]))
            parts_b.append(found.ravel())
            parts_s.append(scores.ravel())
        if not parts_a:
            empty = np.zeros(0, np.int64)
            return _PairPool(empty, empty, np.zeros(0, np.float32))
        a, b = np.concatenate(parts_a), np.concatenate(parts_b)
        s = np.concatenate(parts_s).astype(np.float32)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        keep = (lo != hi) & (lo >= 0)
        lo, hi, s = lo[keep], hi[keep], s[keep]
        _, first = np.unique(np.stack([lo, hi], axis=1), axis=0, return_index=True)
        return _PairPool(lo[first], hi[first], s[first])

    return app.memo.get_or_make(handle.corpus_id, handle.generation,
                                ("proposals", "pairs", handle.model.id), make)


def _threshold_order(pool: _PairPool, threshold: float) -> np.ndarray:
    """Pool rows by distance of their cosine to the threshold, closest first; no copies."""
    live = np.flatnonzero(pool.score < EXACT_COSINE)
    return live[np.argsort(np.abs(pool.score[live] - threshold), kind="stable")]


def _border_order(app: App, handle: CorpusHandle, pool: _PairPool) -> np.ndarray:
    """Pool rows whose documents sit in different clusters of the newest stored result,
    most similar first; empty without a current clusters result."""
    with app.db.session() as s:
        stored = repo.current_analyses(s, handle.corpus_id, handle.model.id, CLUSTERS_KIND,
                                       handle.generation)
        arrays = repo.unpack_arrays(stored[0].arrays) if stored else {}
    if "doc_ids" not in arrays or "cluster" not in arrays:
        return np.zeros(0, np.int64)
    doc_ids, cluster = arrays["doc_ids"].astype(np.int64), arrays["cluster"].astype(np.int64)
    order = np.argsort(doc_ids)
    doc_ids, cluster = doc_ids[order], cluster[order]

    def cluster_of(ids: np.ndarray) -> np.ndarray:
        at = np.clip(np.searchsorted(doc_ids, ids), 0, len(doc_ids) - 1)
        return np.where(doc_ids[at] == ids, cluster[at], -2)  # -2: not in the result

    ca, cb = cluster_of(pool.a), cluster_of(pool.b)
    split = np.flatnonzero((ca != cb) & (ca >= 0) & (cb >= 0) & (pool.score < EXACT_COSINE))
    return split[np.argsort(-pool.score[split], kind="stable")]


def _pair_stream(app: App, handle: CorpusHandle, strategy: str, threshold: float
                 ) -> Iterator[tuple[int, int, float, str, float]]:
    """(a id, b id, cosine, reason, score) of one pair strategy, best first (their
    documents fetched a chunk ahead)."""
    pool = pair_pool(app, handle)
    key = ("proposals", strategy, handle.model.id, round(threshold, 4))
    if strategy == "threshold":
        order = app.memo.get_or_make(handle.corpus_id, handle.generation, key,
                                     lambda: _threshold_order(pool, threshold))
    else:
        order = _border_order(app, handle, pool)
    docs = documents(app, handle)
    for start in range(0, len(order), FETCH_CHUNK):
        rows_ = order[start:start + FETCH_CHUNK]
        docs.fetch(np.r_[pool.a[rows_], pool.b[rows_]].tolist())
        yield from _pair_items(pool, rows_.tolist(), strategy, threshold)


def _pair_items(pool: _PairPool, chosen: list[int], strategy: str, threshold: float
                ) -> Iterator[tuple[int, int, float, str, float]]:
    for row in chosen:
        cos = float(pool.score[row])
        if strategy == "threshold":
            side = "above" if cos >= threshold else "below"
            reason = (f"cosine {cos:.3f}, just {side} the duplicate threshold {threshold:.3f}")
            score = 1.0 - abs(cos - threshold)
        else:
            reason = f"cosine {cos:.3f}, but the clustering put them in different clusters"
            score = cos
        yield int(pool.a[row]), int(pool.b[row]), cos, reason, score


# ---- queries -----------------------------------------------------------------------------
def _disagreements(handle: CorpusHandle, conn, query: str, vector: np.ndarray,
                   itself: int | None) -> list[tuple[int, float, str, float]]:
    """(document, score, reason, cosine) where meaning and words rank a document far apart."""
    semantic = [c for c in semantic_candidates(handle, vector, RANK_DEPTH + 1) if c.doc != itself]
    lexical = [d for d, _ in fulltext.lexical_search(conn, handle.corpus_id, query,
                                                     RANK_DEPTH + 1, documents=handle.documents)
               if d != itself]
    sem_rank = {c.doc: r for r, c in enumerate(semantic[:RANK_DEPTH], start=1)}
    cosine = {c.doc: c.score for c in semantic}
    lex_rank = {d: r for r, d in enumerate(lexical[:RANK_DEPTH], start=1)}
    if not lex_rank:
        return []  # no word of the query found anything: nothing to compare
    out = []
    for doc in set(sem_rank) | set(lex_rank):
        rs, rl = sem_rank.get(doc), lex_rank.get(doc)
        best = min(r for r in (rs, rl) if r is not None)
        if best > TOP:
            continue
        gap = abs(1.0 / (rs or RANK_DEPTH + 1) - 1.0 / (rl or RANK_DEPTH + 1))
        if gap < 0.1:  # about as high in both (or as low): nothing to learn
            continue

        def said(r):
            return f"#{r}" if r is not None else "not in their first " + str(RANK_DEPTH)

        out.append((doc, gap, f"meaning ranks it {said(rs)}, words {said(rl)}",
                    float(cosine.get(doc, np.nan))))
    return sorted(out, key=lambda x: -x[1])


def _query_sources(app: App, handle: CorpusHandle, cache: _QueryCache, encode: bool
                   ) -> Iterator[tuple[str, np.ndarray | None, int | None]]:
    """(query, its vector, the document it came from or None): judged queries, then
    documents. The vector is None for a query whose disagreements are cached already.
    Without ``encode``, judged queries not searched before wait for a later call."""
    with app.db.session() as s:
        judged = sorted({r.query for r in rows.judgement_rows(s, handle.corpus_id, "query")})
    if not encode:
        with cache.lock:
            judged = [q for q in judged if q in cache.found]
    for start in range(0, len(judged), 64):
        part = judged[start:start + 64]
        with cache.lock:
            new = [q for q in part if q not in cache.found]
        vectors = dict(zip(new, app.encoder(handle.model.name).encode(new), strict=True)) \
            if new else {}
        for q in part:
            yield q, vectors.get(q), None
    docs = _sample(handle.index.labels(), QUERY_DOCS, handle.corpus_id + 1)
    docs = docs[np.random.default_rng(handle.corpus_id).permutation(len(docs))]
    for start in range(0, len(docs), 64):
        part = docs[start:start + 64]
        with app.db.session() as s:
            texts = repo.document_texts(s, handle.corpus_id, part.tolist())
        found, vectors = handle.index.vectors_of(part)
        for doc, vector in zip(found.tolist(), vectors, strict=True):
            if doc in texts:
                text = normalise_query(texts[doc][1][:QUERY_CHARS])
                if text:
                    yield text, vector, doc


def _query_stream(app: App, handle: CorpusHandle, encode: bool = True
                  ) -> Iterator[tuple[str, int, float, str, float]]:
    """(query, document, score, reason, cosine) of the disagreement strategy.

    At most ``NEW_QUERIES`` queries are searched per call (a few milliseconds
    each); the rest wait for the next call, so one call never takes seconds.
    """
    cache = app.memo.get_or_make(handle.corpus_id, handle.generation,
                                 ("proposals", "queries", handle.model.id), _QueryCache)
    budget = NEW_QUERIES
    with app.db.reader() as conn:
        for query, vector, itself in _query_sources(app, handle, cache, encode):
            with cache.lock:
                found = cache.found.get(query)
            if found is None:
                if vector is None:
                    continue
                if budget <= 0:
                    return
                budget -= 1
                found = _disagreements(handle, conn, query, vector, itself)
                with cache.lock:
                    cache.found[query] = found
            documents(app, handle).fetch(doc for doc, *_ in found)
            for doc, score, reason, cos in found:
                yield query, doc, score, reason, cos


# ---- the mix -----------------------------------------------------------------------------
def _streams(app: App, handle: CorpusHandle, kind: str | None, threshold: float,
             encode: bool) -> list[tuple[str, Iterator]]:
    streams = []
    if kind in (None, "pair"):
        streams.append(("threshold", _pair_stream(app, handle, "threshold", threshold)))
    if kind in (None, "query"):
        streams.append(("disagreement", _query_stream(app, handle, encode)))
    if kind in (None, "pair"):
        streams.append(("border", _pair_stream(app, handle, "border", threshold)))
    return streams


def propose(app: App, corpus: str | CorpusHandle, n: int, kind: str | None = None,
            exclude: Iterable = (), threshold: float | None = None, encode: bool = True
            ) -> list[Proposal]:
    """Up to ``n`` items to ask about next, the strategies taking turns.

    ``kind``: 'pair' or 'query' for one kind only. ``exclude``: proposals or
    (kind, query, a, b) keys not to propose (skipped ones, those on screen).
    ``threshold``: the duplicate threshold pairs are chosen around (default: the
    model's). Never an item the corpus has a judgement of. Fewer than ``n`` when
    the strategies run out (a tiny corpus). ``encode=False`` never runs the model
    (judged queries it has not searched yet wait; documents used as queries have
    their vectors): for a page that must answer while the model still loads.

    Example:
        >>> batch = propose(app, "faq", 20, kind="pair")              # doctest: +SKIP
        >>> batch[0].a_text, batch[0].b_text, batch[0].reason           # doctest: +SKIP
    """
    check_kind(kind)
    n = max(0, int(n))
    handle = as_handle(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    skip = judged_keys(app, handle.corpus_id) | _exclusions(exclude)
    streams = _streams(app, handle, kind, threshold, encode)
    docs = documents(app, handle)
    picked: list[tuple] = []  # (strategy, key, (a id, b id), cosine, reason, score)
    used_docs: set[int] = set()
    while len(picked) < n and streams:
        for strategy, stream in list(streams):
            item = _next_new(stream, strategy, docs, skip, used_docs)
            if item is None:
                streams.remove((strategy, stream))
                continue
            picked.append(item)
            skip.add(item[1])
            if len(picked) >= n:
                break
    return [_proposal(docs, *p) for p in picked]


class _Documents:
    """(external id, text) of document ids, fetched in batches and kept per generation,
    so skipping a thousand judged pairs costs dictionary lookups, not queries."""

    def __init__(self, app: App, corpus_id: int):
        self.app, self.corpus_id = app, corpus_id
        self.known: dict[int, tuple[str, str]] = {}
        self.absent: set[int] = set()
        self.lock = threading.Lock()

    def fetch(self, ids: Iterable[int]) -> None:
        with self.lock:
            missing = sorted({int(i) for i in ids} - self.known.keys() - self.absent)
        if not missing:
            return
        with self.app.db.session() as s:
            found = repo.document_texts(s, self.corpus_id, missing)
        with self.lock:
            self.known.update(found)
            self.absent.update(set(missing) - found.keys())

    def external(self, doc: int) -> str | None:
        row = self.known.get(doc)
        return row[0] if row else None

    def text(self, doc: int) -> str:
        return self.known[doc][1]

    def same_text(self, a: int, b: int) -> bool:
        """Whether two documents are the same text once normalised (an exact copy, which
        the duplicates page lists without asking anyone)."""
        return normalise(self.text(a)) == normalise(self.text(b))


def documents(app: App, handle: CorpusHandle) -> _Documents:
    return app.memo.get_or_make(handle.corpus_id, handle.generation, ("proposals", "docs"),
                                lambda: _Documents(app, handle.corpus_id))


def _next_new(stream: Iterator, strategy: str, docs: _Documents, skip: set,
              used_docs: set[int]) -> tuple | None:
    """The stream's next item that is not judged, excluded or (pairs) reusing a document."""
    for item in stream:
        if strategy == "disagreement":
            query, doc, score, reason, cos = item
            name = docs.external(doc)
            if name is None:
                continue
            key = ("query", query, name, None)
            ids = (doc, None)
        else:
            a, b, cos, reason, score = item
            if a in used_docs or b in used_docs:
                continue
            name_a, name_b = docs.external(a), docs.external(b)
            if name_a is None or name_b is None or docs.same_text(a, b):
                continue
            ids = (a, b) if name_a < name_b else (b, a)
            key = ("pair", None, *sorted((name_a, name_b)))
        if key in skip:
            continue
        if key[0] == "pair":
            used_docs.update(ids)
        return (strategy, key, ids, cos, reason, score)
    return None


def _proposal(docs: _Documents, strategy: str, key: tuple, ids: tuple, cos: float | None,
              reason: str, score: float) -> Proposal:
    kind, query, a, b = key
    ia, ib = ids
    return Proposal(kind, query, a, b, docs.text(ia), docs.text(ib) if ib is not None else None,
                    reason, round(float(score), 6), strategy,
                    None if cos is None or np.isnan(cos) else round(float(cos), 4))
