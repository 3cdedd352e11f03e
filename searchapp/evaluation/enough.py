"""Whether judgements are enough for a verdict: one rule for the comparison and for the
learning job's request, so a job never trains for minutes to say what was known before.

A side-by-side comparison decides on its primary metrics: nDCG@10 of hybrid search
over judged queries (needs ``MIN_QUERIES`` of them, each with a relevant document)
and AP over judged pairs (needs ``MIN_PAIRS_PER_ANSWER`` duplicates and as many
other pairs). With neither, the only honest answer is "not distinguishable".

Example:
    >>> query_shortfall(3)
    '3 judged queries (a verdict needs 5)'
    >>> verdict_shortfall(queries=5, duplicates=0, others=0) is None
    True
    >>> print(verdict_shortfall(queries=1, duplicates=4, others=12)[37:])
    and 4 duplicate and 12 other judged pairs (a verdict needs 10 of each)

Hybrid search's fusion is fitted from ``MIN_FIT_QUERIES`` judged queries: with
fewer than ``LEAVE_ONE_OUT_BELOW`` each query is scored by the fusion fitted on
all the others (leave-one-query-out), and the fit is kept only when that
held-out gain is both above 0 in its bootstrap interval and significant by the
exact sign-flip test (``bootstrap.sign_flip_p`` < ``ALPHA``): with 5 queries, all
5 must improve.
"""

from __future__ import annotations

from searchapp.evaluation.judged import Items

MIN_QUERIES = 5
MIN_PAIRS_PER_ANSWER = 10
MIN_FIT_QUERIES = 5  # judged queries (each with a relevant document) a fusion fit needs
LEAVE_ONE_OUT_BELOW = 20  # judged queries: below this each is judged by a fit on all others
ALPHA = 0.05  # a fit is kept only when the sign-flip test's p-value is under this


def fit_shortfall(queries: int) -> str | None:
    """Why ``queries`` judged queries cannot fit hybrid search's fusion (None when they can).

    Example:
        >>> fit_shortfall(3)
        '3 judged queries with a relevant document (a fusion fit needs 5)'
        >>> fit_shortfall(5) is None
        True
    """
    if queries >= MIN_FIT_QUERIES:
        return None
    return (f"{queries} judged queries with a relevant document (a fusion fit needs "
            f"{MIN_FIT_QUERIES})")


def query_shortfall(queries: int) -> str | None:
    """Why ``queries`` judged queries cannot decide (None when they can)."""
    if queries >= MIN_QUERIES:
        return None
    return f"{queries} judged queries (a verdict needs {MIN_QUERIES})"


def pair_shortfall(duplicates: int, others: int) -> str | None:
    """Why judged pairs of these counts cannot decide (None when they can)."""
    if min(duplicates, others) >= MIN_PAIRS_PER_ANSWER:
        return None
    return (f"{duplicates} duplicate and {others} other judged pairs (a verdict needs "
            f"{MIN_PAIRS_PER_ANSWER} of each)")


def verdict_shortfall(queries: int, duplicates: int, others: int) -> str | None:
    """Why neither judged queries nor judged pairs can decide (None when one can)."""
    short = [query_shortfall(queries), pair_shortfall(duplicates, others)]
    return None if None in short else " and ".join(short)


def items_shortfall(items: Items) -> str | None:
    """``verdict_shortfall`` of judged items: queries with a relevant document, pairs by
    answer.

    Example:
        >>> from searchapp.evaluation.judged import JudgedPair, JudgedQuery
        >>> items_shortfall(Items(queries=[JudgedQuery("q", {"d": 1})],
        ...                       pairs=[JudgedPair("a", "b", 1)]))[:36]
        '1 judged queries (a verdict needs 5)'
    """
    queries = sum(1 for q in items.queries if q.relevant)
    duplicates = sum(1 for p in items.pairs if p.label)
    return verdict_shortfall(queries, duplicates, len(items.pairs) - duplicates)
