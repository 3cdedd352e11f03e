"""OpenDocument text (.odt) and presentations (.odp), read from their XML with defusedxml.

No odfpy: ``content.xml`` and ``meta.xml`` are parsed directly, after
``zipsafe`` has checked the archive (no entity, no DTD, no bomb). In a text
document, ``text:h`` headings (their ``text:outline-level``) start sections
whose heading path is the part's section, and tables are rows of " | "-joined
cells; in a presentation each ``draw:page`` is one part, ``page`` its slide
number, ``section`` its title frame's text, speaker notes after the slide's
text. Metadata (``meta.xml``): title, author, created, modified, and pages for
slides.

Example:
    >>> from xml.etree.ElementTree import fromstring
    >>> p = fromstring(f'<t:p xmlns:t="{TEXT}">a<t:s t:c="2"/>b<t:tab/>c<t:line-break/>d</t:p>')
    >>> inline_text(p)
    'a  b\\tc\\nd'
"""

from __future__ import annotations

from pathlib import Path
from xml.etree.ElementTree import Element

from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    DocumentError,
    Extracted,
    Limits,
    Part,
)
from searchapp.intake.formats.outline import Sections
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.formats.zipsafe import open_zip, read_member, xml_root

OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
PRESENTATION = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
META = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
DC = "http://purl.org/dc/elements/1.1/"
MIMETYPES = {"text": "application/vnd.oasis.opendocument.text",
             "presentation": "application/vnd.oasis.opendocument.presentation"}
SKIPPED = {f"{{{TEXT}}}note-citation", f"{{{TEXT}}}tracked-changes", f"{{{OFFICE}}}annotation"}


def read_odt(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """An OpenDocument text: one part per section."""
    content, meta = _read(path, name, limits, "text", "OpenDocument text")
    body = content.find(f"{{{OFFICE}}}body/{{{OFFICE}}}text")
    sections = Sections()
    if body is not None:
        _blocks(body, sections)
    return [Extracted(sections.parts(), meta)]


def read_odp(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """An OpenDocument presentation: one part per slide."""
    content, meta = _read(path, name, limits, "presentation", "OpenDocument presentation")
    slides = content.findall(f"{{{OFFICE}}}body/{{{OFFICE}}}presentation/{{{DRAW}}}page")
    if len(slides) > limits.max_pages:
        raise DocumentError(f"{name} has {len(slides):,} slides, more than the limit of "
                            f"{limits.max_pages:,}. Split it, or raise SEARCHAPP_MAX_PAGES.")
    parts = [_slide(slide, number) for number, slide in enumerate(slides, 1)]
    return [Extracted([p for p in parts if p.text.strip()], meta | {"pages": str(len(slides))})]


def _read(path: str | Path, name: str, limits: Limits, kind: str, words: str
          ) -> tuple[Element, dict[str, str]]:
    """(content.xml's root, metadata) of a checked archive of the expected kind."""
    with open_zip(path, name, limits, words) as archive:
        names = set(archive.namelist())
        if "mimetype" in names:
            mimetype = read_member(archive, "mimetype", name).decode("ascii", "replace").strip()
            if mimetype != MIMETYPES[kind]:
                raise DocumentError(f"{name} is not an {words}: it says it is {mimetype!r}. "
                                    "Give it the extension of what it is.")
        content = xml_root(archive, "content.xml", name)
        meta = _meta(xml_root(archive, "meta.xml", name)) if "meta.xml" in names else {}
    return content, meta


def _blocks(element: Element, sections: Sections) -> None:
    """Headings, paragraphs, lists and tables under ``element``, in order."""
    for child in element:
        tag = child.tag
        if tag == f"{{{TEXT}}}h":
            level = child.get(f"{{{TEXT}}}outline-level") or "1"
            sections.heading(int(level) if level.isdigit() else 1, inline_text(child))
        elif tag == f"{{{TEXT}}}p":
            sections.text(inline_text(child))
        elif tag == f"{{{TABLE}}}table":
            for row in _table_rows(child):
                sections.text(row)
        elif tag not in SKIPPED:
            _blocks(child, sections)  # lists, list items, sections, frames


def _table_rows(table: Element) -> list[str]:
    rows = []
    for row in table.iter(f"{{{TABLE}}}table-row"):
        cells = [" ".join(" ".join(inline_text(p) for p in cell.iter(f"{{{TEXT}}}p")).split())
                 for cell in row if cell.tag == f"{{{TABLE}}}table-cell"]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def inline_text(element: Element) -> str:
    """A paragraph's text: ``text:s`` as spaces, ``text:tab`` and ``text:line-break`` kept."""
    out = [element.text or ""]
    for child in element:
        if child.tag == f"{{{TEXT}}}s":
            count = child.get(f"{{{TEXT}}}c") or "1"
            out.append(" " * (int(count) if count.isdigit() else 1))
        elif child.tag == f"{{{TEXT}}}tab":
            out.append("\t")
        elif child.tag == f"{{{TEXT}}}line-break":
            out.append("\n")
        elif child.tag not in SKIPPED:
            out.append(inline_text(child))
        out.append(child.tail or "")
    return "".join(out)


SHAPES = ("custom-shape", "rect", "ellipse", "circle", "polygon", "regular-polygon", "path",
          "caption")  # drawing shapes that hold text of their own (a frame's is read above)
SHAPE_TAGS = frozenset(f"{{{DRAW}}}{kind}" for kind in SHAPES)


def _slide(slide: Element, number: int) -> Part:
    title, lines = "", []
    for frame in slide.iter(f"{{{DRAW}}}frame"):
        text = "\n".join(inline_text(p) for p in frame.iter(f"{{{TEXT}}}p"))
        if frame.get(f"{{{PRESENTATION}}}class") == "title" and not title:
            title = " ".join(text.split())
        lines.append(text)
    for shape in (e for e in slide.iter() if e.tag in SHAPE_TAGS):  # text drawn in a shape
        lines.append("\n".join(inline_text(p) for p in shape.iter(f"{{{TEXT}}}p")))
    notes = slide.find(f"{{{PRESENTATION}}}notes")
    if notes is not None:  # its frames were read above (iter goes inside); keep them last
        note_lines = ["\n".join(inline_text(p) for p in f.iter(f"{{{TEXT}}}p"))
                      for f in notes.iter(f"{{{DRAW}}}frame")]
        lines = [line for line in lines if line not in note_lines] + note_lines
    text = "\n".join(line.strip() for line in lines if line.strip())
    return Part(text, page=number, section=title or None)


def _meta(root: Element) -> dict[str, str]:
    meta = root.find(f"{{{OFFICE}}}meta")
    if meta is None:
        return {}

    def first(*tags: str) -> str:
        return next(((meta.findtext(t) or "").strip() for t in tags
                     if (meta.findtext(t) or "").strip()), "")

    out = {"title": first(f"{{{DC}}}title"),
           "author": first(f"{{{META}}}initial-creator", f"{{{DC}}}creator"),
           "created": first(f"{{{META}}}creation-date"), "modified": first(f"{{{DC}}}date")}
    return {k: v for k, v in out.items() if v}


# This module's formats (``registry``): what names them and what reads them.
register(Format("odt", "document", ("odt",), "OpenDocument text", "an OpenDocument text", read_odt,
                content=frozenset({"zip"}), text_in="paragraphs, headings, lists or tables"))
register(Format("odp", "document", ("odp",), "OpenDocument presentation",
                "an OpenDocument presentation", read_odp, content=frozenset({"zip"}),
                text_in="slide text or notes"))
