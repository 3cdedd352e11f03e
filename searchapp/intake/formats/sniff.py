"""What a file's first bytes say it is, so a file whose name lies is refused by name.

A ``.pdf`` that is really a web page, or a ``.docx`` that is a PDF, would
otherwise fail deep inside a parser with a message nobody can act on. ``sniff``
looks at the first few KiB only (magic numbers, then text or binary) and
``describe`` puts the result in words for a message.

Example:
    >>> sniff(b"%PDF-1.7\\n%..."), sniff(b"PK\\x03\\x04..."), sniff(b"<!DOCTYPE html><html>")
    ('pdf', 'zip', 'html')
    >>> describe(sniff(b"\\x89PNG\\r\\n\\x1a\\n..."))
    'a PNG image'
"""

from __future__ import annotations

from pathlib import Path

HEAD_BYTES = 8192  # what sniff looks at

WORDS = {
    "pdf": "a PDF",
    "zip": "a zip archive (a .docx, .pptx, .xlsx, .odt or .epub is one)",
    "ole": "an old-format or password-protected Office file (.doc, .xls, .ppt)",
    "rtf": "an RTF document",
    "html": "a web page (HTML)",
    "xml": "an XML file",
    "gzip": "a gzip-compressed file",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "tiff": "a TIFF image",
    "webp": "a WebP image",
    "binary": "a binary file (not text)",
    "text": "a plain text file",
    "empty": "an empty file",
}
MAGIC = ((b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"), (b"\xd0\xcf\x11\xe0", "ole"),
         (b"{\\rtf", "rtf"), (b"\x1f\x8b", "gzip"), (b"\x89PNG", "png"),
         (b"\xff\xd8\xff", "jpeg"), (b"GIF8", "gif"), (b"II*\x00", "tiff"),
         (b"MM\x00*", "tiff"))
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def head_of(path: str | Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a file (never more)."""
    with open(path, "rb") as file:
        return file.read(size)


def sniff(head: bytes) -> str:
    """The kind of file these first bytes start: a key of ``WORDS``."""
    if not head:
        return "empty"
    if b"%PDF-" in head[:1024]:  # PDF allows junk before the header
        return "pdf"
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "webp"
    if head.startswith(UTF16_BOMS):
        head = head.decode("utf-16", errors="ignore").encode()
    elif b"\0" in head:
        return "binary"
    start = head.removeprefix(b"\xef\xbb\xbf").lstrip().lower()
    if start.startswith((b"<!doctype html", b"<html")) or (
            start.startswith((b"<?xml", b"<!doctype", b"<!--")) and b"<html" in start):
        return "html"
    return "xml" if start.startswith(b"<?xml") else "text"


def describe(kind: str) -> str:
    """A kind in words, for messages."""
    return WORDS.get(kind, kind)
