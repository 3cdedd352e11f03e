"""Batches without a repeated text, for objectives whose negatives are the batch's other texts.

MultipleNegativesRankingLoss scores each anchor against every positive and
negative of its batch; all but its own positive count as wrong answers. When
the same text sits in two examples of one batch (a query with two relevant
documents, a duplicate pair given both ways round, a sentence paired with
itself for SimCSE next to another copy), it is one example's right answer and
the other's wrong one at once, and the loss pushes the model both ways.
sentence-transformers avoids it with its ``NoDuplicatesBatchSampler``; here the
epoch's shuffled order is rearranged instead, so the trainer's resumable
"step s is rows order[s·b : (s+1)·b]" stays as it is.

Greedy and deterministic: walk the shuffled order, put each example in the
current batch unless one of its texts is already there, and start the next
batch from what was passed over. When the remaining examples cannot fill a
batch without a repeat (the tail of a tiny data set), the batch is filled
with them anyway, so the order is still a permutation of the same length.

Example:
    >>> texts = [["q1", "q1", "q2", "q3"], ["a", "b", "c", "d"]]   # examples 0 and 1 share q1
    >>> unique_text_order(np.arange(4), texts, batch_size=2).tolist()
    [0, 2, 1, 3]
"""

from __future__ import annotations

import numpy as np


def unique_text_order(order: np.ndarray, texts: list[list[str]], batch_size: int) -> np.ndarray:
    """``order`` rearranged so that no batch of ``batch_size`` holds a text twice where avoidable.

    ``texts[c][i]`` is column c of example i; an example's own columns may repeat
    one another (SimCSE pairs a sentence with itself).
    """
    keys = [{hash(col[i]) for col in texts if col[i]} for i in range(len(texts[0]))]
    remaining = [int(i) for i in order]
    out: list[int] = []
    while remaining:
        batch, seen, passed = [], set(), []
        for i in remaining:
            if len(batch) < batch_size and not keys[i] & seen:
                batch.append(i)
                seen |= keys[i]
            else:
                passed.append(i)
        if len(batch) < batch_size and passed:  # only repeats are left: fill up anyway
            take = batch_size - len(batch)
            batch, passed = batch + passed[:take], passed[take:]
        out.extend(batch)
        remaining = passed
    return np.asarray(out, dtype=np.int64)
