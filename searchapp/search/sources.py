"""Where a hit sits in its file: the path, the type, and the page and section of the
passage that matched.

A document read from a file keeps its parts' spans (``layout``: [[start, end,
page, section], ...]); the passage that matched (or, for a hit found by words
alone, the first place the query's words occur) falls in one part, whose page
and section the hit names. Documents from tables (a CSV row) have no source.

Example:
    >>> meta = {"path": "guide/install.pdf", "type": "pdf", "sha256": "9f86d0"}
    >>> layout = [[0, 40, 1, None], [42, 90, 4, "2.1 Requirements"]]
    >>> hit_source(meta, layout, (50, 70), "")
    {'path': 'guide/install.pdf', 'type': 'pdf', 'page': 4, 'section': '2.1 Requirements'}
    >>> hit_source({"lang": "en"}, None, None, "") is None
    True
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence


def part_at(layout: Sequence[Sequence], offset: int) -> Sequence | None:
    """The part of ``layout`` that holds character ``offset`` (the nearest before it when
    the offset falls between two parts, the first when before all)."""
    if not layout:
        return None
    starts = [int(p[0]) for p in layout]
    return layout[max(0, bisect_right(starts, offset) - 1)]


def first_match(text: str, words: Sequence[str]) -> int:
    """Where the first of ``words`` occurs in ``text`` (case-insensitive), or 0."""
    lowered = text.lower()
    found = [i for i in (lowered.find(w.lower()) for w in words if w) if i >= 0]
    return min(found) if found else 0


def hit_source(meta: dict, layout: Sequence[Sequence] | None, span: tuple[int, int] | None,
               text: str, words: Sequence[str] = ()) -> dict | None:
    """``{"path", "type", "page", "section"}`` for a document read from a file, else None.

    ``span`` is the matched passage; without one the query's ``words`` locate the part.
    """
    path = meta.get("path")
    if not path or not meta.get("type") or "sha256" not in meta:
        return None
    offset = span[0] if span is not None else first_match(text, words)
    part = part_at(layout or [], offset)
    page = part[2] if part is not None else None
    section = part[3] if part is not None else None
    return {"path": path, "type": meta["type"], "page": page, "section": section}
