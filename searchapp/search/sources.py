"""Where a hit sits in its file: the path, the type, and the page and section of the
passage that matched.

A document read from a file keeps its parts' spans (``layout``: [[start, end,
page, section], ...]); the passage that matched (or, for a hit found by words
alone, the first marked word of its snippet) falls in one part, whose page
and section the hit names. Documents from tables (a CSV row) have no source, whatever
their metadata says: only a document the app read from a file has a layout.

Example:
    >>> meta = {"path": "guide/install.pdf", "type": "pdf", "sha256": "9f86d0"}
    >>> layout = [[0, 40, 1, None], [42, 90, 4, "2.1 Requirements"]]
    >>> hit_source(meta, layout, 50)
    {'path': 'guide/install.pdf', 'type': 'pdf', 'page': 4, 'section': '2.1 Requirements'}
    >>> hit_source({"lang": "en"}, None, 0) is None, hit_source(meta, None, 0) is None
    (True, True)
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


def hit_source(meta: dict, layout: Sequence[Sequence] | None, offset: int) -> dict | None:
    """``{"path", "type", "page", "section"}`` for a document read from a file, else None.

    ``offset``: where the hit matched in the document's text (its matched passage's
    start, or its snippet's first marked word).
    """
    path = meta.get("path")
    if not layout or not path or not meta.get("type"):  # a layout: the app read it from a file
        return None
    part = part_at(layout or [], offset)
    page = part[2] if part is not None else None
    section = part[3] if part is not None else None
    return {"path": path, "type": meta["type"], "page": page, "section": section}
