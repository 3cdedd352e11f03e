"""The registry of document readers: a file's extension to its reader, and one way in.

``read_document`` is what the ingest calls for a document file: it checks that
the file's first bytes are what its name says (a ``.pdf`` that is really a web
page or a zip is refused, naming what it is), calls the format's reader, and
checks the result: a file with no text at all is refused (a PDF whose pages
all lack a text layer is not: it is kept with its note, for OCR later), and
so is one whose text is longer than ``Limits.max_text_chars``. Each document's
metadata gets ``type``, the canonical name of its format.

Example:
    >>> document_type("Guide.PDF"), document_type("notes.markdown"), document_type("a.csv")
    ('pdf', 'md', None)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from searchapp.corpora.formats.document import DEFAULT_LIMITS, DocumentError, Extracted, Limits
from searchapp.corpora.formats.email_reader import read_eml, read_mbox
from searchapp.corpora.formats.epub import read_epub
from searchapp.corpora.formats.html import read_html
from searchapp.corpora.formats.markup import read_markdown, read_rst, read_txt
from searchapp.corpora.formats.odf import read_odp, read_odt
from searchapp.corpora.formats.office import read_docx, read_pptx
from searchapp.corpora.formats.pdf import read_pdf
from searchapp.corpora.formats.rtf import read_rtf
from searchapp.corpora.formats.sniff import describe, head_of, sniff

Reader = Callable[..., list[Extracted]]

DOCUMENT_READERS: dict[str, Reader] = {
    "pdf": read_pdf, "docx": read_docx, "pptx": read_pptx, "odt": read_odt, "odp": read_odp,
    "html": read_html, "htm": read_html, "xhtml": read_html, "md": read_markdown,
    "markdown": read_markdown, "rst": read_rst, "txt": read_txt, "rtf": read_rtf,
    "epub": read_epub, "eml": read_eml, "mbox": read_mbox,
}
CANONICAL = {"htm": "html", "xhtml": "html", "markdown": "md"}
TEXTUAL = {"text", "html", "xml"}
EXPECTED = {"pdf": {"pdf"}, "docx": {"zip"}, "pptx": {"zip"}, "odt": {"zip"}, "odp": {"zip"},
            "epub": {"zip"}, "rtf": {"rtf"}, "html": TEXTUAL, "md": TEXTUAL, "rst": TEXTUAL,
            "txt": TEXTUAL, "eml": TEXTUAL, "mbox": TEXTUAL}
WORDS = {"pdf": "a PDF", "docx": "a Word document", "pptx": "a PowerPoint presentation",
         "odt": "an OpenDocument text", "odp": "an OpenDocument presentation",
         "epub": "an EPUB book", "rtf": "an RTF document", "html": "a web page",
         "md": "a Markdown file", "rst": "a reStructuredText file", "txt": "a text file",
         "eml": "an e-mail message", "mbox": "a mailbox"}


def document_type(filename: str) -> str | None:
    """The canonical format name of a document file (its metadata's "type"), or None."""
    ext = Path(filename).suffix.lower().lstrip(".")
    return CANONICAL.get(ext, ext) if ext in DOCUMENT_READERS else None


def read_document(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS, **kw
                  ) -> list[Extracted]:
    """The documents in one file, checked (see the module's docstring). ``kw`` goes to
    readers that take it (the PDF reader's ``progress``)."""
    kind = document_type(name)
    if kind is None:
        raise DocumentError(f"Cannot read {name} as a document: files ending in "
                            f"{Path(name).suffix or '(no extension)'} are not read. Documents "
                            f"we read: {', '.join('.' + e for e in DOCUMENT_READERS)}.")
    _check_content(path, name, kind)
    reader = DOCUMENT_READERS[Path(name).suffix.lower().lstrip(".")]
    docs = reader(path, name, limits, **kw) if kind == "pdf" else reader(path, name, limits)
    return _checked(docs, name, kind, limits)


def _check_content(path: str | Path, name: str, kind: str) -> None:
    found = sniff(head_of(path))
    if found == "empty":
        raise DocumentError(f"{name} is empty: it has no text; there is nothing to add.")
    if found not in EXPECTED[kind]:
        raise DocumentError(f"{name} is not {WORDS[kind]}: it looks like {describe(found)}. "
                            "Give it the extension of what it is and add it again.")


def _checked(docs: list[Extracted], name: str, kind: str, limits: Limits) -> list[Extracted]:
    kept = [d for d in docs if d.text.strip() or d.pages_without_text]
    if not kept:
        raise DocumentError(f"{name} has no text; is it a scan or an image? Save it with its "
                            "text (or as a PDF with a text layer) and add it again.")
    for doc in kept:
        if len(doc.text) > limits.max_text_chars:
            raise DocumentError(f"{name}{doc.suffix} has {len(doc.text):,} characters of text, "
                                f"more than the limit of {limits.max_text_chars:,} for one "
                                "document. Split it into smaller files.")
        doc.meta.setdefault("type", kind)
    return kept
