"""What a corpus' judgements allow learning to do now, and what more judgements would buy.

One rule for the request, the Models page and the CLI, computed from the minimums
the jobs themselves hold, never written out as prose:

- hybrid search's fusion is fitted from ``enough.MIN_FIT_QUERIES`` judged queries
  (each with a relevant document), each query judged by a fit on the others, kept
  only when the gain is shown (``evaluation.fusion_fit``);
- fine-tuning needs ``holdout.MIN_TRAIN_EXAMPLES`` positive judgements to train on
  after ``holdout.FRACTION`` is held out, and a held-out part that can give a
  verdict (``enough.items_shortfall``: ``enough.MIN_QUERIES`` judged queries, or
  pairs of both answers).

``request_learning`` fine-tunes when it can, fits the fusion when only that is
possible, and refuses, saying what is needed, when neither is.

Example:
    >>> from searchapp.evaluation.judged import JudgedQuery
    >>> plan = plan_for(Items(queries=[JudgedQuery(f"q{i}", {f"d{i}": 1}) for i in range(5)]))
    >>> plan.route
    'fusion'
    >>> print(plan.lines()[0][:62])
    5 judged queries: hybrid search's fusion can be fitted now (ea
    >>> plan.lines()[0][-38:]
    'kept only if at least 5 of 5 improve).'

"""

from __future__ import annotations

import math
from dataclasses import dataclass

from searchapp.evaluation.bootstrap import sign_test_needs
from searchapp.evaluation.enough import (
    ALPHA,
    LEAVE_ONE_OUT_BELOW,
    MIN_FIT_QUERIES,
    MIN_QUERIES,
    fit_shortfall,
    items_shortfall,
)
from searchapp.evaluation.judged import Items
from searchapp.training import holdout
from searchapp.training.judged_items import positives

ROUTES = ("finetune", "fusion")


@dataclass(frozen=True)
class Plan:
    """The counts the rule reads and what they allow (``route``: None when nothing)."""

    queries: int  # judged queries with a relevant document
    train_positives: int  # positive judgements left to train on after the held-out part
    held_queries: int  # judged queries in the held-out part
    held_short: str | None  # why the held-out part cannot give a verdict (None: it can)

    @property
    def can_finetune(self) -> bool:
        return self.train_positives >= holdout.MIN_TRAIN_EXAMPLES and self.held_short is None

    @property
    def can_fit(self) -> bool:
        return fit_shortfall(self.queries) is None

    @property
    def route(self) -> str | None:
        """"finetune", "fusion" or None (nothing can be learned yet)."""
        return "finetune" if self.can_finetune else "fusion" if self.can_fit else None

    def lines(self) -> list[str]:
        """What can be done now and what more judgements buy, one sentence each."""
        return [self._fusion_line(), self._finetune_line(), self._narrowing_line()]

    def refusal(self) -> str:
        """Why nothing can be learned yet, and what to judge."""
        return (f"Nothing to learn from yet: {fit_shortfall(self.queries)}, and "
                f"{self.train_positives} positive judgements to train on after holding "
                f"{int(holdout.FRACTION * 100)}% out (fine-tuning needs "
                f"{holdout.MIN_TRAIN_EXAMPLES}). Judge search results (Search or Label page): "
                f"{MIN_FIT_QUERIES - self.queries} more judged queries with a relevant document "
                "let the fusion be fitted.")

    def _fusion_line(self) -> str:
        n = self.queries
        if not self.can_fit:
            return (f"{n} judged queries: {MIN_FIT_QUERIES - n} more (each with a relevant "
                    "document) let hybrid search's fusion be fitted.")
        how = (f"each query judged by a fit on the other {n - 1}" if n < LEAVE_ONE_OUT_BELOW
               else "each query judged by a fit on the other parts")
        needs = sign_test_needs(n, ALPHA)
        return (f"{n} judged queries: hybrid search's fusion can be fitted now ({how}; kept "
                f"only if at least {needs} of {n} improve).")

    def _finetune_line(self) -> str:
        if self.can_finetune:
            return (f"Fine-tuning can start: {self.train_positives} positive judgements to "
                    f"train on, {self.held_queries} judged queries held out to judge it.")
        need = []
        missing = holdout.MIN_TRAIN_EXAMPLES - self.train_positives
        if missing > 0:
            more = math.ceil(missing / (1 - holdout.FRACTION))
            need.append(f"{holdout.MIN_TRAIN_EXAMPLES} positive judgements to train on after "
                        f"{int(holdout.FRACTION * 100)}% is held out (now "
                        f"{self.train_positives}: about {more} more relevant judgements)")
        if self.held_short is not None:
            total = math.ceil(MIN_QUERIES / holdout.FRACTION)
            more = max(total - self.queries, 1)
            need.append(f"{MIN_QUERIES} held-out judged queries (now {self.held_queries}: "
                        f"about {total} judged queries in all, {more} more)")
        return "Fine-tuning needs " + " and ".join(need) + "."

    def _narrowing_line(self) -> str:
        n = max(self.queries, 1)
        narrower = (1 - math.sqrt(n / (n + 1))) * 100
        later = n + 5
        needs = sign_test_needs(later, ALPHA)
        return (f"Each judged query narrows the held-out estimate's 95% interval by about "
                f"{narrower:.0f}% (it shrinks as 1/√n); at {later} judged queries a gain is "
                f"shown when at least {needs} of {later} improve.")


def plan_for(items: Items) -> Plan:
    """The plan of a corpus' judged items (``judged_items.corpus_items``).

    Example:
        >>> plan_for(Items()).route is None
        True
    """
    train, held = holdout.split(items)
    return Plan(queries=sum(1 for q in items.queries if q.relevant),
                train_positives=positives(train),
                held_queries=sum(1 for q in held.queries if q.relevant),
                held_short=items_shortfall(held))
