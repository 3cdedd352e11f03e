"""Word (.docx) and PowerPoint (.pptx): sections and slides as parts, core properties as metadata.

Both are zip archives, so each passes ``zipsafe`` before python-docx or
python-pptx opens it. A Word document is read in its order, paragraphs and
tables alike (a table row as its cells joined by " | "), a paragraph's text boxes after
it, then the distinct lines of its headers and footers as a last part (section
"Headers and footers"); a paragraph styled
Title or Heading 1..9 starts a section whose heading path is its part's
section ("1 Intro > 1.2 Scope"). A presentation is one part per slide:
``page`` the slide's number, ``section`` its title, the text of every shape
(groups, tables and charts included: a chart's title, axis titles, category labels
and series names) and then the speaker notes. Metadata: title,
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

from lxml import etree

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
BOX_NS = {"w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
          "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006"}
BOXES = etree.XPath(".//w:txbxContent[not(ancestor::mc:Fallback)]", namespaces=BOX_NS)
BOX_PARAGRAPHS = etree.XPath(".//w:p", namespaces=BOX_NS)
RUN_TEXT = etree.XPath(".//w:t/text()", namespaces=BOX_NS)


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
        for box in text_boxes(block._p):
            sections.text(box)
    margins = _margins(document)
    parts = sections.parts() + ([Part(margins, section="Headers and footers")] if margins else [])
    return [Extracted(parts, _core(document.core_properties))]


def text_boxes(element) -> list[str]:
    """The text of the text boxes anchored in a paragraph (python-docx's ``text`` leaves them
    out), each once: Word writes a box twice, for new readers and as a VML fallback.

    Example:
        >>> from lxml import etree
        >>> W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
        >>> p = etree.fromstring(f'<w:p xmlns:w="{W}"><w:r><w:txbxContent><w:p><w:r>'
        ...                      '<w:t>Boxed</w:t></w:r></w:p></w:txbxContent></w:r></w:p>')
        >>> text_boxes(p)
        ['Boxed']
    """
    texts = ["\n".join("".join(RUN_TEXT(p)) for p in BOX_PARAGRAPHS(box))
             for box in BOXES(element)]
    return [text for text in texts if text.strip()]


def _margins(document) -> str:
    """The distinct lines of every section's own headers and footers (first page, even pages
    and the rest), in order: a letterhead or a footer may be the only place a name is."""
    lines: dict[str, None] = {}
    for section in document.sections:
        for kind in ("first_page_header", "header", "even_page_header",
                     "first_page_footer", "footer", "even_page_footer"):
            margin = getattr(section, kind)
            if margin.is_linked_to_previous:  # no own definition
                continue
            for block in margin.iter_inner_content():
                texts = _table_rows(block) if hasattr(block, "rows") else [block.text]
                lines.update((" ".join(t.split()), None) for t in texts if t.strip())
    return "\n".join(lines)


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
    """The text of a shape: its text frame, a table's rows, a chart's labels, a group's
    members."""
    if shape.shape_type is not None and hasattr(shape, "shapes"):  # a group
        return [t for inner in shape.shapes for t in _shape_texts(inner)]
    if getattr(shape, "has_table", False) and shape.has_table:
        return _slide_table_rows(shape.table)
    if getattr(shape, "has_chart", False) and shape.has_chart:
        return chart_texts(shape.chart)
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        return [shape.text_frame.text]
    return []


def _slide_table_rows(table) -> list[str]:
    """A slide table's rows, cells joined by " | " (a slide's cell has text, not blocks)."""
    rows = []
    for row in table.rows:
        cells = [" ".join(cell.text.split()) for cell in row.cells]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def chart_texts(chart) -> list[str]:
    """A chart's words: its title, its axes' titles, then per plot its category labels (one
    line, " | " between them) and its series' names (one line). A chart whose only text is
    its labels is still a slide with text.

    Example:
        >>> from pptx.chart.data import CategoryChartData
        >>> from pptx import Presentation
        >>> from pptx.enum.chart import XL_CHART_TYPE
        >>> data = CategoryChartData()
        >>> data.categories = ["North", "South"]
        >>> _ = data.add_series("Revenue", (1, 2))
        >>> slide = Presentation().slides.add_slide(Presentation().slide_layouts[6])
        >>> frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, 0, 0, 9, 9, data)
        >>> chart_texts(frame.chart)
        ['North | South', 'Revenue']
    """
    lines = [_titled(chart.has_title, lambda: chart.chart_title)]
    for axis in ("category_axis", "value_axis"):
        try:
            found = getattr(chart, axis)
        except (ValueError, KeyError, AttributeError):  # a pie chart has no axes
            continue
        lines.append(_titled(found.has_title, lambda found=found: found.axis_title))
    try:
        for plot in chart.plots:
            lines.append(" | ".join(str(c) for c in plot.categories if str(c).strip()))
            lines.append(" | ".join(s.name for s in plot.series if s.name and s.name.strip()))
    except (NotImplementedError, ValueError, KeyError, AttributeError):  # a chart type
        pass  # python-pptx cannot walk (a 3-D area chart): its titles are still read
    return [line for line in lines if line.strip()]


def _titled(has: bool, title) -> str:
    """A chart's or an axis's title text, or "" (``title`` is only asked for when ``has``)."""
    if not has:
        return ""
    found = title()
    return found.text_frame.text if found.has_text_frame else ""


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
