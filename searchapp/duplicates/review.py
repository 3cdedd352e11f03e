"""The review queue: the corpus' duplicate pairs in the order a person needs to see them.

"The 500 best pairs" are exact copies nobody needs to review, and the borderline
pairs a person must judge never appear there. The queue turns that around: the
pairs whose cosine lies nearest the threshold come first (on both sides of it:
the corpus is mined ``REVIEW_MARGIN`` below the threshold for the queue), exact
copies come last or not at all, and a pair already judged never comes back.
Each decision is a judgement (source 'review'), so the queue, the Label page's
estimate and the calibration on judgements all learn from it.

Example:
    >>> queue = review_queue(app, "faq", threshold=0.8, k=10, n=20)  # doctest: +SKIP
    >>> queue.items[0].score, queue.pending                             # doctest: +SKIP
    (0.8003, 1412)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from searchapp.duplicates.params import check_k, floor_for
from searchapp.duplicates.service import open_for_duplicates, request_mining, stored
from searchapp.judgements import service
from searchapp.pairs.threshold import resolve_threshold
from searchapp.store import judgement_rows, repo

if TYPE_CHECKING:
    from searchapp.context import App

REVIEW_MARGIN = 0.05  # the queue reaches this far below the threshold


@dataclass(frozen=True)
class ReviewItem:
    a: str  # external ids, a < b
    b: str
    a_text: str
    b_text: str
    score: float
    exact: bool


@dataclass(frozen=True)
class ReviewQueue:
    threshold: float
    floor: float  # the lowest cosine in the queue
    items: list[ReviewItem]  # the next ``n`` to decide
    pending: int  # undecided pairs in the queue (exact copies counted only when included)
    decided: int  # pairs of the mined result already judged
    exact_hidden: int  # exact copies left out


def review_floor(threshold: float) -> float:
    """The mining floor the queue needs: ``REVIEW_MARGIN`` below the threshold.

    Example:
        >>> review_floor(0.8), review_floor(0.83)
        (0.75, 0.75)
    """
    return floor_for(max(0.0, threshold - REVIEW_MARGIN))


def request_review_mining(app: App, corpus: str, threshold: float | None, k: int) -> int:
    """Queue the mining the queue needs (or find the same job queued)."""
    handle = open_for_duplicates(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    return request_mining(app, handle, review_floor(threshold), k)


def _order(scores: np.ndarray, exact: np.ndarray, threshold: float) -> np.ndarray:
    """Rows by |cosine - threshold|, nearest first; exact copies after all others."""
    return np.lexsort((np.abs(scores - threshold), exact))


def review_queue(app: App, corpus: str, threshold: float | None = None, k: int = 10,
                 n: int = 20, include_exact: bool = False, exclude: Iterable = ()
                 ) -> ReviewQueue | None:
    """The next ``n`` undecided pairs nearest the threshold; None until the corpus is mined
    at ``review_floor(threshold)`` for this k (``request_review_mining`` queues that).

    ``exclude``: (a, b) pairs to leave out too (the ones skipped this session).
    """
    handle = open_for_duplicates(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    k = check_k(k)
    floor = review_floor(threshold)
    mined = stored(app, handle, floor, k)
    if mined is None:
        return None
    order = app.memo.get_or_make(handle.corpus_id, handle.generation,
                                 ("review", k, mined.floor, round(threshold, 6)),
                                 lambda: _order(mined.score, mined.exact, threshold))
    in_band = mined.exact[order] | (mined.score[order] >= floor)
    order = order[in_band]
    skip = {tuple(sorted(p)) for p in exclude}
    judged = {(j.a, j.b) for j in service.list_judgements(app, handle.name, kind="pair")}
    with app.db.session() as s:
        ids = judgement_rows.ids_by_external_id(s, handle.corpus_id,
                                                {x for p in judged | skip for x in p})
    a, b = mined.a[order], mined.b[order]
    decided = _among(a, b, [(ids[x], ids[y]) for x, y in judged if x in ids and y in ids])
    skipped = _among(a, b, [(ids[x], ids[y]) for x, y in skip if x in ids and y in ids])
    exact = mined.exact[order]
    undecided = ~decided & ~skipped
    hidden = 0 if include_exact else int((exact & undecided).sum())
    open_rows = order[undecided & (include_exact | ~exact)]
    items = _items(app, handle.corpus_id, mined, open_rows[:n])
    return ReviewQueue(threshold, floor, items, len(open_rows), int(decided.sum()), hidden)


def _among(a: np.ndarray, b: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Which of the pairs (a[i], b[i]) are in ``pairs`` (either order): (len(a),) bool."""
    if not pairs:
        return np.zeros(len(a), bool)
    p = np.asarray(pairs, np.int64)
    lo, hi = p.min(axis=1), p.max(axis=1)
    width = int(max(a.max(initial=0), b.max(initial=0), hi.max())) + 1
    return np.isin(np.minimum(a, b) * width + np.maximum(a, b), lo * width + hi)


def _items(app: App, corpus_id: int, mined, rows: np.ndarray) -> list[ReviewItem]:
    with app.db.session() as s:
        docs = repo.document_texts(s, corpus_id, np.r_[mined.a[rows], mined.b[rows]].tolist())
    out = []
    for r in rows.tolist():
        x, y = int(mined.a[r]), int(mined.b[r])
        if x not in docs or y not in docs:
            continue
        (ea, ta), (eb, tb) = sorted([docs[x], docs[y]])
        out.append(ReviewItem(ea, eb, ta, tb, round(float(mined.score[r]), 4),
                              bool(mined.exact[r])))
    return out
