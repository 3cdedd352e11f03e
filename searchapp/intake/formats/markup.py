"""Markdown, reStructuredText and plain text files, each read as one document.

- Markdown (.md, .markdown): ATX (``## Scope``) and setext (a line underlined
  by ``===`` or ``---``) headings give the heading path of each part; fenced
  code blocks are text, never headings. YAML front matter (between ``---``
  lines at the very top, read by ``yaml_front.load_front``: a safe loader, no
  aliases, at most 64 KiB) gives title, author, date and tags (joined by ", ");
  front matter it refuses is left as text, with a note saying why.
- reStructuredText (.rst): a section title is a line underlined (and perhaps
  overlined) by one punctuation character repeated; levels follow the order
  in which the styles first appear, as docutils does. No docutils: nothing is
  included or executed.
- Plain text (.txt): the whole file is one part, or one part per page where
  form feeds split it.

Text is UTF-8 (a BOM is fine) or UTF-16 with a BOM; other bytes are refused.

Example:
    >>> doc = markdown_document("---\\ntitle: Guide\\ntags: [a, b]\\n---\\n# One\\nHi\\n"
    ...                         "Two\\n---\\nThere\\n")
    >>> doc.meta, [(p.section, p.text) for p in doc.parts]
    ({'title': 'Guide', 'tags': 'a, b'}, [('One', 'One\\nHi'), ('One > Two', 'Two\\nThere')])
"""

from __future__ import annotations

import codecs
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

ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
FRONT_KEYS = ("title", "author", "date", "tags", "lang")  # lang: the file says its language


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 (BOM dropped) or UTF-16 with a BOM, line endings as "\\n"; else DocumentError."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding, data = "utf-16", data
    else:
        encoding, data = "utf-8", data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                            f"offset {exc.start:,}). Save it as UTF-8 and add it again.") from None
    if "\0" in text:
        raise DocumentError(f"{name} holds NUL bytes, which text does not: is it a binary file? "
                            "Save it as UTF-8 text and add it again.")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_text(path: str | Path, name: str, limits: Limits) -> str:
    budget = limits.max_text_chars * 4  # UTF-8 takes at most 4 bytes a character
    with open(path, "rb") as file:
        data = file.read(budget + 1)
    if len(data) > budget:
        raise DocumentError(f"{name} is longer than {limits.max_text_chars:,} characters, the "
                            "limit for one document. Split it into smaller files.")
    return decode_text(data, name)


def read_markdown(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS
                  ) -> list[Extracted]:
    """A Markdown file: one part per section, front matter as metadata."""
    return [markdown_document(_read_text(path, name, limits))]


def markdown_document(text: str) -> Extracted:
    """Markdown text as a document (see the module's docstring)."""
    meta, body, note = front_matter(text)
    sections, block, fence = Sections(), [], ""
    for line in body.split("\n"):
        opening = FENCE.match(line)
        if fence or opening:
            fence = "" if fence and opening and opening.group(1)[0] == fence[0] else \
                fence or opening.group(1)
            block.append(line)
            continue
        atx = ATX.match(line)
        setext = SETEXT.match(line) if block and block[-1].strip() else None
        if atx and atx.group(2):
            sections.text("\n".join(block))
            block = []
            sections.heading(len(atx.group(1)), atx.group(2))
        elif setext:
            title = block.pop()
            sections.text("\n".join(block))
            block = []
            sections.heading(1 if setext.group(1)[0] == "=" else 2, title)
        else:
            block.append(line)
    sections.text("\n".join(block))
    return Extracted(sections.parts(), meta, [note] if note else [])


def front_matter(text: str) -> tuple[dict[str, str], str, str]:
    """(title/author/date/tags/lang from a YAML front matter block, the text after it, a note).

    Front matter that is not valid YAML is left as text (it is likely none, but text
    between two rules); front matter refused by ``yaml_front.load_front`` (an alias, over
    64 KiB, nested too deep) is skipped, and the note says why.

    Example:
        >>> front_matter("---\\nt: &a [x]\\nu: *a\\n---\\nHi\\n")[0::2]
        ({}, 'front matter not read: it uses a YAML alias (*a), which repeats a value \
without copying it; write the value out instead')
    """
    from searchapp.intake.formats.yaml_front import FrontMatterRefused, NotYaml, load_front

    match = re.match(r"---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|$)", text, re.DOTALL)
    if not match:
        return {}, text, ""
    try:
        data = load_front(match.group(1))
    except NotYaml:  # likely no front matter at all: text between two rules
        return {}, text, ""
    except FrontMatterRefused as refused:  # front matter, but too costly: skipped
        return {}, text[match.end():], f"front matter not read: {refused}"
    if not isinstance(data, dict):
        return {}, text, ""
    meta = {}
    for key in FRONT_KEYS:
        value = data.get(key)
        if isinstance(value, list | tuple):
            value = ", ".join(str(v) for v in value)
        if value is not None and str(value).strip():
            meta[key] = str(value).strip()
    return meta, text[match.end():], ""


def read_rst(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """A reStructuredText file: one part per section."""
    return [rst_document(_read_text(path, name, limits))]


def rst_document(text: str) -> Extracted:
    """reStructuredText as a document; section levels by adornment style, first seen first.

    Example:
        >>> doc = rst_document("=====\\nGuide\\n=====\\n\\nIntro\\n-----\\nHello.\\n")
        >>> [(p.section, p.text) for p in doc.parts]
        [('Guide > Intro', 'Guide\\nIntro\\nHello.')]
    """
    lines, styles, sections = text.split("\n"), [], Sections()
    block: list[str] = []
    i = 0
    while i < len(lines):
        title, style, used = _rst_title(lines, i)
        if title:
            sections.text("\n".join(block))
            block = []
            if style not in styles:
                styles.append(style)
            sections.heading(styles.index(style) + 1, title)
            i += used
            continue
        if not RST_ADORNMENT.match(lines[i]):  # a transition line is not text
            block.append(lines[i])
        i += 1
    sections.text("\n".join(block))
    return Extracted(sections.parts())


def _rst_title(lines: list[str], i: int) -> tuple[str, tuple[str, bool], int]:
    """(title, (character, overlined), lines used) if a section title starts at line i."""
    def adornment(j: int) -> str:
        return lines[j].strip()[0] if j < len(lines) and RST_ADORNMENT.match(lines[j]) else ""

    def is_title(j: int) -> bool:
        return j < len(lines) and bool(lines[j].strip()) and not lines[j][0].isspace() and \
            not RST_ADORNMENT.match(lines[j])

    over = adornment(i)
    if over and is_title(i + 1) and adornment(i + 2) == over:
        return lines[i + 1].strip(), (over, True), 3
    if is_title(i) and (i == 0 or not lines[i - 1].strip()) and adornment(i + 1):
        return lines[i].strip(), (adornment(i + 1), False), 2
    return "", ("", False), 0


def read_txt(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """A plain text file: one part, or one per form-feed-separated page."""
    text = _read_text(path, name, limits)
    pages = text.split("\f")
    if len(pages) == 1:
        return [Extracted([Part(text.strip("\n"))])]
    if len(pages) > limits.max_pages:
        raise DocumentError(f"{name} has {len(pages):,} pages (form feeds), more than the "
                            f"limit of {limits.max_pages:,}. Split it, or raise "
                            "SEARCHAPP_MAX_PAGES.")
    return [Extracted([Part(p.strip("\n"), page=n) for n, p in enumerate(pages, 1)
                       if p.strip()], {"pages": str(len(pages))})]


# This module's formats (``registry``): what names them and what reads them.
register(Format("md", "document", ("md", "markdown"), "Markdown", "a Markdown file", read_markdown))
register(Format("rst", "document", ("rst",), "reStructuredText", "a reStructuredText file",
                read_rst))
register(Format("txt", "document", ("txt",), "text", "a text file", read_txt))
