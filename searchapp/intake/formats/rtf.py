"""RTF documents: their text by striprtf, title and author from the info group.

An RTF file is 7-bit text with escapes; striprtf turns it into plain text (the
file's code page for ``\\'xx`` escapes, Unicode escapes as they are). The
whole text is one part. Metadata: ``{\\info{\\title ...}{\\author ...}}``.

Example:
    >>> rtf_document(rb"{\\rtf1\\ansi{\\info{\\title Notes}}Hello \\b world\\b0.\\par}").parts
    [Part(text='Hello world.', page=None, section=None)]
"""

from __future__ import annotations

import re
from pathlib import Path

from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    DocumentError,
    Extracted,
    Limits,
    Part,
    read_bounded,
)
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.formats.sniff import describe, sniff

INFO = re.compile(rb"\{\\(title|author)\s+([^{}]*)\}")
CODEPAGE = re.compile(rb"\\ansicpg(\d+)")


def read_rtf(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """An RTF file as one part (at most ``limits.max_expanded_bytes`` of it is read)."""
    data = read_bounded(path, name, limits, "an RTF file", "Split it, or save it as plain text.")
    if sniff(data[:8192]) != "rtf":
        raise DocumentError(f"{name} is not an RTF document: it looks like "
                            f"{describe(sniff(data[:8192]))}. Give it the extension of what it "
                            "is.")
    return [rtf_document(data)]


def rtf_document(data: bytes) -> Extracted:
    """RTF bytes as a document."""
    from striprtf.striprtf import rtf_to_text

    found = CODEPAGE.search(data[:4096])
    encoding = f"cp{int(found.group(1))}" if found else "cp1252"
    try:
        "".encode(encoding)
    except LookupError:
        encoding = "cp1252"
    raw = data.decode("latin-1")  # RTF is 7-bit; striprtf decodes \'xx by ``encoding``
    text = rtf_to_text(raw, encoding=encoding, errors="replace").strip()
    meta = {key.decode(): value.decode(encoding, "replace").strip()
            for key, value in INFO.findall(data)}
    return Extracted([Part(text)] if text else [], {k: v for k, v in meta.items() if v})


# This module's format (``registry``): what names it and what reads it.
register(Format("rtf", "document", ("rtf",), "RTF", "an RTF document", read_rtf,
                content=frozenset({"rtf"})))
