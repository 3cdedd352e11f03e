"""What a results page offers around the hits: facets, the number of matches, more like this.

- ``facet_values``: the most common values of a metadata column with their
  counts, to offer as filter values (one grouped SQL pass, kept per corpus
  generation in the App's memo, so a page rerun reads nothing).
- ``word_matches``: how many documents hold the query's words (and pass the
  filters), counted up to ``MATCH_CAP``.
- ``more_like``: the documents nearest one document of the corpus, by its own
  stored vector (no encoding), itself left out; on the shard servers too.

The Search page, the CLI and the API call these the same way.

Example:
    >>> facet_values(app, "tickets", "product")                     # doctest: +SKIP
    [('billing', 412), ('devices', 301)]
    >>> [h.id for h in more_like(app, "tickets", "t3", k=2)]         # doctest: +SKIP
    ['t4', 't9']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from searchapp.context import App
from searchapp.errors import InvalidParameterError
from searchapp.search.corpus_languages import query_stem_languages
from searchapp.search.coverage import SearchResults, collecting
from searchapp.search.filters import Condition, check_columns, parse_condition
from searchapp.search.query_filters import understand
from searchapp.search.service import SearchHit, as_handle, check_k, combined_filter, hits_for
from searchapp.store import fulltext, repo
from searchapp.store.shard_rows import stored_vectors
from searchapp.vectors.handle import CorpusHandle

FACET_VALUES = 12  # values offered per column (the most common)
MATCH_CAP = 10_000  # word matches are counted up to this ("10,000+")


def facet_values(app: App, corpus: str, column: str, limit: int = FACET_VALUES
                 ) -> list[tuple[str, int]]:
    """The ``limit`` most common values of metadata ``column`` with their counts, most first.

    Raises InvalidParameterError for a column the corpus' documents do not have.
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    if column not in state.meta_columns:
        check_columns([Condition(column, "=", "", "text")], state.meta_columns, state.name)

    def count() -> list[tuple[str, int]]:
        with app.db.reader() as conn:
            return repo.top_values(conn, state.id, column, limit)

    return app.memo.get_or_make(state.id, state.generation, ("facet", column, limit), count)


def word_matches(app: App, corpus: str | CorpusHandle, query: str,
                 where: Sequence[str | Condition] | None = None, cap: int = MATCH_CAP) -> int:
    """How many documents of the corpus hold a word of ``query`` and pass ``where`` and the
    query's own filters, phrases and exclusions (≤ cap)."""
    handle = as_handle(app, corpus)
    conditions = [w if isinstance(w, Condition) else parse_condition(w) for w in where or []]
    check_columns(conditions, handle.meta_columns, handle.name)
    dialect = app.db.engine.dialect.name
    plan = understand(query, handle.meta_columns, handle.corpus_id, dialect)
    flt = combined_filter(conditions + plan.conditions, plan.text_conditions, dialect)
    stemmed = query_stem_languages(app, handle, plan.parsed.text)
    with app.db.reader() as conn:
        return fulltext.count_matches(conn, handle.corpus_id, plan.parsed.text, cap,
                                      flt or ("1=1", {}), stem_languages=stemmed)


def more_like(app: App, corpus: str | CorpusHandle, external_id: str, k: int = 10,
              min_score: float | None = None) -> list[SearchHit]:
    """The ``k`` documents nearest document ``external_id`` by cosine, best first, without it.

    On the configured engine: this process' index, or the corpus' shard servers
    (the document's vector read from the database, every shard asked; a shard that
    does not answer is named, as in ``search``). Raises InvalidParameterError when
    the corpus has no such document or it has no vector yet.
    """
    k = check_k(k)
    handle = as_handle(app, corpus)
    with app.db.session() as s:
        doc = repo.document_by_external_id(s, handle.corpus_id, external_id)
        doc_id = doc.id if doc is not None else None
    if doc_id is None:
        raise InvalidParameterError(f"Corpus {handle.name!r} has no document with id "
                                    f"{external_id!r}.")
    with collecting() as missing:
        near = _neighbours(app, handle, doc_id, k + 1)
    if near is None:
        raise InvalidParameterError(f"Document {external_id!r} has no vector yet (it is "
                                    "still being embedded); try again when it is.")
    labels, scores = near
    keep = labels != doc_id  # (k + 1,) the document itself out
    hits = hits_for(app, labels[keep][:k], scores[keep][:k], min_score)
    return SearchResults(hits, missing) if missing else hits


def _neighbours(app: App, handle: CorpusHandle, doc_id: int, n: int
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``n`` documents nearest document ``doc_id``'s own vector: (ids (m,), cosines
    (m,)) best first, from the process' index or the shard servers; None without a vector."""
    if handle.shards is None:
        found, vectors = handle.index.vectors_of([doc_id])
        if not len(found):
            return None
        labels, scores = handle.index.search(vectors, min(n, handle.index.count))
        return labels[0], np.asarray(scores[0])
    with app.db.session() as s:
        found, vectors = stored_vectors(s, handle.model.id, [doc_id], handle.model.dimension)
    if not len(found):
        return None
    near = handle.shards.neighbours(vectors[0], n)
    return (np.array([c.doc for c in near], np.int64),
            np.array([c.score for c in near], np.float32))
