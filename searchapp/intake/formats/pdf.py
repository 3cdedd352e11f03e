"""PDF: one part per page (pypdfium2's text layer), Tesseract for pages without one.

The file is opened from its path (PDFium reads what it needs) and opened again
every ``REOPEN_PAGES`` pages, since PDFium keeps what it parsed of every page
read (its pictures too) until the document is closed: a 514 MB PDF of 800
illustrated pages read page by page peaked at 533 MB, reopened at 84 MB, and
was no slower (1.1 s against 1.8 s). It is refused, before any page is read, when it is not a PDF
(its first bytes say what it is), needs a password, or has more pages than
``Limits.max_pages`` (``SEARCHAPP_MAX_PAGES``). Each page's text is one
``Part`` with its 1-based page number. A page with no text layer (a scan) is
rendered at about 300 dpi and read by ``tesseract`` when that program is
installed; otherwise its number goes to ``pages_without_text`` and a note says
how to have it read. Metadata: title, author, created and modified (ISO 8601
from PDF dates), pages.

Example:
    >>> pdf_date("D:20230115103000+01'00'"), pdf_date("D:2021"), pdf_date("garbage")
    ('2023-01-15T10:30:00+01:00', '2021', '')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    DocumentError,
    Extracted,
    Limits,
    Part,
)
from searchapp.intake.formats.ocr import INSTALL_HINT, pgm, read_picture, tesseract_program
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.formats.sniff import describe, head_of, sniff

DPI = 300
MAX_PIXELS = 6000  # the longer side of a rendered page, whatever its size in points
PASSWORD_ERROR = 4  # FPDF_ERR_PASSWORD
DATE = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?"
                  r"(?:(Z)|([+-])(\d{2})'?(\d{2})?'?)?")

Progress = Callable[[int, int], None]
REOPEN_PAGES = 100  # pages read before the document is closed and opened again


class _Document:
    """A PDF opened from its path, opened again after every ``REOPEN_PAGES`` pages read
    (see the module's docstring): ``len``, ``doc[i]`` and the metadata, as pypdfium2's."""

    def __init__(self, pdfium, path: str | Path, name: str):
        self.pdfium, self.path, self.name = pdfium, path, name
        self.doc = _open(pdfium, path, name)
        self.pages_read = 0

    def __len__(self) -> int:
        return len(self.doc)

    def __getitem__(self, index: int):
        if self.pages_read and self.pages_read % REOPEN_PAGES == 0:
            self.doc.close()
            self.doc = _open(self.pdfium, self.path, self.name)
        self.pages_read += 1
        return self.doc[index]

    def get_metadata_dict(self) -> dict:
        return self.doc.get_metadata_dict()

    def close(self) -> None:
        self.doc.close()


def read_pdf(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS,
             progress: Progress | None = None) -> list[Extracted]:
    """A PDF's text page by page; ``progress(done, total)`` is called per OCR'd page."""
    import pypdfium2 as pdfium

    kind = sniff(head_of(path))
    if kind != "pdf":
        raise DocumentError(f"{name} is not a PDF: it looks like {describe(kind)}. Give it "
                            "the extension of what it is, or export it as PDF again.")
    pdf = _Document(pdfium, path, name)
    try:
        count = len(pdf)
        if count > limits.max_pages:
            raise DocumentError(
                f"{name} has {count:,} pages, more than the limit of {limits.max_pages:,}. "
                "Split it, or raise SEARCHAPP_MAX_PAGES.")
        texts = [_page_text(pdf, i) for i in range(count)]
        blank = [i + 1 for i, t in enumerate(texts) if not t.strip()]
        notes, missing = _ocr(pdf, blank, texts, progress)
        meta = _meta(pdf.get_metadata_dict(), count)
    finally:
        pdf.close()
    parts = [Part(text, page=i + 1) for i, text in enumerate(texts) if text.strip()]
    return [Extracted(parts, meta, notes, pages_without_text=missing)]


def _open(pdfium, path: str | Path, name: str):
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == PASSWORD_ERROR:
            raise DocumentError(
                f"{name} is encrypted with a password, so its text cannot be read. Save a "
                "copy without the password (Print > Save as PDF) and add that.") from None
        raise DocumentError(f"{name} is a damaged PDF ({exc}). Open it in a PDF viewer and "
                            "save or print it to a new PDF.") from None


def _page_text(pdf, index: int) -> str:
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            return textpage.get_text_bounded().replace("\r\n", "\n").replace("\r", "\n")
        finally:
            textpage.close()
    finally:
        page.close()


def _ocr(pdf, blank: list[int], texts: list[str], progress: Progress | None
         ) -> tuple[list[str], list[int]]:
    """Tesseract's text for the pages without a text layer, in place in ``texts``;
    (notes, pages still without text)."""
    if not blank:
        return [], []
    tesseract = tesseract_program()
    if tesseract is None:
        return [f"{_numbers(blank).capitalize()} {_have(blank)} no text layer (scanned "
                f"images) and were not read: {INSTALL_HINT} and add the file again to read "
                "them."], blank
    read, missing = [], []
    for done, number in enumerate(blank, 1):
        text = _tesseract(tesseract, pdf, number - 1)
        if text.strip():
            texts[number - 1] = text
            read.append(number)
        else:
            missing.append(number)
        if progress is not None:
            progress(done, len(blank))
    notes = [f"OCR (Tesseract) read {_numbers(read)}."] if read else []
    if missing:
        notes.append(f"{_numbers(missing).capitalize()} {_have(missing)} no text layer and "
                     "OCR (Tesseract) found no text there.")
    return notes, missing


def _tesseract(program: str, pdf, index: int) -> str:
    """One page rendered to a grayscale image and read by ``tesseract IMAGE stdout``."""
    page = pdf[index]
    try:
        width, height = page.get_size()
        scale = min(DPI / 72, MAX_PIXELS / max(width, height, 1))
        bitmap = page.render(scale=scale, grayscale=True)
        try:
            image = _pgm(bitmap)
        finally:
            bitmap.close()
    finally:
        page.close()
    return read_picture(program, image)


def _pgm(bitmap) -> bytes:
    """A grayscale bitmap as a binary PGM image (rows copied without their stride padding)."""
    width, height, stride = bitmap.width, bitmap.height, bitmap.stride
    raw = bytes(bitmap.buffer)
    return pgm(width, height, b"".join(raw[y * stride:y * stride + width] for y in range(height)))


def _numbers(pages: list[int]) -> str:
    """"page 3" or "pages 3, 7"."""
    return ("page " if len(pages) == 1 else "pages ") + ", ".join(str(p) for p in pages)


def _have(pages: list[int]) -> str:
    return "has" if len(pages) == 1 else "have"


def _meta(info: dict, count: int) -> dict[str, str]:
    meta = {"title": info.get("Title", ""), "author": info.get("Author", ""),
            "created": pdf_date(info.get("CreationDate", "")),
            "modified": pdf_date(info.get("ModDate", "")), "pages": str(count)}
    return {k: v.strip() for k, v in meta.items() if v and v.strip()}


def pdf_date(value: str) -> str:
    """A PDF date (``D:YYYYMMDDHHmmSS+HH'mm'``) as ISO 8601, as precise as it is; "" when
    it is not one."""
    match = DATE.match(value.strip()) if value else None
    if not match:
        return ""
    year, month, day, hour, minute, second, zulu, sign, tzh, tzm = match.groups()
    out = year + "".join(f"-{v}" for v in (month, day) if v)
    if hour and day:
        out += f"T{hour}:{minute or '00'}:{second or '00'}"
        out += "+00:00" if zulu else f"{sign}{tzh}:{tzm or '00'}" if sign else ""
    return out


# This module's format (``registry``): what names it and what reads it.
register(Format("pdf", "document", ("pdf",), "PDF", "a PDF", read_pdf, content=frozenset({"pdf"}),
                progress=True, text_in="page with a text layer"))
