"""Which blocks of a web page are content by their place: what trafilatura drops inside it.

Trafilatura (see ``html``) judges each block of a page on its own and drops many
of the main content's short ones: a one-line answer under its own question, a
code example, a table of a catalog, a footnote, the page's last section. As in
jusText's context rules, a block's place decides instead: the blocks the reader
walked (``Item``: headings and blocks of text in reading order, each with its
element and whether it was kept) are looked at again once the page is read.

- Between two kept blocks, a heading or a block of prose (not mostly links) is
  content; so is a block of links that lies inside the element holding both kept
  neighbours, that element not being the whole page (an index of how-tos, each
  title a link, between their descriptions).
- Before the first kept block, the page's opening under its last heading is
  content when both lie inside the element holding all kept blocks (the first
  paragraph under the title, cut short in trafilatura's text).
- After the last kept block, what lies inside that element is content (a chapter's
  last section, its footnotes), unless the element is the whole page and nothing of
  it is a heading followed by prose (a "Last updated" line).

A link whose text is its own address (``https://…``) is text, not navigation
(``link_chars``).

Example:
    >>> import lxml.html
    >>> page = lxml.html.fromstring("<div><p>a</p><h2>Q</h2><p>b</p><p>c</p></div>")
    >>> p1, h, p2, p3 = page
    >>> items = [Item("a", p1, kept=True), Item("Q", h, level=2), Item("b", p2),
    ...          Item("c", p3, kept=True)]
    >>> bring_back(items); [i.kept for i in items]
    [True, True, True, True]
"""

from __future__ import annotations

import re
from itertools import pairwise

PAGE = ("body", "html")
ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.|mailto:)\S+$", re.IGNORECASE)


class Item:
    """A heading (``level`` 1..6) or a block of text (``level`` 0) in reading order, with
    the element it came from, whether it is content, and whether most of its characters
    are links (``dense``)."""

    __slots__ = ("dense", "element", "kept", "level", "text")

    def __init__(self, text: str, element, level: int = 0, kept: bool = False,
                 dense: bool = False):
        self.text, self.element, self.level = text, element, level
        self.kept, self.dense = kept, dense


def bring_back(items: list[Item]) -> None:
    """Mark as kept the items that are content by their place (see the module's rules).

    Example: a footnote after the last kept block of a chapter is kept.
        >>> import lxml.html
        >>> page = lxml.html.document_fromstring("<div><p>a</p><p>b</p><div>[1] c</div></div>")
        >>> chapter = page.find("body")[0]
        >>> items = [Item("a", chapter[0], kept=True), Item("b", chapter[1], kept=True),
        ...          Item("[1] c", chapter[2])]
        >>> bring_back(items); items[2].kept
        True
    """
    kept = [n for n, item in enumerate(items) if item.kept and not item.level]
    if not kept:
        return
    for before, after in pairwise(kept):
        if after > before + 1:
            _between(items[before], items[before + 1:after], items[after])
    box = common_ancestor([items[n].element for n in kept])
    if box is not None:
        _opening(items[:kept[0]], box)
        _closing(items[kept[-1] + 1:], box)


def _between(previous: Item, run: list[Item], following: Item) -> None:
    """A run of items dropped between two kept blocks."""
    holder = common_ancestor([previous.element, following.element])
    links_too = holder is not None and holder.tag.lower() not in PAGE
    for item in run:
        item.kept = item.kept or not item.dense or (links_too and inside(item.element, holder))


def _opening(run: list[Item], box) -> None:
    """The items before the first kept block, from the last heading on, inside ``box``."""
    headings = [n for n, item in enumerate(run) if item.level]
    if headings and inside(run[headings[-1]].element, box):
        for item in run[headings[-1]:]:
            item.kept = item.kept or (not item.dense and inside(item.element, box))


def _closing(run: list[Item], box) -> None:
    """The items after the last kept block inside ``box``: a last section, footnotes."""
    rest = [item for item in run if inside(item.element, box)]
    if box.tag.lower() in PAGE:  # a whole page's last lines: content under a heading only
        led = [n for n, item in enumerate(rest) if item.level]
        rest = rest[led[0]:] if led else []
        if not any(not item.level and not item.dense for item in rest):
            return
    for item in rest:
        item.kept = item.kept or not item.dense


def link_chars(link) -> int:
    """The characters of a link's text that count towards a block's link density: none
    for a link whose text is an address (a URL printed in the text is not navigation)."""
    text = link.text_content().strip()
    return 0 if ADDRESS.match(text) else len(text)


def section_of(heading):
    """The element a heading leads: its nearest ancestor with more text than the heading
    (DocBook wraps an h2 in three ``div``s of its own before the section's)."""
    child = heading
    for ancestor in heading.iterancestors():
        if _holds_more(ancestor, child):
            return ancestor
        child = ancestor
    return heading.getparent()


def _holds_more(element, child) -> bool:
    """Whether ``element`` has text besides ``child``'s (read lazily: sections are big)."""
    if (element.text or "").strip():
        return True
    for other in element:
        if (other.tail or "").strip() or (
                other is not child and any(t.strip() for t in other.itertext())):
            return True
    return False


def inside(element, container) -> bool:
    """Whether ``element`` is ``container`` or lies in it."""
    return element is container or any(a is container for a in element.iterancestors())


def common_ancestor(elements: list):
    """The innermost element holding all ``elements`` (None when there are none)."""
    elements = [e for e in elements if e is not None]
    if not elements:
        return None
    chain = [elements[0], *elements[0].iterancestors()]
    depth = 0
    for element in elements[1:]:
        ancestors = {id(a) for a in (element, *element.iterancestors())}
        while id(chain[depth]) not in ancestors:
            depth += 1
    return chain[depth]
