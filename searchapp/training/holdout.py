"""The held-out part of a corpus' judgements: kept out of training, used to judge the result.

Which judgements are held out is decided by a hash of what they judge, not by
a random draw over the current list: a query (all of its judged documents go
together, so the model never trains on a query it is tested on) or a pair is
held out when ``sha256(seed:key)`` falls in the lowest ``fraction`` of the
range. So the split is stable as judgements grow: what was held out for the
last fine-tuning stays held out for the next one, and a later model is never
tested on judgements an earlier round trained on. Each side of the split is
checked for being usable (``check``), with a message that says how many more
judgements are needed.

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
MIN_HELD_QUERIES = 5  # judged queries with a relevant document, held out
MIN_HELD_PAIRS = 2  # held-out pairs of each label (AP needs both; few give wide intervals)
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


def check(train: Items, held: Items) -> None:
    """Refuse a split too small to train on or to judge by, saying how many more are needed.

    Held out must be: at least MIN_HELD_QUERIES judged queries, or at least
    MIN_HELD_PAIRS pairs of each label; training needs MIN_TRAIN_EXAMPLES
    positive examples (relevant documents or duplicate pairs).
    """
    positives = sum(len(q.relevant) for q in train.queries) + sum(p.label for p in train.pairs)
    held_pairs = [sum(p.label == y for p in held.pairs) for y in (0, 1)]
    enough_queries = len(held.queries) >= MIN_HELD_QUERIES
    enough_pairs = min(held_pairs) >= MIN_HELD_PAIRS
    if positives < MIN_TRAIN_EXAMPLES:
        raise TrainingDataError(
            f"{positives} positive judgements to train on (relevant documents or duplicate "
            f"pairs, after holding {int(FRACTION * 100)}% out); at least {MIN_TRAIN_EXAMPLES} "
            "are needed. Judge more search results or pairs (the Label page proposes them).")
    if not (enough_queries or enough_pairs):
        raise TrainingDataError(
            f"The held-out judgements ({len(held.queries)} queries; {held_pairs[1]} duplicate "
            f"and {held_pairs[0]} other pairs) are too few to judge a new model by: at least "
            f"{MIN_HELD_QUERIES} queries, or {MIN_HELD_PAIRS} pairs of each answer, are "
            "needed. Judge more, then fine-tune again.")
