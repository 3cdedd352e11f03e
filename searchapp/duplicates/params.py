"""The knobs of duplicate detection and how a threshold maps to a stored result.

Pairs are mined once per (corpus, model, k, floor), where the floor is the
threshold rounded down to a multiple of ``FLOOR_STEP``; any threshold at or
above a stored floor is answered by filtering that result.

Example:
    >>> floor_for(0.83), params_key(10, 0.8)
    (0.8, 'k=10;floor=0.80')
"""

from __future__ import annotations

import math

from searchapp.errors import SearchAppError, check_range
from searchapp.vectors.index import EXACT_MAX

KIND = "duplicates"
DEFAULT_K = 10
MAX_K = 100
CHECK_K = 20  # neighbours looked at when checking a new question
MAX_EXPANDED_K = 1000  # a document with more partners than k is asked again, up to this
FLOOR_STEP = 0.05
EXACT_CLIQUE_MAX = 50  # more identical texts than this are paired with the first one only
INLINE_MAX = EXACT_MAX  # the CLI mines corpora up to this size in-process, larger ones as a job


class TooFewDocumentsError(SearchAppError):
    """Duplicate detection needs at least two embedded documents."""


def floor_for(threshold: float) -> float:
    """The mining floor for a threshold: rounded down to a multiple of FLOOR_STEP."""
    return round(math.floor(round(threshold / FLOOR_STEP, 6)) * FLOOR_STEP, 2)


def check_k(k: int) -> int:
    return int(check_range("k", k, 1, MAX_K))


def params_key(k: int, floor: float) -> str:
    return f"k={k};floor={floor:.2f}"
