"""A stored document laid out for reading: its text in parts, each part an anchor, a heading
where a section begins.

A document read from a file keeps its parts' spans (``layout``: [[start, end, page,
section], ...]; ``intake/formats/document``). The reader view (``web/reader``) shows
the stored text part by part, never the original's markup, so it works alike for every
format: a web page, Markdown, reStructuredText, Word, OpenDocument, an e-book, a PDF
(parts are pages) or an e-mail. Part ``N`` is the anchor ``s-N`` that a hit's
``view_link`` (``search/sources``) points at. A part whose section differs from the
part before it begins that section: it gets a heading, the last step of its heading
path, at a level from the path's depth. Readers put the heading's own words first in
the section's text (``Install\\nRun the installer.``); that first line is shown as the
heading itself, so it is neither lost nor shown twice.

Example:
    >>> blocks = layout_blocks("Guide\\nIntro.\\n\\nInstall\\nRun it.",
    ...                        [[0, 12, None, "Guide"], [14, 29, None, "Guide > Install"]])
    >>> [(b.anchor, b.heading, b.level, b.body_start) for b in blocks]
    [(0, 'Guide', 2, 5), (1, 'Install', 3, 21)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from searchapp.context import App
from searchapp.errors import DocumentNotFoundError
from searchapp.store import repo
from searchapp.store.schema import Document

SECTION_STEP = " > "  # between the levels of a heading path (formats/document.Part)
MAX_LEVEL = 6  # <h6>; the document's title is the <h1>


@dataclass(frozen=True)
class Block:
    """One part of a document as the reader shows it: ``anchor`` (its number, ``s-N``),
    its characters ``start``–``end`` in the text, its page, and its section's heading
    where the section begins here (``heading``, ``level`` 2–6). ``body_start``: where
    the part's text goes on after its first line when that line is the heading (else
    ``start``, and the heading is shown from the path alone)."""

    anchor: int
    start: int
    end: int
    page: int | None
    section: str | None
    heading: str | None
    level: int
    body_start: int


@dataclass(frozen=True)
class Reading:
    """A stored document to read: its corpus and id, a title, its text and blocks."""

    corpus: str
    id: str
    title: str
    text: str
    blocks: list[Block]
    has_original: bool


def layout_blocks(text: str, layout: Sequence[Sequence] | None) -> list[Block]:
    """The blocks of ``text`` by its ``layout`` (one block of the whole text without one).

    Spans are clipped to the text, so a layout that no longer fits its text shows what
    there is and never fails.

    Example:
        >>> [(b.start, b.end) for b in layout_blocks("Just text.", None)]
        [(0, 10)]
    """
    if not layout:
        return [Block(0, 0, len(text), None, None, None, 0, 0)]
    blocks, previous = [], None
    for number, part in enumerate(layout):
        start = min(max(0, int(part[0])), len(text))
        end = min(max(start, int(part[1])), len(text))
        page, section = part[2], part[3] or None
        heading, level, body = None, 0, start
        if section and section != previous:
            heading = section.rsplit(SECTION_STEP, 1)[-1].strip() or section
            level = min(MAX_LEVEL, 2 + section.count(SECTION_STEP))
            body = _after_heading(text, start, end, heading)
        blocks.append(Block(number, start, end, page, section, heading, level, body))
        previous = section
    return blocks


def _after_heading(text: str, start: int, end: int, heading: str) -> int:
    """Where the part's text goes on after its first line, when that line is ``heading``
    (spaces aside); else ``start``."""
    line_end = text.find("\n", start, end)
    line_end = end if line_end < 0 else line_end
    if " ".join(text[start:line_end].split()) != " ".join(heading.split()):
        return start
    return line_end


def read_document(app: App, corpus: str, external_id: str) -> Reading:
    """The stored document ``external_id`` of ``corpus`` laid out for reading.

    CorpusNotFoundError or DocumentNotFoundError (each names what to check) when either
    is not stored.

    Example:
        >>> read_document(app, "manuals", "guide/install.md").blocks[1].heading  # doctest: +SKIP
        'Install'
    """
    with app.db.session() as s:
        c = repo.corpus_state(s, corpus)
        row = s.execute(select(Document.id, Document.text, Document.meta, Document.original)
                        .where(Document.corpus_id == c.id,
                               Document.external_id == external_id)).first()
        if row is None:
            raise DocumentNotFoundError(c.name, external_id)
        layout = repo.layouts_by_id(s, [row[0]]).get(int(row[0]))
        name = c.name
    meta = dict(row[2] or {})
    title = str(meta.get("title") or external_id.rsplit("/", 1)[-1])
    return Reading(name, external_id, title, row[1], layout_blocks(row[1], layout),
                   bool(row[3]))
