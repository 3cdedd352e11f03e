"""Unsupervised SimCSE (Gao et al. 2021): adapt the encoder to a corpus with no judgements.

Each sentence is its own positive: it goes through the encoder twice in one
batch, and dropout makes the two vectors differ a little; in-batch negatives
(MultipleNegativesRankingLoss, scale 20 = the paper's temperature 0.05) teach
the model to find a sentence's twin among the batch's other sentences. So it
needs nothing but the corpus' own texts, and it reuses the siamese trainer
whole: the data are (sentence, sentence) pairs with the ``mnrl`` objective,
the trainer's forward pass runs in training mode (dropout on), and batches
never hold a sentence twice (``batching``).

Why SimCSE and not TSDAE (Wang et al. 2021): TSDAE adds a transformer decoder
with cross-attention that rebuilds each sentence from its vector, predicting
every token over the 30,522-word vocabulary; per sentence that is about three
times SimCSE's two encoder passes, and on 2 CPU cores the difference decides
whether an adaptation takes minutes or most of an hour. What either one is
worth is measured, not assumed (``benchmarks/learning_loop.py``): an encoder
already trained on a billion pairs, like the bundled one, may gain nothing.

Example:
    >>> data = simcse_data(["A cat sleeps.", "A dog barks.", "A cat sleeps.", " no "], seed=0)
    >>> data.objective, sorted(data.texts[0]), data.texts[0] == data.texts[1]
    ('mnrl', ['A cat sleeps.', 'A dog barks.'], True)
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from searchapp.training.data import TrainingData

LIMIT = 20_000  # sentences used at most (drawn at random): enough for one short epoch
MIN_CHARS = 8  # shorter texts (ids, single words) teach nothing
LR = 3e-5  # SimCSE's learning rate for BERT-base
BATCH = 32


def simcse_data(texts: Iterable[str], limit: int = LIMIT, seed: int = 42) -> TrainingData:
    """Each distinct text (stripped, at least MIN_CHARS characters) paired with itself.

    At most ``limit`` of them, drawn with ``seed``; long texts are cut to their
    first 1,000 characters (the encoder reads 256 tokens of them anyway).
    """
    unique = sorted({t.strip()[:1000] for t in texts if len(t.strip()) >= MIN_CHARS})
    random.Random(seed).shuffle(unique)
    chosen = unique[:limit]
    return TrainingData("pairs", "mnrl", {"sentence1": "text", "sentence2": "text"},
                        [list(chosen), list(chosen)], source="corpus text (unsupervised SimCSE)")
