"""Word (.docx) and PowerPoint (.pptx): sections and slides as parts, core properties as metadata.

Both are zip archives, so each passes ``zipsafe`` before python-docx or
python-pptx opens it. A Word document is read in its order, paragraphs and
tables alike (a table row as its cells joined by " | "); a paragraph styled
Title or Heading 1..9 starts a section whose heading path is its part's
section ("1 Intro > 1.2 Scope"). A presentation is one part per slide:
``page`` the slide's number, ``section`` its title, the text of every shape
(groups and tables included) and then the speaker notes. Metadata: title,
author, created, modified (ISO 8601) and, for slides, pages.

Example:
    >>> heading_level("Heading 2", "Heading2"), heading_level("Title", "Title")
    (2, 1)
    >>> heading_level("Body Text", "BodyText") is None
    True
"""

from __future__ import annotations

import re
from pathlib import Path

from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    DocumentError,
    Extracted,
    Limits,
    Part,
)
from searchapp.intake.formats.outline import Sections
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.formats.zipsafe import open_zip

HEADING = re.compile(r"heading ?([1-9])$", re.IGNORECASE)


def read_docx(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """A Word document: one part per section, tables as rows of " | "-joined cells."""
    import docx
    from docx.table import Table

    document = _opened(docx.Document, path, name, limits, "Word document")
    sections = Sections()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in _table_rows(block):
                sections.text(row)
            continue
        style = block.style
        level = heading_level(style.name or "", style.style_id or "") if style else None
        if level is not None:
            sections.heading(level, block.text)
        else:
            sections.text(block.text)
    return [Extracted(sections.parts(), _core(document.core_properties))]


def heading_level(style_name: str, style_id: str) -> int | None:
    """The heading level a paragraph style stands for (Title counts as 1), or None."""
    if style_name == "Title" or style_id == "Title":
        return 1
    match = HEADING.match(style_name) or HEADING.match(style_id)
    return int(match.group(1)) if match else None


def _table_rows(table) -> list[str]:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(_cell_text(cell).split())
            if not cells or text != cells[-1]:  # a merged cell repeats itself
                cells.append(text)
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def _cell_text(cell) -> str:
    """A cell's paragraphs and the rows of the tables nested in it, in order (python-docx's
    ``cell.text`` leaves nested tables out)."""
    from docx.table import Table

    return "\n".join(" ; ".join(_table_rows(block)) if isinstance(block, Table) else block.text
                     for block in cell.iter_inner_content())


def read_pptx(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """A presentation: one part per slide (its title the section), notes after the text."""
    import pptx

    presentation = _opened(pptx.Presentation, path, name, limits, "PowerPoint presentation")
    slides = list(presentation.slides)
    if len(slides) > limits.max_pages:
        raise DocumentError(f"{name} has {len(slides):,} slides, more than the limit of "
                            f"{limits.max_pages:,}. Split it, or raise SEARCHAPP_MAX_PAGES.")
    parts = [_slide(slide, number) for number, slide in enumerate(slides, 1)]
    meta = _core(presentation.core_properties) | {"pages": str(len(slides))}
    return [Extracted([p for p in parts if p.text.strip()], meta)]


def _slide(slide, number: int) -> Part:
    title_shape = slide.shapes.title
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None and \
        title_shape.has_text_frame else ""
    lines = [text for shape in slide.shapes for text in _shape_texts(shape)]
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        lines.append(slide.notes_slide.notes_text_frame.text)
    text = "\n".join(line.strip() for line in lines if line.strip())
    return Part(text, page=number, section=title or None)


def _shape_texts(shape) -> list[str]:
    """The text of a shape: its text frame, a table's rows, a group's members."""
    if shape.shape_type is not None and hasattr(shape, "shapes"):  # a group
        return [t for inner in shape.shapes for t in _shape_texts(inner)]
    if getattr(shape, "has_table", False) and shape.has_table:
        return _table_rows(shape.table)
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        return [shape.text_frame.text]
    return []


def _opened(opener, path: str | Path, name: str, limits: Limits, kind: str):
    """``opener(path)`` after the zip checks; its failures as one DocumentError."""
    open_zip(path, name, limits, kind).close()
    try:
        return opener(str(path))
    except Exception as exc:  # python-docx/pptx raise KeyError, ValueError, lxml errors, ...
        raise DocumentError(f"{name} is not a valid {kind} file (damaged or not what its name "
                            f"says: {type(exc).__name__}). Open it in the program that made it "
                            "and save it again.") from None


def _core(properties) -> dict[str, str]:
    """Title, author, created and modified from the core properties, where set."""
    meta = {"title": properties.title or "", "author": properties.author or "",
            "created": properties.created.isoformat() if properties.created else "",
            "modified": properties.modified.isoformat() if properties.modified else ""}
    return {k: v.strip() for k, v in meta.items() if v and v.strip()}


# This module's formats (``registry``): what names them and what reads them.
register(Format("docx", "document", ("docx",), "Word", "a Word document", read_docx,
                content=frozenset({"zip"}),
                text_in="paragraphs, tables, headers, footers or text boxes"))
register(Format("pptx", "document", ("pptx",), "PowerPoint", "a PowerPoint presentation",
                read_pptx, content=frozenset({"zip"}),
                text_in="slide text, notes, tables or chart labels"))
