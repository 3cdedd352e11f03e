"""CorpusHandle: a corpus opened once (id, model, generation, index), passed to every query.

Opening costs one indexed lookup of the corpus row; the model row and the index
come from the process' caches, and the index is brought to the corpus'
generation only when the corpus changed (see ``searchapp.vectors.index_cache``). Search,
duplicates and clusters take the handle, so a page or a command opens a corpus
once however many queries it runs, and nothing on the query path reads a file
or scans the corpus.

Example:
    >>> handle = open_corpus(app, "faq")                           # doctest: +SKIP
    >>> handle.generation, handle.index.count                      # doctest: +SKIP
    (42, 13)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from searchapp.errors import EmptyCorpusError
from searchapp.store import job_rows, repo
from searchapp.store.catalog import ModelRef
from searchapp.vectors.index import VectorIndex
from searchapp.vectors.passage_index import PassageIndex

if TYPE_CHECKING:  # the App is passed in by its callers; this layer sits below it
    from searchapp.context import App


class ShardedVectors(Protocol):
    """A corpus' vectors held by servers elsewhere (``searchapp.search.shards``): what search
    asks of them instead of the process' own index."""

    count: int  # vectors (documents) the servers hold

    def nearest(self, vector: np.ndarray, n: int, weight: float) -> list[Any]:
        """The n best documents (``nearest.Candidate``), best first."""

    def neighbours(self, vector: np.ndarray, n: int) -> list[Any]:
        """The n documents nearest ``vector`` by their own vector alone, best first."""

    def lexical(self, query: str, n: int) -> list[tuple[int, float]] | None:
        """The n best (document id, score) by the servers' full text; None without it."""

    def score(self, vector: np.ndarray, docs: Iterable[int], weight: float) -> dict[int, Any]:
        """Exact scores of the given documents the servers hold."""


@dataclass(frozen=True)
class CorpusHandle:
    """A corpus ready to query: ids, its model, the generation it reflects, its index."""

    corpus_id: int
    name: str
    model: ModelRef
    generation: int
    documents: int
    index: VectorIndex  # one vector per document (labels: document ids)
    passages: PassageIndex | None = None  # the passages of documents longer than the window
    meta_columns: tuple[str, ...] = ()  # metadata keys its documents use (for filters)
    shards: ShardedVectors | None = None  # set: search asks the shard servers, not ``index``

    @property
    def embedded(self) -> int:
        return self.shards.count if self.shards is not None else self.index.count


def open_corpus(app: App, name: str, model: str | None = None,
                require_vectors: bool = True) -> CorpusHandle:
    """The corpus called ``name`` with its (or ``model``'s) index at its current generation.

    Raises CorpusNotFoundError (listing the corpora) for an unknown name and, with
    ``require_vectors``, EmptyCorpusError while nothing is embedded yet.
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, name)
    ref = app.model_ref(model or state.model_name)
    if model is None:
        app.indexes.opened(state.name, state.id, ref.id)
    index, generation = app.indexes.get(state.id, ref, state.generation)
    passages, _ = app.passage_indexes.get(state.id, ref, generation)
    if require_vectors and index.count == 0:
        with app.db.session() as s:  # only now: the query path reads nothing more
            job = job_rows.active_job_state(s, "embed", "corpus", state.name)
        raise EmptyCorpusError(state.name, job and (job.id, job.status, job.done, job.total))
    return CorpusHandle(state.id, state.name, ref, generation, state.documents, index,
                        passages, tuple(state.meta_columns))


def served_elsewhere(app: App, name: str,
                     shards_of: Callable[[int, int], ShardedVectors]) -> CorpusHandle:
    """The corpus called ``name`` with its vectors on ``shards_of(corpus id, model id)``
    (servers elsewhere: ``searchapp.search.shards``): nothing is loaded or built
    here (an empty local index stands in), so a process can search a corpus far larger than
    its memory. Raises as ``open_corpus`` does.

    Example:
        >>> handle = served_elsewhere(app, "faq", lambda c, m: client)   # doctest: +SKIP
        >>> handle.embedded, handle.index.count                        # doctest: +SKIP
        (3025, 0)
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, name)
    ref = app.model_ref(state.model_name)
    shards = shards_of(state.id, ref.id)
    if shards.count == 0:
        with app.db.session() as s:
            job = job_rows.active_job_state(s, "embed", "corpus", state.name)
        raise EmptyCorpusError(state.name, job and (job.id, job.status, job.done, job.total))
    handle = CorpusHandle(state.id, state.name, ref, state.generation, state.documents,
                          VectorIndex(ref.dimension, capacity=16), None,
                          tuple(state.meta_columns))
    return replace(handle, shards=shards)


def as_handle(app: App, corpus: str | CorpusHandle) -> CorpusHandle:
    """A handle for a corpus given by name or already opened."""
    return corpus if isinstance(corpus, CorpusHandle) else open_corpus(app, corpus)
