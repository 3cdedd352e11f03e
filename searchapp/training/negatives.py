"""Training triplets from judgements: (anchor, positive, hard negative) for in-batch negatives.

Every positive judgement is an anchor and its positive: a query and a document
judged relevant to it, or either document of a pair judged duplicate and the
other one. MultipleNegativesRankingLoss (MNRL) then asks each anchor to pick
its positive among every positive and negative of the batch, so each example
also carries one *hard* negative, a document that looks right but is not:

1. a document judged not relevant to that query (or not a duplicate of that
   document): certain, and exactly the kind of mistake the user saw; else
2. a document mined from the corpus: one of the ``RANGE_MAX`` nearest to the
   anchor under the current model that nobody judged, drawn at random (seeded);
   with ``lexical`` (a query's ``RANGE_MAX`` best lexical hits), half the time
   one of those instead: a document that shares the query's words but does not
   answer it is the mistake hybrid search makes, and the semantic list rarely
   holds it. Both lists pass the same guard, scored by the current model.

With ``passage_of`` (long documents), a query's positive and negative are the
documents' best passages for the query (what search scores), not their first
256 tokens.

Mined negatives carry a risk: an unjudged neighbour may well be relevant (a
second answer to the query, a third copy of the question), and training it
away teaches the model the opposite of the truth. ``guard`` is the check
against such false negatives (the relative margin of sentence-transformers'
``mine_hard_negatives`` and NV-Retriever): a candidate is kept only if the
current model scores it at least ``RELATIVE_MARGIN`` of the positive's score
below the positive and it is not judged positive for the anchor (nor the
anchor itself). A copy of the positive's text under another id scores as the
positive does, so the margin drops it too. When nothing passes, a random
corpus document stands in (an easy negative, still a useful one in-batch).

Example:
    >>> guard([("d1", 0.91), ("d2", 0.80), ("d3", 0.50)], positive_score=0.9,
    ...       exclude={"d3"})                  # d1 scores above 0.9 - 0.9 * 0.05 = 0.855
    ['d2']
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import numpy as np

from searchapp.evaluation.judged import Items
from searchapp.training.data import TrainingData
from searchapp.training.losses import MIXED

RELATIVE_MARGIN = 0.05
RANGE_MAX = 30  # mined negatives come from this many nearest documents
Encode = Callable[[list[str]], np.ndarray]  # texts → unit vectors (n, dim)


@dataclass(frozen=True)
class Anchor:
    """One positive judgement as a training anchor, with what is known about its answers."""

    text: str  # the query, or the anchor document's text
    doc: str | None  # the anchor document's id (None for a query)
    positive: str  # the positive document's id
    group: str  # the query or document it belongs to (examples of one group stay together)
    judged_negatives: tuple[str, ...] = ()  # judged not relevant / not duplicate
    known_positives: tuple[str, ...] = ()  # every document judged positive for the anchor


@dataclass(frozen=True)
class Example:
    """A training row, by text: a triplet (label −1) or a judged pair (label 0 / 1).

    A triplet is (anchor, positive, hard negative) for MNRL, with where its
    negative came from; a pair is (anchor, positive = the other text, "") with
    its label, for the online contrastive loss.
    """

    anchor: str
    positive: str
    negative: str
    group: str
    negative_source: str  # "judged" | "mined" | "random" | "checked" | "silver" | "pair"
    label: int = -1


def pair_rows(items: Items, texts: dict[str, str], source: str = "pair") -> list[Example]:
    """The judged pairs as contrastive rows (both documents still in the corpus).

    Example:
        >>> from searchapp.evaluation.judged import JudgedPair
        >>> pair_rows(Items(pairs=[JudgedPair("a", "b", 0)]), {"a": "A", "b": "B"})[0].label
        0
    """
    return [Example(texts[p.a], texts[p.b], "", f"doc\x1f{p.a}", source, p.label)
            for p in items.pairs if p.a in texts and p.b in texts]


@dataclass
class MiningSummary:
    """How the negatives were found, for the model card and the job's result."""

    examples: int = 0
    judged: int = 0
    mined: int = 0
    random: int = 0
    lexical: int = 0  # mined from the lexical list
    guarded: int = 0  # mined candidates dropped by the false-negative guard
    passages: int = 0  # positives or negatives shortened to their best passage

    def as_dict(self) -> dict:
        return asdict(self)


def anchors_of(items: Items) -> list[Anchor]:
    """Every positive judgement as an anchor (a duplicate pair gives one each way).

    Example:
        >>> from searchapp.evaluation.judged import JudgedPair, JudgedQuery
        >>> items = Items([JudgedQuery("reset", {"d1": 1, "d2": 0})], [JudgedPair("a", "b", 1)])
        >>> [(x.doc, x.positive, x.judged_negatives) for x in anchors_of(items)]
        [(None, 'd1', ('d2',)), ('a', 'b', ()), ('b', 'a', ())]
    """
    out: list[Anchor] = []
    for q in items.queries:
        relevant = tuple(sorted(q.relevant))
        negatives = tuple(sorted(d for d, g in q.grades.items() if g < 1))
        out.extend(Anchor(q.query, None, d, f"query\x1f{q.query}", negatives, relevant)
                   for d in relevant)
    partners: dict[str, dict[int, set[str]]] = {}
    for p in items.pairs:
        for x, y in ((p.a, p.b), (p.b, p.a)):
            partners.setdefault(x, {0: set(), 1: set()})[p.label].add(y)
    for p in items.pairs:
        if p.label != 1:
            continue
        for x, y in ((p.a, p.b), (p.b, p.a)):
            known = partners[x]
            out.append(Anchor("", x, y, f"doc\x1f{x}", tuple(sorted(known[0])),
                              tuple(sorted(known[1]))))
    return out


def guard(candidates: Iterable[tuple[str, float]], positive_score: float,
          exclude: set[str] = frozenset(), relative_margin: float = RELATIVE_MARGIN
          ) -> list[str]:
    """The candidate documents that are safe to use as negatives, in the order given.

    Dropped: any scoring above ``positive_score − |positive_score| · relative_margin``
    (likely a positive nobody judged, or a copy of the positive) and any in
    ``exclude`` (judged positive, the anchor, the positive).
    """
    bound = positive_score - abs(positive_score) * relative_margin
    return [doc for doc, score in candidates if score <= bound and doc not in exclude]


Lexical = Callable[[list[str]], list[list[str]]]  # query texts → ranked document ids
PassageOf = Callable[[np.ndarray, str], str]  # (query vector, document id) → passage text


def mine_examples(anchors: list[Anchor], texts: dict[str, str], vectors_of: Callable[[list[str]],
                  np.ndarray], encode: Encode, neighbours: Callable[[np.ndarray, int],
                  list[list[tuple[str, float]]]], seed: int = 42,
                  relative_margin: float = RELATIVE_MARGIN,
                  report: Callable[[int, int], None] | None = None,
                  lexical: Lexical | None = None, passage_of: PassageOf | None = None
                  ) -> tuple[list[Example], MiningSummary]:
    """One triplet per anchor: a judged negative when there is one, else a guarded mined one.

    ``texts``: {document id: text} of the corpus; ``vectors_of(ids)``: the current
    model's document vectors (n, dim); ``encode(texts)``: query vectors;
    ``neighbours(vectors, k)``: for each vector the k nearest (document id, cosine);
    ``lexical`` and ``passage_of``: see the module docstring.
    """
    rng = random.Random(seed)
    summary = MiningSummary()
    all_docs = sorted(texts)
    need = [a for a in anchors if not a.judged_negatives]
    vectors = _anchor_vectors(anchors if passage_of else need, texts, vectors_of, encode)
    positive_vectors = dict(zip([a.positive for a in need],
                                vectors_of([a.positive for a in need]), strict=True)) \
        if need else {}
    found = _candidates(need, vectors, vectors_of, neighbours, lexical)
    examples, turn = [], {}
    for i, a in enumerate(anchors):
        anchor_text = a.text or texts[a.doc]
        if a.judged_negatives:
            k = turn.get(a.group, 0)
            turn[a.group] = k + 1
            negative, source = a.judged_negatives[k % len(a.judged_negatives)], "judged"
        else:
            positive_score = float(vectors[id(a)] @ positive_vectors[a.positive])
            exclude = {a.positive, *a.known_positives, *([a.doc] if a.doc else [])}
            negative, source = _pick(rng, found[id(a)], positive_score, exclude,
                                     relative_margin, summary, all_docs)
        setattr(summary, source, getattr(summary, source) + 1)
        positive, negative_text = texts[a.positive], texts[negative]
        if passage_of is not None and a.doc is None:
            positive = passage_of(vectors[id(a)], a.positive)
            negative_text = passage_of(vectors[id(a)], negative)
            summary.passages += (positive != texts[a.positive]) + \
                (negative_text != texts[negative])
        examples.append(Example(anchor_text, positive, negative_text, a.group,
                                "mined" if source == "lexical" else source))
        if report:
            report(i + 1, len(anchors))
    summary.examples = len(examples)
    return examples, summary


def _anchor_vectors(anchors: list[Anchor], texts: dict[str, str], vectors_of, encode
                    ) -> dict[int, np.ndarray]:
    """{id(anchor): its vector}: queries encoded, documents' stored vectors."""
    queries = [a for a in anchors if a.doc is None]
    docs = [a for a in anchors if a.doc is not None]
    out = {}
    if queries:
        out.update(zip((id(a) for a in queries), encode([a.text for a in queries]), strict=True))
    if docs:
        out.update(zip((id(a) for a in docs), vectors_of([a.doc for a in docs]), strict=True))
    return out


def _candidates(need: list[Anchor], vectors: dict, vectors_of, neighbours,
                lexical: Lexical | None) -> dict[int, tuple[list, list]]:
    """{id(anchor): (semantic candidates, lexical candidates)}, each [(doc, cosine)]."""
    if not need:
        return {}
    matrix = np.stack([vectors[id(a)] for a in need])  # (m, dim)
    semantic = neighbours(matrix, RANGE_MAX + 1)
    words: dict[int, list[tuple[str, float]]] = {}
    queries = [a for a in need if a.doc is None]
    if lexical is not None and queries:
        for a, ids in zip(queries, lexical([a.text for a in queries]), strict=True):
            scores = vectors_of(ids) @ vectors[id(a)] if ids else []
            words[id(a)] = [(d, float(x)) for d, x in zip(ids, scores, strict=True)]
    return {id(a): (near, words.get(id(a), [])) for a, near in zip(need, semantic, strict=True)}


def _pick(rng: random.Random, lists: tuple[list, list], positive_score: float,
          exclude: set[str], margin: float, summary: MiningSummary, all_docs: list[str]
          ) -> tuple[str, str]:
    """(negative, source): from the lexical list half the time when it has a safe one."""
    semantic, words = lists
    safe = guard(semantic, positive_score, exclude, margin)
    safe_words = guard(words, positive_score, exclude, margin)
    summary.guarded += sum(1 for d, _ in [*semantic, *words] if d not in exclude) \
        - len(safe) - len(safe_words)
    if safe_words and (not safe or rng.random() < 0.5):
        return rng.choice(safe_words), "lexical"
    if safe:
        return rng.choice(safe), "mined"
    return _random_other(rng, all_docs, exclude), "random"


def _random_other(rng: random.Random, docs: list[str], exclude: set[str]) -> str:
    for _ in range(100):
        doc = rng.choice(docs)
        if doc not in exclude:
            return doc
    return docs[0]


def training_data(examples: list[Example], source: str = "judgements") -> TrainingData:
    """The rows as TrainingData: ``mnrl`` for triplets only, ``contrastive`` for judged pairs
    only, ``mixed`` (``losses.MixedLoss``) for both.

    Example:
        >>> data = training_data([Example("q", "p", "n", "g", "mined")])
        >>> data.objective, data.texts
        ('mnrl', [['q'], ['p'], ['n']])
        >>> training_data([Example("a", "b", "", "g", "pair", 1),
        ...                Example("q", "p", "n", "g", "mined")]).labels
        [1, -1]
    """
    labels = [e.label for e in examples]
    columns = {"anchor": "anchor", "positive": "positive", "negative": "negative"}
    texts = [[e.anchor for e in examples], [e.positive for e in examples],
             [e.negative for e in examples]]
    if all(y < 0 for y in labels):
        return TrainingData("triplet", "mnrl", columns, texts, source=source)
    if all(y >= 0 for y in labels):
        return TrainingData("contrastive", "contrastive", {"sentence1": "a", "sentence2": "b",
                                                           "label": "label"},
                            texts[:2], labels, source=source)
    return TrainingData("mixed", MIXED, columns, texts, labels, source=source)
