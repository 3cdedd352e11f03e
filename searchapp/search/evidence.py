"""How a document split into passages scores against a query: its best passage and the
document as a whole, together.

A document longer than the model's window is embedded passage by passage
(``searchapp.embedding.passages``); its own vector is the normalised mean of its
passages. Scored by its best passage alone, a long page that touches every
subject once (a change log, an index, release notes, a whole user manual) wins
any query that one of its many passages happens to match, ahead of the page
about the subject; scored by its mean alone, the one passage that answers is
diluted. A reader weighs both: the passage that matches, and what the page as a
whole is about. So a split document's semantic score is

    score = (best passage cosine + w · cosine of the document's vector) / (1 + w)

with ``w = DOCUMENT_WEIGHT`` (0.5). Both cosines come from the passage vectors
that scoring the best passage reads anyway (``PassageIndex.passage_evidence``):
one more sum per candidate document, no scan of the corpus. A document that fits
one window has one vector, so both cosines are the same and its score is its
cosine exactly: collections of short texts rank as before. The score stays a
cosine-like number in [-1, 1], shown and filtered (``min_score``) as before; the
hit still names the best passage. Hybrid search fuses this semantic list with
whole-document BM25 as before (``searchapp.search.fusion``); the weight is
``Fusion.document_weight`` (0 gives the best-passage ranking of before).

Measured by ``benchmarks/retrieval_documents.py`` (hybrid, against a plain RRF
(k=60) of whole-page BM25 and MiniLM on each page's first 256 tokens; paired
bootstrap 95% intervals). ``w`` was chosen among 0, 0.25, 0.5, 0.75, 1, 1.5 on
git-doc's 150 later questions only, then reported on the rest:

- git-doc, its first 66 questions (held out): Success@5 90.9 → 97.0,
  MRR@10 66.6 → 73.3 (the plain fusion: 87.9, 65.1); all 216: 83.8 → 90.7 and
  67.5 → 72.2, now minus the plain fusion +11.6 [6.0, 17.1] and +11.2 [5.8, 16.6];
- PostgreSQL's manual pages (a section's heading asked, the page without it the
  answer; ``benchmarks/pg_pages.py``, 153 questions, nothing chosen on them):
  87.6 → 87.6 and 69.4 → 70.0, minus the plain fusion +9.8 [3.3, 16.3] and
  +8.5 [3.5, 13.2];
- the cost, on texts of unrelated filler around one answering sentence
  (``benchmarks/retrieval_quality.py``'s long set): hybrid MRR@10 65.4 → 64.8,
  semantic 60.0 → 57.8;
- per query (warm, 2 cores, alternating): hybrid p50 2.05 → 2.16 ms on git-doc,
  1.96 → 2.12 ms on the PostgreSQL pages (p95 2.70 → 3.39, 2.35 → 3.54).

Example:
    >>> document_score(0.8, 0.2), document_score(0.6, 0.6), document_score(0.8, 0.2, 0.0)
    (0.6, 0.6, 0.8)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from searchapp.vectors.passage_index import PassageIndex

DOCUMENT_WEIGHT = 0.5  # the whole document's cosine against its best passage's 1


def document_score(best: float, whole: float, weight: float = DOCUMENT_WEIGHT) -> float:
    """A split document's score from its best passage's cosine and its own vector's.

    Example:
        >>> round(document_score(0.9, 0.3), 4)   # one passage matches, the page is elsewhere
        0.7
    """
    return (best + weight * whole) / (1.0 + weight)


def split_scores(passages: PassageIndex, vector: np.ndarray, docs: Iterable[int],
                 weight: float = DOCUMENT_WEIGHT) -> dict[int, tuple[int, float]]:
    """{document: (best passage number, score)} for the split documents among ``docs``.

    ``weight`` 0 is the best passage's cosine alone (what search used before).

    Example:
        >>> split_scores(handle.passages, vector, [12, 40])      # doctest: +SKIP
        {12: (3, 0.512)}
    """
    if weight == 0:
        return passages.best_passages(vector, docs)
    return {doc: (number, document_score(best, whole, weight))
            for doc, (number, best, whole) in passages.passage_evidence(vector, docs).items()}
