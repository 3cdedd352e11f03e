"""Each judged query's semantic and lexical candidates, found once; every mode ranked from them.

Evaluating search per mode used to run the whole search per query per mode: three
encoder passes, three index queries and, for each of 100 hits, the row read and
a snippet nobody looks at. Here each query is encoded once, its semantic list
(``search.service.semantic_candidates``) and its lexical list
(``store.fulltext.lexical_search``) are taken ``depth`` deep once, and the
semantic, lexical and hybrid rankings are all read from those two lists, hybrid
by the same reciprocal-rank fusion ``search`` computes (``search.fusion``). So
the rankings are the ones ``search(app, handle, q, k=depth, mode=m)`` returns
(``tests/test_fusion.py`` checks it on a real corpus), at a fraction of the cost,
and a fusion fit can re-fuse the same lists for every candidate fusion in numpy.

Queries are encoded with ``encode_query``, the vectors ``search`` uses: the
batch path (``encode``) may run in bf16 on a CPU that has it, whose vectors
differ slightly and would reorder near ties.

Example:
    >>> lists = candidate_lists(app, handle, ["reset my password"])       # doctest: +SKIP
    >>> ranking(lists[0], "hybrid", DEFAULT, k=10)[:3]                    # doctest: +SKIP
    array([17,  4, 23])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from searchapp.context import App
from searchapp.search.corpus_languages import query_stem_languages
from searchapp.search.fusion import Fusion, rrf_scores
from searchapp.search.modes import mode_named
from searchapp.search.service import semantic_candidates, validate_query
from searchapp.store import fulltext
from searchapp.vectors.handle import CorpusHandle

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class QueryLists:
    """One query's candidates, document ids (primary keys) best first, ``depth`` deep."""

    query: str  # the query as search reads it (stripped)
    semantic: np.ndarray  # (n,) int64
    lexical: np.ndarray  # (m,) int64


def candidate_lists(app: App, handle: CorpusHandle, queries: Sequence[str], depth: int,
                    semantic: bool = True, lexical: bool = True,
                    progress: Progress | None = None) -> list[QueryLists]:
    """Each query's semantic and lexical candidates, ``depth`` deep, found once.

    ``semantic``/``lexical`` False skips that side (its lists come back empty).
    """
    report = progress or (lambda done, total, message: None)
    texts = [validate_query(q, depth, None) for q in queries]
    encoder = app.encoder(handle.model.name) if semantic else None
    if encoder is not None and len(texts) > 1:
        encoder.query_runtime()  # the fast query path, built once before the first query
    out = []
    with app.db.reader() as conn:
        for i, text in enumerate(texts):
            sem = np.zeros(0, np.int64)
            if encoder is not None:
                vector = encoder.encode_query(text)
                sem = np.array([c.doc for c in semantic_candidates(handle, vector, depth)],
                               dtype=np.int64)
            lex = np.zeros(0, np.int64)
            if lexical:
                lex = np.array([d for d, _ in fulltext.lexical_search(
                    conn, handle.corpus_id, text, depth, ("1=1", {}),
                    documents=handle.documents,
                    stem_languages=query_stem_languages(app, handle, text))], dtype=np.int64)
            out.append(QueryLists(text, sem, lex))
            report(i + 1, len(texts), f"Searching judged query {i + 1} of {len(texts)}")
    return out


def ranking(lists: QueryLists, mode: str, fusion: Fusion, k: int) -> np.ndarray:
    """The first ``k`` document ids of ``mode`` for this query, as ``search`` ranks them.

    Hybrid fuses both lists taken max(k, fusion.depth) deep, as ``search`` does,
    ties broken by the semantic rank (lexical-only documents last among equals).
    """
    spec = mode_named(mode)
    if not spec.lexical:
        return lists.semantic[:k]
    if not spec.semantic:
        return lists.lexical[:k]
    depth = max(k, fusion.depth)
    docs, sem_rank, lex_rank = rank_table(lists, depth)
    scores = rrf_scores(fusion, lists.query, sem_rank, lex_rank, depth)
    order = np.lexsort((np.where(sem_rank > 0, sem_rank, 10**9), -scores))
    return docs[order][:k]


def rank_table(lists: QueryLists, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of both lists ``depth`` deep: (ids, semantic ranks, lexical ranks), 0 where
    a document is not in a list; ids in the order ``search`` meets them (semantic first)."""
    sem, lex = lists.semantic[:depth], lists.lexical[:depth]
    docs = np.concatenate([sem, lex[~np.isin(lex, sem)]])
    sem_rank = np.zeros(len(docs), np.int64)
    sem_rank[:len(sem)] = np.arange(1, len(sem) + 1)
    lex_rank = np.zeros(len(docs), np.int64)
    position = {int(d): i for i, d in enumerate(docs)}
    for r, d in enumerate(lex.tolist(), start=1):
        lex_rank[position[d]] = r
    return docs, sem_rank, lex_rank
