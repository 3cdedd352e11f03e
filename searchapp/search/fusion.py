"""How hybrid search fuses its two lists, per corpus: today's defaults or a fitted fusion.

Hybrid search ranks by weighted reciprocal-rank fusion of the semantic and the
lexical candidates: score = w_sem / (k + semantic rank) + w_lex / (k + lexical
rank), each list taken ``depth`` deep (a document missing from a list gets
nothing from it), ties broken by the semantic rank. ``Fusion`` holds those
numbers: the semantic weight (the lexical one is 1), the semantic weight for a
query holding a digit (a code, a version: what the encoder reads worst), the
constant k and the depth; and, one step before, how a document split into
passages gets its place in the semantic list: its best passage and its whole
vector together, the latter weighing ``document_weight``
(``searchapp.search.evidence``; a fitted fusion keeps the default). ``DEFAULT``
is what ``benchmarks/retrieval_quality.py`` chose; a corpus with judged queries can get its own
(``searchapp.evaluation.fusion_fit``), kept only when it beats the one in use on
the held-out judgements.

A fitted fusion is stored in the ``info`` of the model row, per corpus id
(``models.info["fusion"]["<corpus id>"]``), beside the duplicate threshold: the
semantic list, hence the best fusion, belongs to the model, so a corpus switched
to another model searches with the defaults until a fusion is fitted for it.

Example:
    >>> DEFAULT.weights("a dog on the beach"), DEFAULT.weights("XR-7 firmware")
    ((3.0, 1.0), (1.0, 1.0))
    >>> rrf_scores(DEFAULT, "a dog", np.array([1, 0]), np.array([0, 1])).round(4).tolist()
    [0.2727, 0.0909]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import numpy as np

from searchapp.errors import InvalidParameterError
from searchapp.search.evidence import DOCUMENT_WEIGHT
from searchapp.store import repo

RRF_K = 10  # reciprocal-rank fusion's constant (60 in Cormack et al. 2009; 10 measured better)
SEMANTIC_WEIGHT = 3.0  # the semantic list's weight against the lexical one's 1
# ...for a query written in a multilingual corpus' own language (translated_words.WordsSide):
# words are as strong as meaning there (benchmarks/fusion_languages.py chose it on man2-8)
SAME_LANGUAGE_WEIGHT = 1.0
DIGIT_WEIGHT = 1.0  # the semantic weight for a query with a digit in it
FUSION_DEPTH = 50  # candidates taken from each list for fusion (at least k)
MAX_DEPTH = 100  # the deepest a fitted fusion may look (evaluation's ranking depth)
INFO_KEY = "fusion"  # models.info[INFO_KEY][str(corpus id)] = {"fusion", "gain", ...}


@dataclass(frozen=True)
class Fusion:
    """The numbers of a weighted reciprocal-rank fusion; ``source`` says where they come from.

    Example:
        >>> Fusion(semantic_weight=2.0, rrf_k=5, depth=30, source="fitted").describe()
        'fitted: semantic weight 2 (1 with a digit), RRF k 5, depth 30'
    """

    semantic_weight: float = SEMANTIC_WEIGHT
    digit_weight: float = DIGIT_WEIGHT
    rrf_k: float = RRF_K
    depth: int = FUSION_DEPTH
    source: str = "default"  # "default" or "fitted"
    # a split document's whole vector against its best passage (searchapp.search.evidence)
    document_weight: float = DOCUMENT_WEIGHT
    # the semantic weight for a query in the corpus' own language, on a corpus of a
    # multilingual model (None: ``semantic_weight``; a fitted fusion keeps its own)
    same_language_weight: float | None = None

    def __post_init__(self) -> None:
        if not (self.semantic_weight >= 0 and self.digit_weight >= 0 and self.rrf_k >= 0
                and self.document_weight >= 0
                and (self.same_language_weight is None or self.same_language_weight >= 0)):
            raise InvalidParameterError("A fusion's weights and RRF constant must be 0 or more; "
                                        f"got {self.semantic_weight}, {self.digit_weight}, "
                                        f"{self.rrf_k}, {self.document_weight}.")
        if not 1 <= self.depth <= MAX_DEPTH:
            raise InvalidParameterError(f"A fusion's depth must be from 1 to {MAX_DEPTH}; "
                                        f"got {self.depth}.")

    def weights(self, query: str, in_corpus_language: bool | None = None
                ) -> tuple[float, float]:
        """(semantic, lexical) weights for ``query``: a digit in it switches to
        ``digit_weight``; else, a query known to be in a multilingual corpus' own language
        (``translated_words.WordsSide``) takes ``same_language_weight`` where there is one.

        Example:
            >>> DEFAULT.weights("liste den inhalt", True), DEFAULT.weights("list contents")
            ((1.0, 1.0), (3.0, 1.0))
        """
        if any(ch.isdigit() for ch in query):
            return self.digit_weight, 1.0
        if in_corpus_language and self.same_language_weight is not None:
            return self.same_language_weight, 1.0
        return self.semantic_weight, 1.0

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Fusion:
        """A fusion from ``as_dict``'s output (unknown keys are ignored; one stored before
        the document weight existed gets today's)."""
        same = data.get("same_language_weight")
        return cls(float(data["semantic_weight"]), float(data["digit_weight"]),
                   float(data["rrf_k"]), int(data["depth"]), str(data.get("source", "fitted")),
                   float(data.get("document_weight", DOCUMENT_WEIGHT)),
                   None if same is None else float(same))

    def describe(self) -> str:
        return (f"{self.source}: semantic weight {self.semantic_weight:g} "
                f"({self.digit_weight:g} with a digit), RRF k {self.rrf_k:g}, depth {self.depth}")


DEFAULT = Fusion(same_language_weight=SAME_LANGUAGE_WEIGHT)


def fusion_line(fusion: dict, gain: dict | None = None) -> str:
    """A report's fusion (``Fusion.as_dict``) and, for a fitted one, what it gained when fitted
    (a ``bootstrap.Difference.scaled()``): the line the CLI and the Evaluate page show.

    Example:
        >>> fusion_line(DEFAULT.as_dict())
        'default: semantic weight 3 (1 with a digit), RRF k 10, depth 50'
        >>> gain = {"a": {"value": 61.2}, "b": {"value": 64.05}, "delta": 2.85, "low": 1.1,
        ...         "high": 4.6}
        >>> fusion_line(Fusion(1.5, source="fitted").as_dict(), gain)[-70:]
        'nDCG@10 61.20 → 64.05 (+2.85, 95% interval +1.10 to +4.60) when fitted'
    """
    text = Fusion.from_dict(fusion).describe()
    if gain:
        text += (f"; held-out hybrid nDCG@10 {gain['a']['value']:.2f} → {gain['b']['value']:.2f}"
                 f" ({gain['delta']:+.2f}, 95% interval {gain['low']:+.2f} to "
                 f"{gain['high']:+.2f}) when fitted")
    return text


def rrf_scores(fusion: Fusion, query: str, semantic_ranks: np.ndarray,
               lexical_ranks: np.ndarray, depth: int | None = None) -> np.ndarray:
    """Fused scores of candidates from their 1-based ranks (0: not in that list), (n,) → (n,).

    Ranks past ``depth`` (default ``fusion.depth``; ``search`` takes max(k, depth)
    candidates) count as absent. Computed as ``search`` adds them (semantic part
    first), so both give the same floats and the same order.
    """
    w_sem, w_lex = fusion.weights(query)
    depth = fusion.depth if depth is None else depth
    sem = np.asarray(semantic_ranks, dtype=float)
    lex = np.asarray(lexical_ranks, dtype=float)
    with np.errstate(divide="ignore"):
        part_sem = np.where((sem >= 1) & (sem <= depth), w_sem / (fusion.rrf_k + sem), 0)
        part_lex = np.where((lex >= 1) & (lex <= depth), w_lex / (fusion.rrf_k + lex), 0)
    return part_sem + part_lex


# ---- stored per corpus and model ----------------------------------------------------------
def stored_entry(app, corpus_id: int, model: str) -> dict | None:
    """The stored record of ``model``'s fitted fusion on corpus ``corpus_id``, if any:
    ``{"fusion": {...}, "gain": {...}, "fitted_at": ..., ...}``."""
    with app.db.session() as s:
        row = repo.find_model(s, model)
        info = (row.info or {}) if row is not None else {}
    return (info.get(INFO_KEY) or {}).get(str(corpus_id))


def fusion_for(app, corpus_id: int, model: str) -> Fusion:
    """The fusion hybrid search uses on this corpus with this model: fitted, else DEFAULT.

    Example:
        >>> fusion_for(app, handle.corpus_id, handle.model.name).source   # doctest: +SKIP
        'fitted'
    """
    entry = stored_entry(app, corpus_id, model)
    return Fusion.from_dict(entry["fusion"]) if entry else DEFAULT


def save_fusion(app, corpus_id: int, model: str, fusion: Fusion | None,
                record: dict | None = None) -> None:
    """Store ``fusion`` (with ``record``: what it gained, on how many judgements) as the one
    ``model`` uses on the corpus; ``None`` removes a stored one (back to DEFAULT)."""
    app.model_ref(model)  # registers a model on first use
    with app.db.session() as s:
        row = repo.find_model(s, model)
        stored = dict((row.info or {}).get(INFO_KEY) or {})
        if fusion is None:
            stored.pop(str(corpus_id), None)
        else:
            stored[str(corpus_id)] = {
                **(record or {}), "fusion": fusion.as_dict(),
                "fitted_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        repo.update_model_info(s, model, **{INFO_KEY: stored})
