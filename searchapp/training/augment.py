"""Augmented SBERT (Thakur et al. 2021): a cross-encoder trained on few judgements labels more.

With a few dozen judgements the bi-encoder has little to learn from. The
paper's recipe: train a cross-encoder on the gold pairs (``cross_encoder``),
sample many more pairs that are likely to matter, let the cross-encoder label
them ("silver"), and train the bi-encoder on gold and silver together. Here:

1. gold pairs for the cross-encoder: each training triplet gives (query,
   relevant document, 1) and (query, negative, 0); each judged pair its label;
2. candidates: the ``SILVER_K`` nearest documents (current model) of every
   training query and judged document, and of up to ``EXTRA_ANCHORS`` other
   corpus documents drawn at random (the paper's semantic-search sampling),
   minus what is judged;
3. silver rows, labelled by the cross-encoder and kept only where it is
   confident: for a query, a candidate scored at least ``POSITIVE_AT`` becomes
   a relevant document in a triplet whose negative is the query's candidate
   scored lowest (at most ``NEGATIVE_AT``); for a document, a candidate pair
   scored at least ``POSITIVE_AT`` is a silver duplicate and one at most
   ``NEGATIVE_AT`` a silver non-duplicate;
4. the gold triplets' mined negatives are checked too: one the cross-encoder
   scores above 0.5 (probably a relevant document nobody judged) is replaced
   by the query's lowest-scored candidate.

It does not always help (the paper reports losses on some tasks, and our
cross-encoder starts from bi-encoder weights): the learning job trains both
ways and keeps the augmented model only when it is measurably better on
judgements kept out of both (``searchapp.training.augment_steps``).

Example:
    >>> pick_silver([("q", "d1", 0.95), ("q", "d2", 0.05), ("q", "d3", 0.5)])
    [('q', 'd1', 'd2')]
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from searchapp.training.negatives import Example

SILVER_K = 5
EXTRA_ANCHORS = 300
POSITIVE_AT = 0.8
NEGATIVE_AT = 0.2
MAX_SILVER_PER_GOLD = 4  # silver triplets at most this many times the gold ones


@dataclass
class SilverSummary:
    """What augmentation added, for the model card."""

    gold_pairs: int = 0
    candidates: int = 0
    silver: int = 0
    negatives_replaced: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def gold_pairs(examples: list[Example]) -> list[tuple[str, str, int]]:
    """Labelled (first text, second text, label) pairs for the cross-encoder, each pair once.

    Example:
        >>> gold_pairs([Example("q", "p", "n", "g", "mined"),
        ...             Example("a", "b", "", "g", "pair", 0)])
        [('q', 'p', 1), ('q', 'n', 0), ('a', 'b', 0)]
    """
    out, seen = [], set()
    triplets = [e for e in examples if e.label < 0]
    rows = [(e.anchor, e.positive, 1) for e in triplets] + \
        [(e.anchor, e.negative, 0) for e in triplets] + \
        [(e.anchor, e.positive, e.label) for e in examples if e.label >= 0]
    for a, b, label in rows:
        if (a, b) not in seen:
            seen.add((a, b))
            out.append((a, b, label))
    return out


def pick_silver(scored: list[tuple[str, str, float]], positive_at: float = POSITIVE_AT,
                negative_at: float = NEGATIVE_AT) -> list[tuple[str, str, str]]:
    """(anchor, silver positive, silver negative) from cross-encoder scores, per anchor.

    An anchor gives one triplet per candidate scored ≥ ``positive_at``, all with its
    lowest-scored candidate as the negative, if that one is ≤ ``negative_at``.
    """
    by_anchor: dict[str, list[tuple[str, float]]] = {}
    for anchor, doc, p in scored:
        by_anchor.setdefault(anchor, []).append((doc, p))
    out = []
    for anchor, docs in by_anchor.items():
        lowest, low_p = min(docs, key=lambda x: x[1])
        if low_p > negative_at:
            continue
        out.extend((anchor, doc, lowest) for doc, p in docs if p >= positive_at)
    return out


def augment(examples: list[Example], anchors: list[tuple[str, str]],
            candidates: Callable[[list[tuple[str, str]]], list[list[str]]],
            texts: dict[str, str], score: Callable[[list[tuple[str, str]]], np.ndarray],
            judged: set[tuple[str, str]], seed: int = 42) -> tuple[list[Example], SilverSummary]:
    """Gold examples (negatives checked) plus silver ones, and what was done.

    ``anchors``: (group, anchor text) of the training queries (group ``query…``)
    and documents (``doc…``) and the extra sampled documents;
    ``candidates(anchors)``: for each, the ids of its ``SILVER_K`` nearest
    documents; ``score(pairs)``: the cross-encoder's probabilities; ``judged``:
    (anchor text, document text) pairs already judged (never silver).
    """
    summary = SilverSummary()
    near = candidates(anchors)
    pairs, owners = [], []
    for (group, text), docs in zip(anchors, near, strict=True):
        for doc in docs:
            other = texts[doc]
            if other != text and (text, other) not in judged:
                pairs.append((text, other))
                owners.append(group)
    summary.candidates = len(pairs)
    probabilities = score(pairs) if pairs else np.zeros(0)
    scored = [(a, b, float(p)) for (a, b), p in zip(pairs, probabilities, strict=True)]
    lowest: dict[str, tuple[str, float]] = {}
    for a, b, p in scored:
        if a not in lowest or p < lowest[a][1]:
            lowest[a] = (b, p)
    # gold triplets: a mined negative the cross-encoder takes for a positive is replaced
    mined = [(e.anchor, e.negative) for e in examples if e.negative_source == "mined"]
    mined_p = dict(zip(mined, score(mined), strict=True)) if mined else {}
    checked = []
    for e in examples:
        p = mined_p.get((e.anchor, e.negative))
        swap = lowest.get(e.anchor)
        if p is not None and p > 0.5 and swap and swap[1] <= NEGATIVE_AT:
            e = Example(e.anchor, e.positive, swap[0], e.group, "checked")
            summary.negatives_replaced += 1
        checked.append(e)
    group_of = dict(zip((a for a, _ in pairs), owners, strict=True))
    is_query = {a: group_of[a].startswith("query") for a in group_of}
    silver = [Example(a, p, n, group_of[a], "silver")
              for a, p, n in pick_silver([s for s in scored if is_query[s[0]]])]
    silver += [Example(a, b, "", group_of[a], "silver", int(p >= POSITIVE_AT))
               for a, b, p in scored
               if not is_query[a] and (p >= POSITIVE_AT or p <= NEGATIVE_AT)]
    random.Random(seed).shuffle(silver)
    silver = silver[:MAX_SILVER_PER_GOLD * max(len(examples), 1)]
    summary.silver = len(silver)
    summary.gold_pairs = len(examples)
    return checked + silver, summary
