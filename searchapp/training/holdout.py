"""The held-out part of a corpus' judgements: kept out of training, used to judge the result.

Which judgements are held out is decided by a hash of what they judge, not by
a random draw over the current list: a query (all of its judged documents go
together, so the model never trains on a query it is tested on) or a pair is
held out when ``sha256(seed:key)`` falls in the lowest ``fraction`` of the
range. So the split is stable as judgements grow: what was held out for the
last fine-tuning stays held out for the next one, and a later model is never
tested on judgements an earlier round trained on. The training side must be
enough to learn from (``check``, else a message says how many more judgements
are needed); the held-out side may be too small to judge by (``unmeasurable``):
then the model is trained and its verdict is "not measured".

Example:
    >>> from searchapp.evaluation.judged import Items, JudgedPair
    >>> items = Items(pairs=[JudgedPair(f"d{i}", f"e{i}", i % 2) for i in range(200)])
    >>> train, held = split(items, fraction=0.2)
    >>> len(train.pairs) + len(held.pairs), 25 <= len(held.pairs) <= 55
    (200, True)
    >>> split(items, fraction=0.2)[1].pairs == held.pairs     # the same split every time
    True
"""

from __future__ import annotations

import hashlib

from searchapp.errors import TrainingDataError
from searchapp.evaluation.judged import Items

FRACTION = 0.2
SEED = "searchapp-holdout-v1"
MIN_TRAIN_EXAMPLES = 16  # positive examples to train on (one batch)


def held_out(key: str, fraction: float = FRACTION, seed: str = SEED) -> bool:
    """Whether the item named ``key`` belongs to the held-out part.

    Example:
        >>> held_out("how do I reset my password", 0.0), held_out("x", 1.0)
        (False, True)
    """
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def pair_key(a: str, b: str) -> str:
    """One key for a pair whichever way round it is given."""
    first, second = sorted((a, b))
    return f"pair\x1f{first}\x1f{second}"


def split(items: Items, fraction: float = FRACTION, seed: str = SEED) -> tuple[Items, Items]:
    """(training items, held-out items), by the hash of each query or pair."""
    train, held = Items(), Items(skipped_queries=items.skipped_queries)
    for q in items.queries:
        (held if held_out(f"query\x1f{q.query}", fraction, seed) else train).queries.append(q)
    for p in items.pairs:
        (held if held_out(pair_key(p.a, p.b), fraction, seed) else train).pairs.append(p)
    return train, held


def check(train: Items) -> None:
    """Refuse training judgements too few to learn from, saying how many more are needed.

    Training needs MIN_TRAIN_EXAMPLES positive examples (relevant documents or
    duplicate pairs) after the held-out part is set aside.
    """
    positives = sum(len(q.relevant) for q in train.queries) + sum(p.label for p in train.pairs)
    if positives < MIN_TRAIN_EXAMPLES:
        raise TrainingDataError(
            f"{positives} positive judgements to train on (relevant documents or duplicate "
            f"pairs, after holding {int(FRACTION * 100)}% out); at least {MIN_TRAIN_EXAMPLES} "
            "are needed. Judge more search results or pairs (the Label page proposes them).")


def unmeasurable(held: Items) -> str | None:
    """Why the held-out judgements cannot judge a model (None when they can).

    They can with one judged query (a document judged relevant), or with judged
    pairs of both answers (AP needs a duplicate and a non-duplicate). Few of them
    give wide intervals and, most likely, "not distinguishable": that is the
    honest answer, not a reason to refuse.

    Example:
        >>> from searchapp.evaluation.judged import JudgedPair
        >>> unmeasurable(Items(pairs=[JudgedPair("a", "b", 1)]))[-44:]
        'lack a query and a pair judged not duplicate'
    """
    labels = {p.label for p in held.pairs}
    if held.queries or labels == {0, 1}:
        return None
    missing = "a pair judged not duplicate" if labels == {1} else \
        "a duplicate pair" if labels == {0} else "judged pairs"
    counts = [sum(p.label == y for p in held.pairs) for y in (0, 1)]
    return (f"the held-out judgements ({len(held.queries)} queries; {counts[1]} duplicate and "
            f"{counts[0]} other pairs) lack a query and {missing}")
