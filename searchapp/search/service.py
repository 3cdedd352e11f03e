"""Search: semantic (by meaning), lexical (by words, BM25) or hybrid (both, fused), filtered.

The corpus is given by name or as an open ``CorpusHandle``; a page or a script
that runs many queries opens it once. Per query the work is one encoder pass,
one query of the document index and one of the passage index (semantic), one
full-text query (lexical: proportional to the documents holding a query word),
and one primary-key read of the k rows: nothing scans the corpus.

- **semantic**: cosine between the query's vector and each document's; a
  document longer than the model's window scores its best passage's cosine and
  its own vector's together (``searchapp.search.evidence``: a page that mentions
  everything once no longer beats the page about the subject) and the hit names
  that passage (``searchapp.embedding.passages``).
- **lexical**: the full-text index of the database (``store/fulltext.py``).
- **hybrid** (the default, chosen by ``benchmarks/retrieval_quality.py``):
  weighted reciprocal-rank fusion of the two candidate lists,
  score = Σ w / (k + rank) (``searchapp.search.fusion``: today's defaults, or the
  fusion fitted to the corpus' judged queries, ``searchapp.evaluation.fusion_fit``).
- **filters** (``where``): metadata conditions (``searchapp.search.filters``) applied
  inside each candidate search, so k hits come back whenever k documents pass:
  the semantic candidates are widened (×4, up to ``WIDEN_MAX``) and checked by
  id in SQL; a filter so selective that they still fall short is answered
  exactly over the documents that pass (up to ``EXACT_FILTER_MAX`` of them), or
  by hnswlib's filtered graph search above that; both read the passing ids in one
  SQL pass over the corpus' rows (the cost of a very selective filter).

Each hit carries both ranks and scores (semantic: cosine; lexical: BM25 on
SQLite, ``ts_rank_cd`` on PostgreSQL) and a snippet with the query's words marked.

Example:
    >>> hits = search(app, "captions", "a dog runs on the beach", k=3)   # doctest: +SKIP
    >>> [(h.id, round(h.score, 2)) for h in hits]                        # doctest: +SKIP
    [('images-812', 0.83), ...]
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass

import numpy as np

from searchapp.base.timing import StageTimes
from searchapp.context import App
from searchapp.errors import InvalidParameterError, check_range
from searchapp.search import rerank as reranking
from searchapp.search import translated_words
from searchapp.search.corpus_languages import query_stem_languages
from searchapp.search.coverage import SearchResults, collecting
from searchapp.search.evidence import DOCUMENT_WEIGHT, split_scores
from searchapp.search.filters import Condition, check_columns, parse_condition, where_sql
from searchapp.search.fusion import (  # noqa: F401 - the defaults, re-exported
    DEFAULT,
    FUSION_DEPTH,
    RRF_K,
    SEMANTIC_WEIGHT,
    Fusion,
    fusion_for,
)
from searchapp.search.hits import SearchHit, hit_json  # noqa: F401 - the hit, named here too
from searchapp.search.modes import DEFAULT_MODE, Mode, mode_named
from searchapp.search.modes import MODES as SEARCH_MODES
from searchapp.search.nearest import Candidate, nearest_documents, score_documents
from searchapp.search.query_filters import QueryPlan, understand
from searchapp.search.shards.engine import open_for_search
from searchapp.search.snippets import make_snippet
from searchapp.search.sources import hit_source, view_link
from searchapp.store import fulltext, repo
from searchapp.vectors.handle import CorpusHandle, open_corpus  # noqa: F401 - re-exported

MAX_K = 1000
MAX_QUERY_CHARS = 10_000
MODES = tuple(SEARCH_MODES)  # the names, for the API's schema and the CLI's choices
WIDEN = 4
WIDEN_MAX = 4096  # semantic candidates checked against a filter before the exact fallback
# documents passing a filter that are scored exactly; above, hnswlib's filtered search
# (hybrid_latency.py at 100k: exact 1.1 s for 100 ids, 2.4 s for 10,000; filtered HNSW
# 2.0 s and 0.47 s: the SQL pass is most of the first, fetching vectors of the second)
EXACT_FILTER_MAX = 2_000
_LEXICAL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lexical-search")


class _Counter:
    """How many of a thing run now (``with counter:`` around each), thread-safe.

    Example:
        >>> c = _Counter()
        >>> with c: inside = c.count
        >>> inside, c.count
        (1, 0)
    """

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def __enter__(self) -> _Counter:
        with self._lock:
            self.count += 1
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self.count -= 1


# searches running in this process: a query encoded beside others takes the path of a crowd
# (the 2-thread pool that sleeps between operators; searchapp.embedding.query_runtime)
_SEARCHING = _Counter()


_Candidate = Candidate  # the name the older tests and benchmarks import


def check_k(k: float | None) -> int:
    """``k`` as the number of results, if it is a whole number from 1 to ``MAX_K``.

    The one check of k, for the CLI, the pages and the API alike.

    Example:
        >>> check_k(10)
        10
        >>> try:
        ...     check_k(0)
        ... except InvalidParameterError as exc:
        ...     print(exc)
        Results (k) must be a whole number from 1 to 1,000; got 0.
    """
    if k is not None and float(k).is_integer() and 1 <= k <= MAX_K:
        return int(k)
    shown = "nothing" if k is None else f"{k:g}"
    raise InvalidParameterError(f"Results (k) must be a whole number from 1 to {MAX_K:,}; "
                                f"got {shown}.")


def validate_query(query: str, k: int, min_score: float | None) -> str:
    query = (query or "").strip()
    if not query:
        raise InvalidParameterError("The query is empty: type what you are looking for.")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidParameterError(f"The query is longer than {MAX_QUERY_CHARS:,} characters.")
    check_k(k)
    if min_score is not None:
        check_range("min_score", min_score, -1.0, 1.0)
    return query


def check_mode(mode: str) -> str:
    """``mode`` if it names a search mode (``modes.MODES``), else an error listing them."""
    return mode_named(mode).name


def search(app: App, corpus: str | CorpusHandle, query: str, k: int = 10,
           min_score: float | None = None, mode: str = DEFAULT_MODE,
           where: Sequence[str | Condition] | None = None,
           times: StageTimes | None = None, fusion: Fusion | None = None,
           rerank: bool = False) -> list[SearchHit]:
    """The k best documents for ``query``, best first.

    ``mode``: ``hybrid`` (default), ``semantic`` or ``lexical``. ``min_score``
    is a minimum cosine (semantic and hybrid). ``where``: conditions such as
    ``"year>=2024"`` (see ``searchapp.search.filters``), all of which a hit meets.
    ``times`` collects the milliseconds of each stage (``searchapp.base.timing``; the
    API's ``Server-Timing`` header): tokenize, encode (or query-cache), vector,
    passages, fulltext, fusion, rows, snippets (and rerank). ``fusion``: how hybrid
    fuses its lists (default: the corpus' fitted fusion, else ``fusion.DEFAULT``).
    ``rerank``: the corpus' reranker reorders the first ``rerank.DEPTH`` candidates
    (``searchapp.search.rerank``; NoRerankerError when the corpus has none).

    Example:
        >>> search(app, "tickets", "ERR-40417", k=3, where=["product=billing"])  # doctest: +SKIP
    """
    with _SEARCHING, collecting() as missing:
        hits = _search(app, corpus, query, k, min_score, mode, where, times, fusion, rerank)
    return SearchResults(hits, missing) if missing else hits


def as_handle(app: App, corpus: str | CorpusHandle) -> CorpusHandle:
    """The corpus ready to search: a handle as it is, a name opened on the configured
    engine (this process' index, or the corpus' shard servers: ``shards.engine``)."""
    return open_for_search(app, corpus)


def _search(app: App, corpus: str | CorpusHandle, query: str, k: int,
            min_score: float | None, mode: str, where: Sequence[str | Condition] | None,
            times: StageTimes | None, fusion: Fusion | None, rerank: bool) -> list[SearchHit]:
    query = validate_query(query, k, min_score)
    spec = mode_named(mode)
    if not spec.semantic and min_score is not None:
        raise InvalidParameterError("The minimum score is a cosine; lexical search has none. "
                                    "Leave it out, or use the semantic or hybrid mode.")
    handle = as_handle(app, corpus)
    dialect = app.db.engine.dialect.name
    plan = understand(query, handle.meta_columns, handle.corpus_id, dialect)
    query = plan.parsed.text  # what meaning and words rank by: no operators, no filters
    reranker = reranking.attached(app, handle.name) if rerank else None  # [rerank hook]
    wanted = k if reranker is None else max(k, reranking.DEPTH)
    conditions = [w if isinstance(w, Condition) else parse_condition(w) for w in where or []]
    check_columns(conditions, handle.meta_columns, handle.name)
    flt = combined_filter(conditions + plan.conditions, plan.text_conditions, dialect)
    if not plan.parsed.has_text:  # filters alone: the documents that pass, newest first
        return _newest(app, handle, wanted if reranker is None else k, flt, times)
    if spec.fuses and fusion is None:
        fusion = fusion_for(app, handle.corpus_id, handle.model.name)
    depth = max(wanted, fusion.depth) if spec.fuses else wanted
    weight = (fusion or DEFAULT).document_weight
    times = times if times is not None else StageTimes()
    # both lists: the full-text query runs on its own thread and connection beside the
    # encoder and the vector search (all release the GIL), so it costs about the slower
    # side; the lexical list alone runs here (a hand-over to a thread costs 0.1-0.2 ms)
    words = translated_words.WordsSide(query)
    if spec.fuses:  # on a multilingual corpus, its languages' words for the query's too
        with times.stage("translate"):
            words = translated_words.words_side(app, handle, query)
    lexical = _LEXICAL.submit(copy_context().run, _lexical, app, handle, words.text, depth,
                              flt, times) \
        if spec.fuses else None
    semantic, vector = [], None
    if spec.semantic:
        vector = app.encoder(handle.model.name).encode_query(
            query, times, alone=_SEARCHING.count <= 1)
        semantic = _semantic(app, handle, vector, depth, flt, times, weight)
    found = lexical.result() if lexical else \
        _lexical(app, handle, query, depth, flt, times) if spec.lexical else []
    with times.stage("fusion"):
        ranked = _rank(spec, semantic, found, wanted, query, fusion or DEFAULT,
                       words.in_corpus_language)
        if vector is not None:
            _fill_cosines(handle, vector, ranked, weight)
            if min_score is not None:
                ranked = [c for c in ranked if c.semantic_score is not None
                          and c.semantic_score >= min_score]
    hits = _hits(app, ranked, fulltext.query_words(words.text), times, handle)
    if reranker is not None:  # [rerank hook] the cross-encoder reorders the first candidates
        return reranking.rerank_hits(reranker, query, hits, k, times)
    return hits


def combined_filter(conditions: Sequence[Condition], text_conditions: Sequence[tuple[str, dict]],
                    dialect: str) -> tuple[str, dict] | None:
    """Metadata conditions and full-text conditions AND-ed into one filter over
    ``documents d`` (None when there is none): what every candidate search applies."""
    parts, params = [], {}
    if conditions:
        sql, params = where_sql(conditions, dialect)
        parts.append(sql)
    for sql, p in text_conditions:
        if sql != "1=1":
            parts.append(sql)
            params = {**params, **p}
    return (" AND ".join(f"({p})" for p in parts), params) if parts else None


def understood(app: App, corpus: str | CorpusHandle, query: str) -> QueryPlan:
    """What ``search`` makes of a typed query in this corpus: its text, the filters it
    applies (the page's chips) and a notice for each one it could not.

    Example:
        >>> understood(app, "docs", "lease type:pdf color:red").notices   # doctest: +SKIP
        ["color: is not a field here, so it was searched as text. Fields: type, ..."]
    """
    handle = as_handle(app, corpus)
    return understand(query or "", handle.meta_columns, handle.corpus_id,
                      app.db.engine.dialect.name)


def _newest(app: App, handle: CorpusHandle, k: int, flt: tuple[str, dict] | None,
            times: StageTimes | None) -> list[SearchHit]:
    """A query of filters only: the k newest documents that pass them (score 0)."""
    if flt is None:
        raise InvalidParameterError("The query is empty: type what you are looking for.")
    times = times if times is not None else StageTimes()
    with times.stage("fulltext"), app.db.reader() as conn:
        ids = fulltext.newest_matching_ids(conn, handle.corpus_id, flt, k)
    return _hits(app, [_Ranked(doc, 0.0) for doc in ids], [], times, handle)


def _lexical(app: App, handle: CorpusHandle, query: str, n: int,
             flt: tuple[str, dict] | None, times: StageTimes) -> list[tuple[int, float]]:
    """The lexical candidates: the shard servers' full text where they keep it, else the
    database's."""
    if handle.shards is not None:
        with times.stage("fulltext"):
            found = _shards_lexical(app, handle, query, n, flt)
        if found is not None:
            return found
    with times.stage("fulltext"):
        stemmed = query_stem_languages(app, handle, query)  # its words' stems in its language
    with times.stage("fulltext"), app.db.reader() as conn:
        return fulltext.lexical_search(conn, handle.corpus_id, query, n, flt or ("1=1", {}),
                                       documents=handle.documents, stem_languages=stemmed)


def _shards_lexical(app: App, handle: CorpusHandle, query: str, n: int,
                    flt: tuple[str, dict] | None) -> list[tuple[int, float]] | None:
    """The shards' words side; None where the database's must answer (shards served
    without their full text, or a filter too selective for the shards' best
    ``TOP_WIDTH * n``: the database then ranks only the documents that pass it).
    A filter is evaluated in the database on the shards' candidates, as the app's
    SQLite index does with its own (``fulltext._sqlite_top``)."""
    if flt is None:
        return handle.shards.lexical(query, n, query_stem_languages(app, handle, query))
    wide = fulltext.TOP_WIDTH * n
    top = handle.shards.lexical(query, wide, query_stem_languages(app, handle, query))
    if top is None:
        return None
    with app.db.reader() as conn:
        passing = fulltext.matching_ids(conn, handle.corpus_id, [d for d, _ in top], flt)
    kept = [(d, score) for d, score in top if d in passing]
    return kept[:n] if len(kept) >= n or len(top) < wide else None


def _semantic(app: App, handle: CorpusHandle, vector: np.ndarray, n: int,
              flt: tuple[str, dict] | None, times: StageTimes,
              weight: float = DOCUMENT_WEIGHT) -> list[Candidate]:
    """The semantic candidates; a connection is taken only where a filter needs one."""
    if flt is None:
        return semantic_candidates(handle, vector, n, times=times, weight=weight)
    with app.db.reader() as conn:
        return semantic_candidates(handle, vector, n, conn, flt, times, weight)


# ---- semantic --------------------------------------------------------------------------
def semantic_candidates(handle: CorpusHandle, vector: np.ndarray, n: int, conn=None,
                        flt: tuple[str, dict] | None = None,
                        times: StageTimes | None = None,
                        weight: float = DOCUMENT_WEIGHT) -> list[Candidate]:
    """The ``n`` documents closest to ``vector`` (passing ``flt``), best first; a split
    document scored by its best passage and its whole vector (``weight``: ``evidence``)."""
    total = handle.embedded
    want = n
    while True:
        found = _nearest(handle, vector, want, times, weight)
        if flt is not None:
            ok = fulltext.matching_ids(conn, handle.corpus_id, [c.doc for c in found], flt)
            found = [c for c in found if c.doc in ok]
        if len(found) >= n or want >= total:
            return found[:n]
        if want >= WIDEN_MAX:
            return _filtered_exact(handle, vector, n, conn, flt, weight)
        want = min(want * WIDEN, total)


def _nearest(handle: CorpusHandle, vector: np.ndarray, n: int,
             times: StageTimes | None = None, weight: float = 0.0) -> list[Candidate]:
    """The nearest documents from the handle's own indexes, or from its shards' servers."""
    if handle.shards is not None:
        with (times if times is not None else StageTimes()).stage("shards"):
            return handle.shards.nearest(vector, n, weight)
    return nearest_documents(handle.index, handle.passages, vector, n, times, weight)


def _scores_of(handle: CorpusHandle, vector: np.ndarray, docs: list[int],
               weight: float) -> dict[int, Candidate]:
    """Exact semantic scores of ``docs`` (split documents: as ``evidence``)."""
    if handle.shards is not None:
        return handle.shards.score(vector, docs, weight)
    return score_documents(handle.index, handle.passages, vector, docs, weight)


def _filtered_exact(handle: CorpusHandle, vector: np.ndarray, n: int, conn,
                    flt: tuple[str, dict], weight: float = DOCUMENT_WEIGHT
                    ) -> list[Candidate]:
    """A selective filter: score the documents that pass exactly (or by filtered HNSW)."""
    ids = fulltext.all_matching_ids(conn, handle.corpus_id, flt)
    if len(ids) <= EXACT_FILTER_MAX or handle.shards is not None:
        found = _scores_of(handle, vector, ids, weight)
    else:
        allowed = set(ids)
        labels, scores = handle.index.search_accepting(vector, n, allowed.__contains__)
        found = {int(d): Candidate(int(d), float(s)) for d, s in zip(labels, scores, strict=True)}
        if handle.passages is not None:
            split = [d for d in found if d in handle.passages.passage_counts]
            for doc, (number, score) in split_scores(handle.passages, vector, split,
                                                     weight).items():
                found[doc] = Candidate(doc, score, number)
    return sorted(found.values(), key=lambda c: -c.score)[:n]


# ---- fusion ------------------------------------------------------------------------------
@dataclass
class _Ranked:
    doc: int
    score: float
    semantic_rank: int | None = None
    semantic_score: float | None = None
    lexical_rank: int | None = None
    lexical_score: float | None = None
    passage: int | None = None


def _rank(mode: Mode, semantic: list[Candidate], lexical: list[tuple[int, float]], k: int,
          query: str = "", fusion: Fusion = DEFAULT, in_corpus_language: bool | None = None
          ) -> list[_Ranked]:
    """The k best of the mode: each candidate of either list once, ordered by the mode
    (``in_corpus_language``: the query's words are a multilingual corpus' own; see
    ``Fusion.weights``)."""
    out: dict[int, _Ranked] = {}
    for rank, c in enumerate(semantic, start=1):
        out[c.doc] = _Ranked(c.doc, c.score, rank, c.score, passage=c.passage)
    for rank, (doc, score) in enumerate(lexical, start=1):
        hit = out.setdefault(doc, _Ranked(doc, score))
        hit.lexical_rank, hit.lexical_score = rank, score
    weights = fusion.weights(query, in_corpus_language) if mode.fuses else (1.0, 1.0)
    return mode.order(out, semantic, lexical, weights, fusion.rrf_k)[:k]


def fusion_weights(query: str) -> tuple[float, float]:
    """(semantic, lexical) weights of the fusion for ``query``.

    Meaning weighs 3 to 1, except when a query word holds a digit (a code, a
    version, a number: what the encoder reads worst), where words weigh as much.
    Chosen by ``benchmarks/retrieval_quality.py`` among weights 1-3 and constants
    10-60: the only setting that kept paraphrase MRR@10 within 0.5 points of
    semantic search while keeping the keyword set's gain.

    Example:
        >>> fusion_weights("a dog on the beach"), fusion_weights("XR-7 firmware")
        ((3.0, 1.0), (1.0, 1.0))
    """
    return DEFAULT.weights(query)


def _fill_cosines(handle: CorpusHandle, vector: np.ndarray, ranked: list[_Ranked],
                  weight: float = DOCUMENT_WEIGHT) -> None:
    """Exact semantic scores (split documents: as ``evidence``) for hits found by words only."""
    missing = [r for r in ranked if r.semantic_score is None]
    if not missing:
        return
    found = _scores_of(handle, vector, [r.doc for r in missing], weight)
    for r in missing:
        if r.doc in found:
            c = found[r.doc]
            r.passage, r.semantic_score = c.passage, round(float(c.score), 6)


# ---- rows --------------------------------------------------------------------------------
def _hits(app: App, ranked: list[_Ranked], words: list[str],
          times: StageTimes | None = None, handle: CorpusHandle | None = None
          ) -> list[SearchHit]:
    """Ranked documents → SearchHits with their rows, passage spans and snippets."""
    times = times if times is not None else StageTimes()
    with times.stage("rows"), app.db.reader() as conn:
        docs = repo.documents_by_id(conn, [r.doc for r in ranked])
        with_passage = [r.doc for r in ranked if r.passage is not None]
        spans = _spans(conn, handle, with_passage) if with_passage else {}
        files = [i for i, d in docs.items() if "sha256" in d.meta and "path" in d.meta]
        layouts = repo.layouts_by_id(conn, files) if files else {}
    with times.stage("snippets"):
        return _make_hits(ranked, docs, spans, layouts, words,
                          handle.name if handle is not None else None)


def _spans(conn, handle: CorpusHandle | None, docs: list[int]) -> dict[int, np.ndarray]:
    """The passages' spans of ``docs``: the passage index keeps those of recent hits."""
    if handle is None or handle.passages is None:
        return repo.passage_spans(conn, docs)
    return handle.passages.spans_of(
        docs, lambda missing: repo.passage_spans(conn, missing, handle.model.id))


def _language(meta: dict | None) -> str | None:
    """A document's detected (or given) language code, for its snippet's stems."""
    lang = (meta or {}).get("lang")
    return lang if isinstance(lang, str) else None


def _make_hits(ranked: list[_Ranked], docs: dict, spans: dict, layouts: dict,
               words: list[str], corpus: str | None) -> list[SearchHit]:
    hits = []
    for r in ranked:
        doc = docs.get(r.doc)
        if doc is None:  # deleted since the index was read
            continue
        span = None
        if r.passage is not None and r.doc in spans and r.passage < len(spans[r.doc]):
            span = tuple(int(x) for x in spans[r.doc][r.passage])
        snippet = make_snippet(doc.text, words, span, language=_language(doc.meta))
        at, layout = span[0] if span else snippet.at, layouts.get(r.doc)
        source = hit_source(doc.meta, layout, at)
        view = view_link(corpus, doc.external_id, layout, at, span or snippet.region) \
            if source and corpus else None
        hits.append(SearchHit(
            doc.external_id, doc.text, round(float(r.score), 6), dict(doc.meta), r.doc,
            r.semantic_rank, _round(r.semantic_score), r.lexical_rank, _round(r.lexical_score),
            r.passage, span, snippet.text, snippet.highlights, source, view))
    return hits


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


# ---- the older entry points (duplicates' check uses them) ---------------------------------
def search_vector(app: App, handle: CorpusHandle, vector: np.ndarray, k: int = 10,
                  min_score: float | None = None) -> list[SearchHit]:
    """Semantic search with a query vector (dim,) already encoded."""
    ranked = [_Ranked(c.doc, c.score, i, c.score, passage=c.passage)
              for i, c in enumerate(_nearest(handle, vector, k), start=1)]
    if min_score is not None:
        ranked = [r for r in ranked if r.score >= min_score]
    return _hits(app, ranked, [], handle=handle)


def hits_for(app: App, labels, scores, min_score: float | None = None) -> list[SearchHit]:
    """Index labels and scores → SearchHits (dropping those under ``min_score``)."""
    ranked = [_Ranked(int(label), float(score), i, float(score))
              for i, (label, score) in enumerate(zip(labels, scores, strict=True), start=1)
              if min_score is None or score >= min_score]
    return _hits(app, ranked, [])
