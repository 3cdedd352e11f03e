"""What a document reader returns: a file's text in parts, each part knowing where it sits.

A *table* reader (CSV, JSONL, ...) yields rows, each row a document. A *document*
reader (PDF, Word, slides, web pages, Markdown, e-mail, e-books) reads one file
into one ``Extracted`` (an mbox: one per message) whose ``parts`` keep the page,
slide, heading path or message each piece of text came from. The builder joins
the parts into the document's text with ``PART_SEPARATOR`` and keeps their
character spans (``layout``), so a passage never spans two parts and a hit can
name its page and section.

Every document reader has the signature ``read(path, name, limits) -> list[Extracted]``:
``path`` is a file on disk (the reader opens it itself, reading only what it
needs; a 500 MB PDF is never held whole), ``name`` is the path relative to the
folder or archive root (used in messages), and ``limits`` bounds pages, text and
expansion. A file that cannot be read raises ``DocumentError`` (a
``SearchAppError``) whose message says which file, why, and what to do.

Example:
    >>> doc = Extracted([Part("Intro text", section="1 Intro"), Part("Page two", page=2)],
    ...                 {"title": "Guide"})
    >>> doc.text, doc.layout
    ('Intro text\\n\\nPage two', [[0, 10, None, '1 Intro'], [12, 20, 2, None]])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchapp.errors import IngestError

PART_SEPARATOR = "\n\n"


class DocumentError(IngestError):
    """One file could not be read; the others of the same ingest go on."""


def read_bounded(path, name: str, limits: Limits, what: str, fix: str) -> bytes:
    """A whole-file format's bytes, refused past ``limits.max_expanded_bytes`` (``what`` the
    file is, ``fix`` what to do) without reading more than one byte beyond the limit."""
    with open(path, "rb") as file:
        data = file.read(limits.max_expanded_bytes + 1)
    if len(data) > limits.max_expanded_bytes:
        raise DocumentError(f"{name} is larger than {limits.max_expanded_bytes:,} bytes, too "
                            f"large for {what}. {fix}")
    return data


@dataclass(frozen=True)
class Limits:
    """Bounds on what one file may cost (``SEARCHAPP_MAX_PAGES`` and friends).

    ``max_pages``: pages or slides read from one file (a longer file is refused,
    not cut, so a search never silently misses its end). ``max_text_chars``: the
    text of one document. ``max_expanded_bytes`` and ``max_ratio``: what the
    members of a zip-based format (DOCX, PPTX, ODF, EPUB, XLSX) may unpack to, in
    all and per compressed byte (a zip bomb is refused before it is unpacked).
    """

    max_pages: int = 2_000
    max_text_chars: int = 20_000_000
    max_expanded_bytes: int = 512 << 20
    max_ratio: int = 200
    max_attachments: int = 50


DEFAULT_LIMITS = Limits()  # the defaults, as a readers' default argument


@dataclass(frozen=True)
class Part:
    """A piece of a document's text and where it sits: ``page`` (1-based PDF page or
    PPTX/ODP slide), ``section`` (the heading path, " > " between levels, as
    "2 Install > 2.1 Requirements"; an EPUB chapter's title; an e-mail's subject)."""

    text: str
    page: int | None = None
    section: str | None = None


@dataclass(frozen=True)
class Attachment:
    """A file inside a document (an e-mail's attached PDF): read as a document of its own."""

    name: str
    data: bytes


@dataclass
class Extracted:
    """One document read from a file: its parts, metadata (title, author, created,
    modified as ISO 8601, pages, subject, from, to, date: strings only), notes for
    the ingest report (pages without text, OCR used), its attachments, and
    ``suffix``: what tells this document apart from others of the same file
    (an mbox yields one Extracted per message, suffix "#3" for the third), or ""
    for the file itself."""

    parts: list[Part]
    meta: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    suffix: str = ""
    pages_without_text: list[int] = field(default_factory=list)

    @property
    def text(self) -> str:
        return PART_SEPARATOR.join(p.text for p in self.parts if p.text.strip())

    @property
    def layout(self) -> list[list]:
        """[[start, end, page, section], ...] per non-empty part: character spans in ``text``."""
        spans, at = [], 0
        for p in self.parts:
            if not p.text.strip():
                continue
            if spans:
                at += len(PART_SEPARATOR)
            spans.append([at, at + len(p.text), p.page, p.section])
            at += len(p.text)
        return spans
