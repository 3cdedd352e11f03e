"""One way in for a document file: its format found by name, its bytes checked, its text kept.

``read_document`` is what the ingest calls for a document file: it checks that
the file's first bytes are what its name says (a ``.pdf`` that is really a web
page or a zip is refused, naming what it is), calls the format's reader, and
checks the result: a file with no text at all is refused, and so is one whose text is
longer than ``Limits.max_text_chars``. The refusal of a file without text says what
was tried: the reader's own notes where it has them (a PDF's pages without a text
layer, and whether OCR ran or is not installed; an image OCR found nothing in),
else every place its format's reader looks (``Format.text_in``). A scan is refused
rather than kept empty: kept, it would be "unchanged" when added again once
Tesseract is installed, and never read. Each document's
metadata gets ``type``, the canonical name of its format. Which formats there are, and
which reader reads each, is ``registry``'s.

Example:
    >>> document_type("Guide.PDF"), document_type("notes.markdown"), document_type("a.csv")
    ('pdf', 'md', None)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from searchapp.intake.formats.document import DEFAULT_LIMITS, DocumentError, Extracted, Limits
from searchapp.intake.formats.registry import Format, document_type, find, listing
from searchapp.intake.formats.sniff import describe, head_of, sniff

__all__ = ["document_type", "read_document"]


def read_document(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS,
                  progress: Callable[[int, int], None] | None = None) -> list[Extracted]:
    """The documents in one file, checked (see the module's docstring). ``progress`` goes to
    readers that report it (``Format.progress``: the PDF reader's pages)."""
    fmt = find(name, "document")
    if fmt is None:
        raise DocumentError(f"Cannot read {name} as a document: files ending in "
                            f"{Path(name).suffix or '(no extension)'} are not read. Documents "
                            f"we read: {listing('document')}.")
    _check_content(path, name, fmt)
    docs = (fmt.reader(path, name, limits, progress=progress) if fmt.progress and progress
            else fmt.reader(path, name, limits))
    return _checked(docs, name, fmt, limits)


def _check_content(path: str | Path, name: str, fmt: Format) -> None:
    found = sniff(head_of(path))
    if found == "empty":
        raise DocumentError(f"{name} is empty: it has no text; there is nothing to add.")
    if found not in fmt.content:
        raise DocumentError(f"{name} is not {fmt.words}: it looks like {describe(found)}. "
                            "Give it the extension of what it is and add it again.")


def _checked(docs: list[Extracted], name: str, fmt: Format, limits: Limits) -> list[Extracted]:
    kept = [d for d in docs if d.text.strip()]
    if not kept:
        raise DocumentError(no_text(name, fmt, docs))
    for doc in kept:
        if len(doc.text) > limits.max_text_chars:
            raise DocumentError(f"{name}{doc.suffix} has {len(doc.text):,} characters of text, "
                                f"more than the limit of {limits.max_text_chars:,} for one "
                                "document. Split it into smaller files.")
        doc.meta.setdefault("type", fmt.name)
    return kept


def no_text(name: str, fmt: Format, docs: list[Extracted]) -> str:
    """Why a file gave no text, naming what was tried (see the module's docstring).

    Example:
        >>> fmt = Format("toy", "document", ("toy",), "Toy", "a toy", print, text_in="toy text")
        >>> no_text("a.toy", fmt, [])[:58]
        'a.toy has no text: no toy text in it. Where its text is a '
        >>> no_text("a.pdf", fmt, [Extracted([], notes=["Page 1 has no text layer."])])
        'a.pdf has no text: Page 1 has no text layer.'
    """
    said = " ".join(note for doc in docs for note in doc.notes)
    if said:
        return f"{name} has no text: {said}"
    if not fmt.text_in:
        return f"{name} has no text: it is only white space."
    return (f"{name} has no text: no {fmt.text_in} in it. Where its text is a picture, add the "
            "picture (PNG, JPEG, TIFF) or a scanned PDF instead: OCR reads those.")
