"""EPUB books: chapters in reading order, each a section named by its title.

No EbookLib (AGPL): the book is a zip checked by ``zipsafe``, then
``META-INF/container.xml`` names the package file (OPF), whose spine gives the
reading order of its XHTML chapters. Each chapter is read by the web page
reader (``read_html_bytes``); its parts' section is the chapter's title, taken
from the table of contents (EPUB 3 nav or EPUB 2 NCX) or else the chapter's
first heading or ``<title>``. Metadata: dc:title, dc:creator (author) and
dc:date (created).

Example:
    >>> resolve("OEBPS/content.opf", "text/ch1.xhtml#top")
    'OEBPS/text/ch1.xhtml'
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import unquote

from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    DocumentError,
    Extracted,
    Limits,
    Part,
)
from searchapp.intake.formats.html import read_html_bytes
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.formats.zipsafe import open_zip, read_member, xml_root

CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
OPF = "http://www.idpf.org/2007/opf"
DC = "http://purl.org/dc/elements/1.1/"
NCX = "http://www.daisy.org/z3986/2005/ncx/"
XHTML = "http://www.w3.org/1999/xhtml"
EPUB_NS = "http://www.idpf.org/2007/ops"
CHAPTER_TYPES = ("application/xhtml+xml", "text/html")


def read_epub(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """A book: each spine chapter's parts, its section the chapter's title."""
    with open_zip(path, name, limits, "EPUB book") as archive:
        container = xml_root(archive, "META-INF/container.xml", name)
        rootfile = container.find(f".//{{{CONTAINER}}}rootfile")
        if rootfile is None or not rootfile.get("full-path"):
            raise DocumentError(f"{name}: META-INF/container.xml names no package file; the "
                                "book is damaged. Export it again.")
        opf_path = rootfile.get("full-path", "")
        opf = xml_root(archive, opf_path, name)
        items = {i.get("id"): i for i in opf.iter(f"{{{OPF}}}item")}
        spine = [items[ref.get("idref")] for ref in opf.iter(f"{{{OPF}}}itemref")
                 if ref.get("idref") in items and ref.get("linear") != "no"]
        chapters = [resolve(opf_path, i.get("href", "")) for i in spine
                    if i.get("media-type") in CHAPTER_TYPES]
        if len(chapters) > limits.max_pages:
            raise DocumentError(f"{name} has {len(chapters):,} chapters, more than the limit of "
                                f"{limits.max_pages:,}. Raise SEARCHAPP_MAX_PAGES.")
        titles = _toc_titles(archive, opf_path, items.values(), name)
        parts: list[Part] = []
        for chapter in chapters:
            doc = read_html_bytes(read_member(archive, chapter, name), f"{name}:{chapter}",
                                  limits)
            title = titles.get(chapter) or _first_heading(doc) or doc.meta.get("title")
            parts += [Part(p.text, section=title or p.section) for p in doc.parts]
    return [Extracted(parts, _meta(opf))]


def resolve(base_file: str, href: str) -> str:
    """A link in ``base_file`` as a member path (fragment dropped, %-escapes decoded)."""
    target = unquote(href.split("#", 1)[0])
    return posixpath.normpath(posixpath.join(posixpath.dirname(base_file), target))


def _toc_titles(archive, opf_path: str, items, name: str) -> dict[str, str]:
    """{chapter member: its title} from the EPUB 3 nav document, else the EPUB 2 NCX."""
    titles: dict[str, str] = {}
    for item in items:
        member = resolve(opf_path, item.get("href", ""))
        if "nav" in (item.get("properties") or "").split():
            root = _html_root(read_member(archive, member, name))
            for link in root.iter("a") if root is not None else ():
                if link.get("href"):
                    text = " ".join(link.text_content().split())
                    titles.setdefault(resolve(member, link.get("href")), text)
        elif item.get("media-type") == "application/x-dtbncx+xml" and not titles:
            for point in xml_root(archive, member, name).iter(f"{{{NCX}}}navPoint"):
                label = point.findtext(f"{{{NCX}}}navLabel/{{{NCX}}}text") or ""
                content = point.find(f"{{{NCX}}}content")
                if content is not None and label.strip():
                    titles.setdefault(resolve(member, content.get("src", "")),
                                      " ".join(label.split()))
    return {k: v for k, v in titles.items() if v}


def _html_root(data: bytes):
    import lxml.html

    parser = lxml.html.HTMLParser(no_network=True, remove_comments=True)
    try:
        return lxml.html.document_fromstring(data, parser=parser)
    except Exception:  # an empty or broken nav document: no titles from it
        return None


def _first_heading(doc: Extracted) -> str | None:
    first = next((p.section for p in doc.parts if p.section), None)
    return first.split(" > ")[0] if first else None


def _meta(opf) -> dict[str, str]:
    meta = {"title": opf.findtext(f".//{{{DC}}}title") or "",
            "author": opf.findtext(f".//{{{DC}}}creator") or "",
            "created": opf.findtext(f".//{{{DC}}}date") or ""}
    return {k: " ".join(v.split()) for k, v in meta.items() if v.strip()}


# This module's format (``registry``): what names it and what reads it.
register(Format("epub", "document", ("epub",), "EPUB", "an EPUB book", read_epub,
                content=frozenset({"zip"}), text_in="chapter text"))
