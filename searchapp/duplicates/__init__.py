"""Duplicate questions: every pair above a threshold, grouped, and a check for a new one.

- ``params``: k, floors, the stored-result key.
- ``text_keys``: the normalised text exact duplicates are compared on.
- ``mining``: pairs from the k-NN graph (and exact-text pairs), ``Mined``.
- ``grouping``: stars around representatives, so chains cannot merge.
- ``results``: pairs, groups, the report, matches.
- ``service``: stored results per generation, the ``duplicates`` job.
- ``check``: a new question against the corpus.
- ``export``: reports as tables.
- ``calibration``: the model's threshold, calibrated on a file of labelled pairs;
  ``judged_threshold``: from the corpus' own judgements, for a chosen precision.
- ``review``: the review queue, borderline pairs first, each decision a judgement.

Example:
    >>> report = find_duplicates(app, "faq", threshold=0.85)          # doctest: +SKIP
    >>> check(app, "faq", "How can I change my password?")[0].id      # doctest: +SKIP
    'q12'
"""

from searchapp.duplicates.check import CheckReport, add_question, check, check_report
from searchapp.duplicates.export import groups_frame, pairs_frame
from searchapp.duplicates.grouping import group_pairs
from searchapp.duplicates.mining import Mined, exact_pairs, knn_pairs, mine
from searchapp.duplicates.params import (
    CHECK_K,
    DEFAULT_K,
    EXACT_CLIQUE_MAX,
    INLINE_MAX,
    KIND,
    MAX_K,
    TooFewDocumentsError,
    floor_for,
)
from searchapp.duplicates.results import DuplicateGroup, DuplicatePair, DuplicateReport, Match
from searchapp.duplicates.service import (
    duplicates_task,
    find_duplicates,
    mine_corpus,
    mined_before,
    request_mining,
    stored,
)
from searchapp.pairs.text_keys import normalise, text_key

__all__ = [
    "CHECK_K", "DEFAULT_K", "EXACT_CLIQUE_MAX", "INLINE_MAX", "KIND", "MAX_K", "CheckReport",
    "DuplicateGroup", "DuplicatePair", "DuplicateReport", "Match", "Mined",
    "TooFewDocumentsError", "add_question", "check", "check_report", "duplicates_task",
    "exact_pairs", "find_duplicates", "floor_for", "group_pairs", "groups_frame", "knn_pairs",
    "mine", "mine_corpus", "mined_before", "normalise", "pairs_frame", "request_mining",
    "stored", "text_key",
]
