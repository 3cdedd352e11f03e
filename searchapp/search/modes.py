"""The search modes, one record each: which lists a mode needs and how it ranks them.

A search gathers up to two candidate lists: the semantic one (nearest vectors, best
cosine first) and the lexical one (BM25 over the query's words). A ``Mode`` says which of
the two it needs, how it orders the candidates of both (``order``), what the search form
calls it and what its score means. ``search.service`` asks the mode, never its name;
the search form, the API's schema and the CLI's choices are made from ``MODES``.
Adding a mode is one record here (its ``order`` function beside it).

Example:
    >>> [m.name for m in MODES.values()]
    ['hybrid', 'semantic', 'lexical']
    >>> mode_named("lexical").semantic, mode_named("hybrid").fuses
    (False, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from searchapp.errors import InvalidParameterError

# candidates: doc → its ranked record (attributes semantic_rank, lexical_rank, score, ...);
# semantic: [candidate with .doc] best first; lexical: [(doc, bm25)] best first;
# weights: (semantic, lexical) fusion weights of this query; rrf_k: the fusion's constant
Order = Callable[[dict[int, Any], list, list[tuple[int, float]], tuple[float, float], int],
                 list]


def _by_meaning(candidates: dict, semantic: list, lexical: list, weights, rrf_k) -> list:
    return [candidates[c.doc] for c in semantic]


def _by_words(candidates: dict, semantic: list, lexical: list, weights, rrf_k) -> list:
    ranked = [candidates[doc] for doc, _ in lexical]
    for r in ranked:
        r.score = r.lexical_score
    return ranked


def _fused(candidates: dict, semantic: list, lexical: list, weights, rrf_k) -> list:
    """Weighted reciprocal-rank fusion of both lists."""
    w_sem, w_lex = weights
    for r in candidates.values():
        r.score = sum(w / (rrf_k + rank) for w, rank in ((w_sem, r.semantic_rank),
                                                         (w_lex, r.lexical_rank))
                      if rank is not None)
    return sorted(candidates.values(), key=lambda r: (-r.score, r.semantic_rank or 10**9))


@dataclass(frozen=True)
class Mode:
    """One search mode (see the module's docstring)."""

    name: str
    label: str  # the search form's choice
    score_note: str  # under the results: what the score means
    semantic: bool  # needs the vector search (and takes a minimum cosine)
    lexical: bool  # needs the full-text search
    order: Order

    @property
    def fuses(self) -> bool:
        """Both lists, fused: the corpus' fitted fusion applies."""
        return self.semantic and self.lexical


MODES: dict[str, Mode] = {m.name: m for m in (
    Mode("hybrid", "Meaning + words",
         "Ranked by meaning and words; score: cosine to the query (1 = same meaning).",
         semantic=True, lexical=True, order=_fused),
    Mode("semantic", "Meaning", "Score: cosine to the query (1 = same meaning).",
         semantic=True, lexical=False, order=_by_meaning),
    Mode("lexical", "Words (BM25)", "Score: BM25 over the query's words (higher is better).",
         semantic=False, lexical=True, order=_by_words),
)}
DEFAULT_MODE = "hybrid"


def mode_named(name: str) -> Mode:
    """The mode called ``name``; an error naming the modes there are.

    Example:
        >>> mode_named("fuzzy")
        Traceback (most recent call last):
        ...
        searchapp.errors.InvalidParameterError: Unknown search mode 'fuzzy'; use one of \
hybrid, semantic, lexical.
    """
    found = MODES.get(name) if isinstance(name, str) else None
    if found is None:
        raise InvalidParameterError(f"Unknown search mode {name!r}; use one of "
                                    f"{', '.join(MODES)}.")
    return found
