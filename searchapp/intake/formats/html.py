"""Web pages: the main content with its heading path, without navigation, scripts or sidebars.

Two views of the page are combined. The page's own structure is walked with
lxml after the parts that are never content are cut away (scripts, styles,
forms, ``nav``/``aside``, a ``header``/``footer`` outside the article,
ARIA navigation/banner/contentinfo/complementary roles, and elements whose
class or id names navigation, menus, sidebars, breadcrumbs, cookie banners or a
table of contents, such as the DocBook manuals' ``navheader``/``navfooter`` and
``toc``: a list of the page's own headings, links to its sections): h1..h6 give the
heading path, tables their rows as " | "-joined cells. Trafilatura, favouring
recall, then says which of those blocks are main content: a block is kept when
its text is in trafilatura's, or, for a block of at least ``MIN_WORDS`` words, when
most of its word trigrams are (trafilatura loses words inside nested inline
elements, such as the DocBook manuals' ``<code><em>data_type</em></code>``, so a
whole paragraph would not match); a table without links that follows kept text is
kept whole: trafilatura drops small tables. A header block whose h1 holds the whole
page title (AsciiDoc's ``div#header``: title and NAME line) is kept whole. A block
under a heading that trafilatura kept, or under a heading that comes right after kept
text inside that heading's own section, is content however many links it holds (a
"SEE ALSO" list of pages). Then, once the page is walked, the blocks' place brings
back what trafilatura drops inside the content (``html_context``, as jusText's
context rules): between two kept blocks a heading or prose (a one-line answer under
its own question, a command in a list of steps, a catalog table, a caption); the
opening under the title; the last section and the footnotes inside the element
holding the kept blocks. A "Last updated" line closing a page whose content is the
whole body stays out. Where trafilatura finds nothing (a tiny page), every block
left after the cut is kept. A heading is kept only with text under it (or as the
last heading inside the content). Metadata: the page's title. Nothing is fetched:
no network, no DTD.

``read_html_bytes`` is what the EPUB and e-mail readers use for their HTML.

Example:
    >>> page = (b"<html><head><title>T</title></head><body><nav>Home | About</nav>"
    ...         b"<h1>Guide</h1><p>Hello there.</p><footer>(c) 2024</footer></body></html>")
    >>> doc = read_html_bytes(page, "a.html")
    >>> doc.meta, [(p.section, p.text) for p in doc.parts]
    ({'title': 'T'}, [('Guide', 'Guide\\nHello there.')])
"""

from __future__ import annotations

import re
from pathlib import Path

from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    Extracted,
    Limits,
    read_bounded,
)
from searchapp.intake.formats.html_context import (
    Item,
    bring_back,
    inside,
    link_chars,
    section_of,
)
from searchapp.intake.formats.outline import Sections
from searchapp.intake.formats.registry import Format, register

DROPPED = {"script", "style", "noscript", "template", "svg", "form", "iframe", "nav", "aside",
           "button", "select", "object", "embed", "canvas", "head"}
DROPPED_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu"}
BOILERPLATE = re.compile(
    r"(?:^|[\s_-])(?:nav\w*|menu\w*|sidebar\w*|breadcrumbs?|footer\w*|masthead|cookie\w*|"
    r"skip-?link\w*|site-?header|page-?header|toolbar|toc|table-?of-?contents|"
    r"list-of-(?:tables|figures|examples|equations))(?:$|[\s_-])", re.IGNORECASE)
BLOCKS = {"p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd",
          "blockquote", "figure", "figcaption", "caption", "address", "header", "footer",
          "body", "tr", "hr", "center", "details", "summary"}
HEADINGS = {f"h{n}": n for n in range(1, 7)}
WORD = re.compile(r"\w+")
LIST_ITEMS = {"li", "dd", "dt"}
LINK_DENSITY = 0.5  # a block with this share of its characters in links reads as navigation
MIN_WORDS = 8  # a block this long is content when SHARE of its word trigrams are trafilatura's
SHARE = 0.5


def read_html(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """A web page file (at most ``limits.max_expanded_bytes`` of it is read)."""
    data = read_bounded(path, name, limits, "a web page", "Split it, or save it as text.")
    return [read_html_bytes(data, name, limits)]


def read_html_bytes(data: bytes, name: str, limits: Limits = DEFAULT_LIMITS) -> Extracted:
    """A page's main text in sections, and its title."""
    import lxml.html
    from lxml import etree

    if not data.strip():
        return Extracted([])
    parser = lxml.html.HTMLParser(no_network=True, remove_comments=True, remove_pis=True,
                                  huge_tree=False)
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError):
        return Extracted([])
    title = " ".join((root.findtext(".//title") or "").split())
    _cut_boilerplate(root)
    keep = _main_text(data)
    walker = _Walker(keep, title)
    walker.walk(_content_root(root))
    return Extracted(walker.sections().parts(), {"title": title} if title else {})


def _cut_boilerplate(root) -> None:
    for element in list(root.iter()):
        if not isinstance(element.tag, str) or element.getparent() is None:
            continue
        tag = element.tag.lower()
        if tag in DROPPED or _is_boilerplate(element, tag):
            element.drop_tree()


def _is_boilerplate(element, tag: str) -> bool:
    if (element.get("role") or "").lower() in DROPPED_ROLES or element.get("hidden") is not None:
        return True
    if tag in ("header", "footer"):  # an article's own header holds its title
        return not any(a.tag in ("article", "main") for a in element.iterancestors())
    names = f"{element.get('class') or ''} {element.get('id') or ''}"
    return tag not in ("body", "html", "main", "article") and bool(BOILERPLATE.search(names))


def _content_root(root):
    for path in ("//main", "//*[@role='main']", "//article"):
        found = root.xpath(path)
        if len(found) == 1:
            return found[0]
    body = root.find("body")
    return body if body is not None else root


class _Kept:
    """Trafilatura's main text: whitespace removed (for containment tests) and its
    lower-cased word trigrams."""

    def __init__(self, text: str):
        self.squashed = _squash(text)
        self.trigrams = set(_trigrams(text))

    def holds(self, text: str) -> bool:
        if _squash(text) in self.squashed:
            return True
        grams = _trigrams(text)
        if len(grams) < MIN_WORDS - 2:
            return False
        return sum(g in self.trigrams for g in grams) >= SHARE * len(grams)


def _trigrams(text: str) -> list[tuple[str, str, str]]:
    words = WORD.findall(text.lower())
    return list(zip(words, words[1:], words[2:], strict=False))


def _main_text(data: bytes) -> _Kept | None:
    """Trafilatura's main text, or None."""
    try:
        import trafilatura

        text = trafilatura.extract(data, output_format="txt", include_tables=True,
                                   include_comments=False, favor_recall=True, fast=True)
    except Exception:  # trafilatura fails in many ways on odd pages
        return None
    return _Kept(text) if len(_squash(text or "")) >= 20 else None


def _squash(text: str) -> str:
    return "".join(text.split()).replace("|", "")


class _Walker:
    """Blocks in reading order; ``keep`` decides which blocks are content, their place
    in the page (``html_context.bring_back``) brings back what it drops inside it."""

    def __init__(self, keep: _Kept | None, title: str = ""):
        self.items: list[Item] = []
        self.keep, self.title = keep, _squash(title).lower()
        self.forced = 0  # inside the page's title block: its blocks are kept
        self.pending: list[Item] = []  # the headings since the last kept block
        self.inline: list[str] = []
        self.last_kept = False
        self.tags: list[str] = []  # the block elements the walk is inside
        self.open: list = []  # and those elements
        self.element = None  # the element whose text ``block`` is given
        self.link_chars = 0  # characters of link text in the block being read
        self.flowing = None  # the section of a heading that came right after kept text

    def sections(self) -> Sections:
        """The content in sections once the page is walked: the kept blocks (``bring_back``
        adds those kept by their place), and each heading with kept text after it or
        kept by its place (a last heading inside the content)."""
        bring_back(self.items)
        sections, text_after = Sections(), False
        for item in reversed(self.items):
            item.kept = (text_after or item.kept) if item.level else item.kept
            text_after = text_after or (item.kept and not item.level)
        for item in self.items:
            if item.kept and item.level:
                sections.heading(item.level, item.text)
            elif item.kept:
                sections.text(item.text)
        return sections

    def walk(self, element) -> None:
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if tag in HEADINGS:
            self.flush()
            if not self.pending:  # a heading right after kept text: the content goes on
                self.flowing = self.last_kept and section_of(element)
            heading = Item(element.text_content(), element, HEADINGS[tag])
            self.pending.append(heading)
            self.items.append(heading)
        elif tag == "table":
            self.flush()
            self.element = element
            self.table(element)
        elif tag == "pre":
            self.flush()
            self.element = element
            self.block(element.text_content())
        elif tag == "br":
            self.inline.append("\n")
        elif tag in BLOCKS:
            self.flush()
            forced = self._title_block(element, tag)
            self.forced += forced
            self.tags.append(tag)
            self.open.append(element)
            self.children(element)
            self.flush()
            self.tags.pop()
            self.open.pop()
            self.forced -= forced
        else:
            if tag == "a":
                self.link_chars += link_chars(element)
            self.children(element)
        if element.tail and tag:
            self.inline.append(element.tail)

    def children(self, element) -> None:
        if element.text:
            self.inline.append(element.text)
        for child in element:
            self.walk(child)

    def flush(self) -> None:
        text = "\n".join(" ".join(line.split()) for line in "".join(self.inline).split("\n"))
        links, self.inline, self.link_chars = self.link_chars, [], 0
        text = text.strip()
        self.element = self.open[-1] if self.open else None
        # a list item of prose among kept content: trafilatura drops short ones, a menu's
        # items are links (link density, as in jusText and boilerpipe)
        few_links = links < LINK_DENSITY * len(text)
        item = any(t in LIST_ITEMS for t in self.tags) and self.last_kept and few_links
        self.block(text, force=item, dense=not few_links)

    def table(self, element) -> None:
        """A table's rows; trafilatura drops small tables, so a table without links right
        after kept text is kept whole."""
        rows = _rows(element)
        whole = self.last_kept and not element.xpath(".//a[@href]") and \
            not any(self._is_content(row, row.split(" | ")) for row, _ in rows)
        for row, links in rows:
            self.block(row, cells=row.split(" | "), force=whole,
                       dense=links >= LINK_DENSITY * len(row))

    def block(self, text: str, cells: list[str] | None = None, force: bool = False,
              dense: bool = False) -> None:
        if not text.strip():
            return
        by_heading = self._under_kept_heading() or self._section_goes_on()
        kept = force or self.forced > 0 or self._is_content(text, cells) or by_heading
        self.items.append(Item(text, self.element, kept=kept, dense=dense))
        if not kept:
            # a block of prose right after kept text may still be content (``bring_back``):
            # it does not end the run of kept text that list items and tables continue
            self.last_kept = self.last_kept and not dense and not self.pending
            return
        self.last_kept, self.pending = True, []

    def _section_goes_on(self) -> bool:
        """The block is the first under a heading that came right after kept text, inside
        the heading's own section (a "See Also" list closing the article)."""
        container, element = self.flowing, self.element
        return bool(self.pending) and container not in (None, False) and \
            element is not None and inside(element, container)

    def _under_kept_heading(self) -> bool:
        """The block is the first under headings that trafilatura kept (their section's
        content, however many links it has: a "SEE ALSO" list)."""
        return bool(self.pending) and self.keep is not None and all(
            len(_squash(h.text)) >= 3 and _squash(h.text) in self.keep.squashed
            for h in self.pending)

    def _title_block(self, element, tag: str) -> bool:
        """A ``header`` (tag, class or id) whose h1 holds the whole page title is the
        article's heading block (AsciiDoc's ``div#header``: the title and the NAME line,
        which trafilatura drops)."""
        if not self.title or self.forced or (tag != "header" and "header" not in
                                             f"{element.get('class') or ''} "
                                             f"{element.get('id') or ''}".lower().split()):
            return False
        h1 = element.find(".//h1")
        return h1 is not None and self.title in _squash(h1.text_content()).lower()

    def _is_content(self, text: str, cells: list[str] | None) -> bool:
        if self.keep is None:
            return True
        if cells:  # a row: each cell found, or the row as a whole by its trigrams
            return all(_squash(cell) in self.keep.squashed for cell in cells) or \
                self.keep.holds(" ".join(cells))
        return self.keep.holds(text)


def _rows(table) -> list[tuple[str, int]]:
    """A table's rows as " | "-joined cells, each with its characters of link text."""
    rows = []
    for row in table.iter("tr"):
        cells = [" ".join(cell.text_content().split()) for cell in row if
                 isinstance(cell.tag, str) and cell.tag.lower() in ("td", "th")]
        if any(cells):
            links = sum(link_chars(a) for a in row.iter("a"))
            rows.append((" | ".join(cells), links))
    return rows


# This module's format (``registry``): what names it and what reads it.
register(Format("html", "document", ("html", "htm", "xhtml"), "web page", "a web page", read_html,
                text_in="main content or body text"))
