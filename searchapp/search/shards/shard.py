"""One shard of a corpus' index: the vectors of its documents, kept at the corpus' generation.

A shard holds what the single index holds, restricted to its documents
(``store.shard_rows.shard_of``): a document index (one vector per document;
float32 hnswlib, or compressed: ``compressed.make_index``) and a passage index
(the passages of its split documents). It is built and kept current from the
shared database alone, reading only its own rows (the shard condition is in the
SQL), so adding documents touches only the shards they fall in, and a replica
started anywhere (or restarted by Ray after a crash) needs nothing but the
database URL. ``catch_up`` applies what was written after its generation:
tombstoned documents out, newer vectors in; work proportional to the change.

Queries run the same code as the single index (``searchapp.search.nearest``), so
the union of every shard's top n, sorted by score, is the single index's top n:
a document's score never depends on which other documents share its shard.

Example:
    >>> shard = Shard(db, ShardSpec(corpus_id=1, model_id=1, dimension=384,   # doctest: +SKIP
    ...                             number=0, shards=4))
    >>> shard.catch_up(); shard.nearest(vector, 10, 0.5)[:1]                  # doctest: +SKIP
    [Candidate(doc=812, score=0.83, passage=None)]
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from searchapp.base.shard_layout import COMPRESSIONS
from searchapp.search.nearest import Candidate, nearest_documents, score_documents
from searchapp.search.shards.shard_words import ShardWords
from searchapp.store import repo
from searchapp.store.changes import passage_rows
from searchapp.store.db import Database
from searchapp.store.shard_rows import (
    check_shards,
    count_in_shard,
    removed_in_shard,
    stored_passages,
    stored_vectors,
    texts_of,
    vectors_in_shard,
)
from searchapp.vectors.index import VectorIndex
from searchapp.vectors.passage_index import STRIDE, PassageIndex


@dataclass(frozen=True)
class ShardSpec:
    """Which part of which corpus a shard holds, and how it keeps its vectors."""

    corpus_id: int
    model_id: int
    dimension: int
    number: int
    shards: int
    compression: str = "float32"  # float32 | sq8 | pq (``compressed``)
    placement: str = "hash"  # hash | range (``store.shard_rows``)
    words: bool = True  # the shard keeps its documents' full text (``shard_words``)

    def __post_init__(self) -> None:
        check_shards(self.shards, self.placement)
        if not 0 <= self.number < self.shards:
            raise ValueError(f"shard {self.number} of {self.shards}")
        if self.compression not in COMPRESSIONS:
            from searchapp.errors import InvalidParameterError

            raise InvalidParameterError(f"Unknown compression {self.compression!r}; use one "
                                        f"of {', '.join(COMPRESSIONS)}.")

    @property
    def label(self) -> str:
        """How the shard is named to a user: "shard 3 of 8"."""
        return f"shard {self.number + 1} of {self.shards}"


def document_index(spec: ShardSpec, stored=None) -> VectorIndex:
    """The document index of a shard: float32 hnswlib (the app's own) or compressed; pq's
    candidates re-ranked, and its exact scores taken, on ``stored`` vectors (the database)."""
    if spec.compression == "float32":
        return VectorIndex(spec.dimension)
    from searchapp.search.shards.compressed_store import CompressedStore

    exact = stored if spec.compression == "pq" else None
    return CompressedStore(spec.dimension, spec.compression, rerank=stored, exact=exact)


def passage_index(spec: ShardSpec, stored=None) -> PassageIndex:
    """The passage index of a shard, compressed as its document index is (pq: a split
    document's passages scored on ``stored`` vectors)."""
    if spec.compression == "float32":
        return PassageIndex(spec.dimension)
    from searchapp.search.shards.compressed_store import CompressedPassageIndex

    exact = stored if spec.compression == "pq" else None
    return CompressedPassageIndex(spec.dimension, spec.compression, None, exact)


class Shard:
    """A shard's indexes, brought to the corpus' generation from the database."""

    def __init__(self, db: Database, spec: ShardSpec, words_folder: Path | None = None):
        """``words_folder``: where the shard's full text is kept (a temporary folder when
        None; a replica names its own, so a restart replaces its predecessor's file)."""
        self.db, self.spec, self.words_folder = db, spec, words_folder
        self.index = document_index(spec, self._stored_vectors)
        self.passages = passage_index(spec, self._stored_passages)
        self.words = ShardWords(spec.corpus_id, words_folder) if spec.words else None
        self.generation = 0
        self.built_seconds: float | None = None
        self.caught_up_at: float | None = None  # time.time() of the last catch-up
        self.retrained = 0  # times a compressed index that outgrew its training was rebuilt
        self._lock = threading.Lock()  # one catch-up at a time

    # ---- keeping current --------------------------------------------------------
    def catch_up(self) -> bool:
        """Apply what the database wrote after this shard's generation; True if it moved."""
        with self._lock, self.db.session() as s:
            started = time.monotonic()
            now = repo.current_generation(s, self.spec.corpus_id)
            if now < self.generation:  # the database was restored to an earlier state
                self.index = document_index(self.spec, self._stored_vectors)
                self.passages = passage_index(self.spec, self._stored_passages)
                if self.words is not None:
                    self.words.close()
                    self.words = ShardWords(self.spec.corpus_id, self.words_folder)
                self.generation = 0
            moved = now != self.generation
            if moved:
                self._apply(s, self.generation)
                if self.built_seconds is None:
                    self.built_seconds = time.monotonic() - started
                self.generation = now
                if getattr(self.index, "outgrown", False):
                    self._retrain(s)
            self.caught_up_at = time.time()
            return moved

    def _retrain(self, s) -> None:
        """A compressed index that has outgrown its training set is built again from the
        database and trained on the vectors held now (more lists: recall holds as the shard
        grows); queries use the old one until the new one replaces it."""
        index = document_index(self.spec, self._stored_vectors)
        passages = passage_index(self.spec, self._stored_passages)
        _apply(s, self.spec, index, passages, 0)
        self.index, self.passages = index, passages
        self.retrained += 1

    def _apply(self, s, generation: int) -> None:
        _apply(s, self.spec, self.index, self.passages, generation, self.words)

    def _stored_vectors(self, labels) -> tuple[np.ndarray, np.ndarray]:
        """Full vectors of documents from the database (a compressed index's re-ranking)."""
        with self.db.session() as s:
            return stored_vectors(s, self.spec.model_id, labels, self.spec.dimension)

    def _stored_passages(self, labels) -> tuple[np.ndarray, np.ndarray]:
        """Full passage vectors from the database (a pq shard's exact passage scores)."""
        with self.db.session() as s:
            return stored_passages(s, self.spec.model_id, labels, self.spec.dimension, STRIDE)

    # ---- queries ----------------------------------------------------------------
    def nearest(self, vector: np.ndarray, n: int, weight: float) -> list[Candidate]:
        """The shard's ``n`` best documents for ``vector``, best first."""
        if self.index.count == 0:
            return []
        return nearest_documents(self.index, self.passages, np.asarray(vector, np.float32),
                                 n, weight=weight)

    def neighbours(self, vector: np.ndarray, n: int) -> list[Candidate]:
        """The shard's ``n`` documents nearest ``vector`` by their own vector alone (no
        passages): "more like this" of a document, as the single index answers it."""
        if self.index.count == 0:
            return []
        return nearest_documents(self.index, None, np.asarray(vector, np.float32), n)

    def lexical(self, query: str, n: int, stem_languages: Sequence[str] = ()
                ) -> tuple[bool, dict]:
        """(whether the shard keeps its full text, its candidates for ``query`` with their
        BM25 parts: ``ShardWords.candidates``): the lexical side of a sharded search."""
        if self.words is None:
            return False, {}
        return True, self.words.candidates(query, n, self.spec.shards, stem_languages)

    def score(self, vector: np.ndarray, docs: Iterable[int], weight: float
              ) -> dict[int, Candidate]:
        """Exact scores of the given documents this shard holds (the others are skipped)."""
        return score_documents(self.index, self.passages, np.asarray(vector, np.float32),
                               list(docs), weight)

    def close(self) -> None:
        """Let go of what the shard keeps outside its memory (its full-text file)."""
        if self.words is not None:
            self.words.close()

    def status(self) -> dict:
        """Size, freshness and place of this shard, for ``searchapp shards status``."""
        memory = getattr(self.index, "memory_bytes", None)
        passages_memory = getattr(self.passages, "memory_bytes", None)
        return {**asdict(self.spec), "documents": self.index.count,
                "passages": self.passages.count, "generation": self.generation,
                "built_seconds": self.built_seconds, "caught_up_at": self.caught_up_at,
                "retrained": self.retrained,
                "words": self.words.count if self.words is not None else None,
                "words_bytes": self.words.disk_bytes() if self.words is not None else 0,
                "memory_bytes": (memory() if memory else 0)
                + (passages_memory() if passages_memory else 0),
                "node": socket.gethostname(), "pid": os.getpid()}


def _apply(s, spec: ShardSpec, index: VectorIndex, passages: PassageIndex,
           generation: int, words: ShardWords | None = None) -> None:
    """The shard's tombstones after ``generation`` out of its indexes, its newer vectors in
    (and, with ``words``, the texts of their documents into its full text)."""
    if generation == 0:  # a build: the document index sized once (no doubling)
        index.reserve(count_in_shard(s, spec.corpus_id, spec.model_id, spec.number,
                                     spec.shards, spec.placement))
    gone = removed_in_shard(s, spec.corpus_id, generation, spec.number, spec.shards,
                            spec.placement)
    index.delete(gone)
    passages.delete_documents(gone)
    if words is not None:
        words.delete(gone)
    for ids, vectors, blobs in _shard_rows(s, spec, generation):
        index.add(ids, vectors)
        docs = ids.tolist()
        if words is not None:
            words.add(texts_of(s, docs))
        passages.delete_documents([d for d, b in zip(docs, blobs, strict=True)
                                   if b is None])  # a text now one window long
        split = [(d, b) for d, b in zip(docs, blobs, strict=True) if b is not None]
        if split:
            passages.add(*passage_rows(split, spec.dimension, STRIDE))


def _shard_rows(s, spec: ShardSpec, generation: int):
    """The shard's vectors written after ``generation`` (``shard_rows.vectors_in_shard``)."""
    return vectors_in_shard(s, spec.corpus_id, spec.model_id, generation, spec.dimension,
                            spec.number, spec.shards, spec.placement)


