"""A search's hit, and the JSON it is written as: what the search service returns, the
reranker reorders, the CLI prints and the API sends.

Example:
    >>> hit_json(SearchHit("q1", "Reset it", 0.9))["score"]
    0.9
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from searchapp.search.snippets import Snippet


@dataclass(frozen=True)
class SearchHit:
    id: str  # the document's external id
    text: str
    score: float  # the mode's score: cosine, BM25, or the fused RRF score
    meta: dict = field(default_factory=dict)
    doc_id: int = 0  # the primary key, for linking a hit to stored analyses
    semantic_rank: int | None = None  # 1-based rank in the semantic candidates, if there
    semantic_score: float | None = None  # cosine (best passage for a split document)
    lexical_rank: int | None = None
    lexical_score: float | None = None
    passage: int | None = None  # the matched passage of a split document (0-based)
    span: tuple[int, int] | None = None  # that passage's characters in ``text``
    snippet: str = ""  # the matched part as plain text (see searchapp.search.snippets)
    highlights: list = field(default_factory=list)  # (start, end) of the query's words in it
    # a document read from a file: {"path", "type", "page", "section"} (searchapp.search.sources)
    source: dict | None = None
    # its reader view opened at the matched part, the passage marked (sources.view_link)
    view: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def marked_snippet(self) -> str:
        """The snippet with the query's words between « and »."""
        return Snippet(self.snippet, self.highlights).marked()


def hit_json(h: SearchHit) -> dict:
    """One hit as JSON: what ``searchapp search --json`` prints and the API returns.

    Example:
        >>> hit_json(SearchHit("q1", "Reset it", 0.9, {"lang": "en"}))["semantic"]
        {'rank': None, 'score': None}
    """
    return {"id": h.id, "text": h.text, "score": h.score,
            "semantic": {"rank": h.semantic_rank, "score": h.semantic_score},
            "lexical": {"rank": h.lexical_rank, "score": h.lexical_score},
            "passage": None if h.span is None else
            {"number": h.passage, "start": h.span[0], "end": h.span[1]},
            "snippet": h.marked_snippet, "meta": h.meta, "source": h.source, "view": h.view}
