"""Where a hit sits in its file: the path, the type, and the page and section of the
passage that matched, and the address of the app's reader view opened there.

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

The reader view (``searchapp.web.reader``) shows a stored document part by part, each
part an anchor ``s-N``; ``view_link`` is the address that opens it at the hit's part
with the matched passage marked. It is made here, beside the part it points at, so
every front end (the pages, ``searchapp search``, the API's hit JSON) gives the same one.

    >>> view_link("docs", "guide/a b.md", layout, 50, (45, 70))
    '/view/docs/guide/a%20b.md?mark=45-70#s-1'
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from urllib.parse import quote

VIEW_PATH = "/view"  # the reader view's route (searchapp.web.reader)


def part_number(layout: Sequence[Sequence], offset: int) -> int:
    """The index of the part of ``layout`` that holds character ``offset`` (the nearest
    before it when the offset falls between two parts, the first when before all).

    Example:
        >>> part_number([[0, 10, 1, None], [12, 20, 2, None]], 11)
        0
    """
    starts = [int(p[0]) for p in layout]
    return max(0, bisect_right(starts, offset) - 1)


def part_at(layout: Sequence[Sequence], offset: int) -> Sequence | None:
    """The part of ``layout`` that holds character ``offset`` (``part_number``)."""
    return layout[part_number(layout, offset)] if layout else None


def view_link(corpus: str, doc_id: str, layout: Sequence[Sequence] | None, offset: int,
              region: tuple[int, int] | None = None) -> str:
    """The reader view's address of a document, at the part holding ``offset`` (``#s-N``),
    with ``region`` (the matched passage's characters), cut to that part, to be marked.

    Example:
        >>> view_link("docs", "notes.md", [[0, 5, None, "A"], [7, 30, None, "A > B"]], 9,
        ...           (0, 12))
        '/view/docs/notes.md?mark=7-12#s-1'
        >>> view_link("docs", "notes.md", None, 0)
        '/view/docs/notes.md'
    """
    link = f"{VIEW_PATH}/{quote(corpus, safe='')}/{quote(doc_id, safe='/')}"
    if not layout:
        return link
    number = part_number(layout, offset)
    part_start, part_end = int(layout[number][0]), int(layout[number][1])
    if region is not None:
        start, end = max(int(region[0]), part_start), min(int(region[1]), part_end)
        if start < end:
            link += f"?mark={start}-{end}"
    return link + f"#s-{number}"


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
