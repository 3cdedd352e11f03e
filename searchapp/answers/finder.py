"""The candidate answers of a search: the stored sentences of its top passages, scored.

Of the first ``TOP_PASSAGES`` hits, the passages closest to the query (up to
``PER_DOCUMENT`` of one document, ``MAX_PASSAGES`` in all; a document that fits one window
is one passage) are chosen, and their sentences are read by primary key from
``passage_sentences`` (cut and encoded at embed time: nothing is split or encoded here),
with their float16 vectors from the corpus' own model, a fine-tuned one included. A
sentence's score blends its cosine to the query with its passage's (a sentence is read in
its passage: the right sentence of the right page beats a lookalike of a wrong one):

    score = SENTENCE_WEIGHT · cos(query, sentence) + (1 − SENTENCE_WEIGHT) · cos(query, passage)

Sentences that say the same thing (cosine ≥ ``SAME_COSINE`` between them, or the same
words) are kept once, the best scored. A sentence that is itself a question is never a
candidate (``asks``), but it points to the sentence after it, which scores at least what
the question scored: in an FAQ, a question close to the query is followed by its answer.
Each candidate carries the sentence before and after it in its document, its page or
section and a reader link opened at it.

Example:
    >>> found = candidates(app, handle, vector, hits)            # doctest: +SKIP
    >>> found[0].text, found[0].source["page"]                   # doctest: +SKIP
    ('Edit the port setting in postgresql.conf and restart.', 12)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from searchapp.search.hits import SearchHit
from searchapp.search.sources import hit_source, view_link
from searchapp.store import repo

TOP_PASSAGES = 5  # hits whose passages' sentences are scored
PER_DOCUMENT = 3  # the most passages read of one hit (its best by cosine)
MAX_PASSAGES = 6  # the most passages read in all (the best by cosine)
SENTENCE_WEIGHT = 0.7  # the sentence's cosine against its passage's in the score
SAME_COSINE = 0.9  # two sentences this close say the same thing: one is shown
CONTEXT_CHARS = 400  # the most of a neighbouring sentence shown as context


@dataclass(frozen=True)
class Answer:
    """One sentence that may answer the query, where it stands, and why it scored."""

    text: str
    doc_id: str  # the document's external id
    start: int  # the sentence's characters in the document's text
    end: int
    score: float  # what the threshold reads (see the module's docstring)
    cosine: float  # the sentence's own cosine to the query
    hit_rank: int  # the rank (1-based) of the hit it comes from
    before: str = ""  # the sentence before it in its document ("" at the start)
    after: str = ""
    source: dict | None = None  # {"path", "type", "page", "section"} of a file's document
    view: str | None = None  # the reader view opened at the sentence
    vector: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class _Passage:
    """A passage whose sentences are scored: its hit, number, cosine and characters."""

    hit: SearchHit
    rank: int  # the hit's rank, 1-based
    number: int  # the passage's number (0 for a document that fits one window)
    cosine: float | None  # its cosine to the query (None: lexical search only)
    span: tuple[int, int] | None  # its characters (None: the whole document)


def candidates(app, handle, vector: np.ndarray, hits: list[SearchHit],
               depth: int = TOP_PASSAGES) -> list[Answer]:
    """The sentences of the best passages of the top ``depth`` hits, best first, one of
    each meaning (see the module's docstring)."""
    top = hits[:depth]
    if not top:
        return []
    query = np.asarray(vector, np.float32)
    with app.db.reader() as conn:
        chosen = _passages(conn, handle, query, top)
        keys = [(p.hit.doc_id, q) for p in chosen for q in _rows_of(p.number)]
        rows = repo.read_sentences(conn, handle.model.id, keys)
        files = sorted({p.hit.doc_id for p in chosen if p.hit.source is not None})
        layouts = repo.layouts_by_id(conn, files) if files else {}
    found: list[Answer] = []
    seen: set[tuple[int, int]] = set()
    for passage in chosen:
        spans, vectors = _sentences_of(passage.hit.doc_id, passage.number, rows)
        cosines = vectors @ query if len(spans) else np.zeros(0, np.float32)
        asked: float | None = None  # the score of a question just before: its answer's floor
        for i in np.flatnonzero(_inside(spans, passage.span)).tolist():
            key = (passage.hit.doc_id, int(spans[i, 0]))
            if asks(passage.hit.text[spans[i, 0]:spans[i, 1]]):
                asked = _score(float(cosines[i]), passage.cosine)  # never an answer itself,
                continue  # it points to the sentence after it (an FAQ's question: its answer)
            lift, asked = asked, None
            if key in seen:  # a sentence in two overlapping passages: scored once
                continue
            seen.add(key)
            found.append(_answer(passage, spans, i, float(cosines[i]), vectors[i],
                                 layouts.get(passage.hit.doc_id), handle.name, lift))
    found.sort(key=lambda a: (-a.score, a.hit_rank, a.start))
    return distinct(found)


def _passages(conn, handle, query: np.ndarray, top: list[SearchHit]) -> list[_Passage]:
    """The passages to read: of each top hit, its ``PER_DOCUMENT`` best by cosine (a
    document that fits one window: itself), the best ``MAX_PASSAGES`` of them in all."""
    index = handle.passages
    split = [h.doc_id for h in top if index is not None and h.doc_id in index.passage_counts]
    scores = index.passage_scores(query, split) if split else {}
    spans = index.spans_of(split, lambda missing: repo.passage_spans(
        conn, missing, handle.model.id)) if split else {}
    chosen: list[_Passage] = []
    for rank, hit in enumerate(top, start=1):
        own, bounds = scores.get(hit.doc_id), spans.get(hit.doc_id)
        if own is None or bounds is None or len(bounds) != len(own):
            chosen.append(_Passage(hit, rank, hit.passage or 0, hit.semantic_score, hit.span))
            continue
        for number in np.argsort(-own, kind="stable")[:PER_DOCUMENT].tolist():
            chosen.append(_Passage(hit, rank, number, float(own[number]),
                                   (int(bounds[number, 0]), int(bounds[number, 1]))))
    chosen.sort(key=lambda p: (-(p.cosine if p.cosine is not None else -1.0), p.rank))
    return chosen[:MAX_PASSAGES]


def asks(sentence: str) -> bool:
    """A sentence that is itself a question ("How should I undo it?"): close to the query by
    its very words, it is never the answer (an FAQ's question, a heading asking).

    Example:
        >>> asks("How should I undo it?"), asks("Use git revert (see below)."), asks("Why? (see)")
        (True, False, False)
    """
    return sentence.rstrip().rstrip("\"'”’)]»").endswith(("?", "？"))


def _rows_of(number: int) -> list[int]:
    """The passage rows that may hold a passage's sentences (a sentence lives in the first
    passage holding its start, so the one before may hold the first ones)."""
    return [q for q in (number - 1, number, number + 1) if q >= 0]


def _sentences_of(doc: int, number: int, rows: dict) -> tuple[np.ndarray, np.ndarray]:
    """The sentences (spans (s, 2), vectors (s, dim)) stored around passage ``number``."""
    parts = [rows[(doc, q)] for q in _rows_of(number) if (doc, q) in rows]
    if not parts:
        return np.zeros((0, 2), np.int32), np.zeros((0, 0), np.float32)
    spans = np.concatenate([s for s, _ in parts])
    vectors = np.concatenate([v for _, v in parts])
    order = np.argsort(spans[:, 0], kind="stable")
    return spans[order], vectors[order]


def _inside(spans: np.ndarray, span: tuple[int, int] | None) -> np.ndarray:
    """Which sentences overlap the passage (all of a document that fits one window)."""
    if span is None:
        return np.ones(len(spans), bool)
    return (spans[:, 0] < span[1]) & (spans[:, 1] > span[0])


def _score(cosine: float, passage: float | None) -> float:
    """A sentence's score: its cosine blended with its passage's (see the module)."""
    return cosine if passage is None else \
        SENTENCE_WEIGHT * cosine + (1 - SENTENCE_WEIGHT) * passage


def _answer(passage: _Passage, spans: np.ndarray, i: int, cosine: float, vector: np.ndarray,
            layout, corpus: str, lift: float | None = None) -> Answer:
    """Sentence ``i`` as an answer; ``lift``: the score of the question just before it."""
    hit, rank = passage.hit, passage.rank
    a, b = int(spans[i, 0]), int(spans[i, 1])
    score = max(_score(cosine, passage.cosine), lift if lift is not None else -2.0)
    before = hit.text[int(spans[i - 1, 0]):int(spans[i - 1, 1])] if i > 0 else ""
    after = hit.text[int(spans[i + 1, 0]):int(spans[i + 1, 1])] if i + 1 < len(spans) else ""
    source = hit_source(hit.meta, layout, a) if hit.source is not None else None
    view = view_link(corpus, hit.id, layout, a, (a, b)) if source else None
    return Answer(hit.text[a:b], hit.id, a, b, round(score, 6), round(cosine, 6), rank,
                  _clip(before, end=True), _clip(after), source, view, vector)


def _clip(text: str, end: bool = False) -> str:
    """A neighbouring sentence cut to ``CONTEXT_CHARS`` (its end kept for the one before)."""
    if len(text) <= CONTEXT_CHARS:
        return text
    return "…" + text[-CONTEXT_CHARS:] if end else text[:CONTEXT_CHARS] + "…"


def distinct(found: list[Answer]) -> list[Answer]:
    """``found`` (best first) with each meaning once: a sentence whose words or vector
    repeat a better one's (cosine ≥ ``SAME_COSINE``) is left out.

    Example:
        >>> v = np.array([1.0, 0.0], np.float32)
        >>> same = [Answer("Restart it.", "a", 0, 11, 0.9, 0.9, 1, vector=v),
        ...         Answer("restart  it", "b", 0, 10, 0.8, 0.8, 2, vector=v)]
        >>> [a.doc_id for a in distinct(same)]
        ['a']
    """
    kept: list[Answer] = []
    seen: set[str] = set()
    vectors: list[np.ndarray] = []
    for answer in found:
        words = " ".join(answer.text.lower().replace(".", " ").split())
        if words in seen:
            continue
        v = answer.vector
        if v is not None and vectors and float(np.max(np.stack(vectors) @ v)) >= SAME_COSINE:
            continue
        seen.add(words)
        if v is not None:
            vectors.append(v)
        kept.append(answer)
    return kept
