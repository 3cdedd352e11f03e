"""Per-query ranking metrics with graded judgements: nDCG@10, MRR@10, Recall@10 and @100.

Each function scores one query, so a set of queries can be resampled for a
bootstrap interval (``searchapp.evaluation.bootstrap``) and two models compared
query by query. Values are fractions in [0, 1]; reports multiply by 100.

Conventions (those of trec_eval and BEIR): a grade ≥ 1 is relevant, 0 is not;
a document nobody judged counts as not relevant; nDCG's gain is the grade
itself (linear), discounted by log2(rank + 1), and divided by the ideal order
of all the query's judged grades; Recall@k is the share of the query's
relevant documents in the first k.

Example:
    >>> scores = query_metrics(["d3", "d1", "d9"], {"d1": 2, "d2": 1, "d3": 0})
    >>> scores["mrr@10"], scores["recall@10"], round(scores["ndcg@10"], 4)
    (0.5, 0.5, 0.4796)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from searchapp.errors import InvalidParameterError

METRICS = ("ndcg@10", "mrr@10", "recall@10", "recall@100")
DEPTH = 100  # how many results a query's ranking needs for every metric above


def _discounts(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2))


def query_metrics(ranked: Sequence[str], grades: Mapping[str, int]) -> dict[str, float]:
    """nDCG@10, MRR@10, Recall@10 and Recall@100 of one query's ranking (fractions).

    ``ranked``: document ids, best first (at least ``DEPTH`` of them for Recall@100
    to mean what it says); ``grades``: the judged documents' grades, 0 to 3.
    Raises InvalidParameterError for a query without any relevant judgement:
    nothing can be found for it, so it says nothing about the ranking.
    """
    relevant = {d for d, g in grades.items() if g >= 1}
    if not relevant:
        raise InvalidParameterError("A query needs at least one document judged relevant "
                                    "to be evaluated.")
    gains = np.array([float(grades.get(d, 0)) for d in ranked[:10]])
    dcg = float(np.sum(gains * _discounts(len(gains)))) if len(gains) else 0.0
    ideal_gains = np.sort(np.array([float(g) for g in grades.values() if g >= 1]))[::-1][:10]
    idcg = float(np.sum(ideal_gains * _discounts(len(ideal_gains))))
    first = next((i for i, d in enumerate(ranked[:10]) if d in relevant), None)
    found10 = len(relevant.intersection(ranked[:10]))
    found100 = len(relevant.intersection(ranked[:DEPTH]))
    return {"ndcg@10": dcg / idcg, "mrr@10": 0.0 if first is None else 1.0 / (first + 1),
            "recall@10": found10 / len(relevant), "recall@100": found100 / len(relevant)}


def metrics_table(rankings: Sequence[Sequence[str]], grades: Sequence[Mapping[str, int]]
                  ) -> dict[str, np.ndarray]:
    """Each metric's per-query values, (n_queries,) per metric, in the order given.

    Example:
        >>> table = metrics_table([["a", "b"], ["c"]], [{"b": 1}, {"c": 3}])
        >>> table["mrr@10"].tolist()
        [0.5, 1.0]
    """
    if len(rankings) != len(grades):
        raise InvalidParameterError(f"{len(rankings)} rankings but {len(grades)} judged queries.")
    rows = [query_metrics(r, g) for r, g in zip(rankings, grades, strict=True)]
    return {m: np.array([row[m] for row in rows], dtype=float) for m in METRICS}
