"""Names from inside files and uploads as document ids: one rule, named again by every front end.

A name that comes from inside a file or from an upload (an e-mail attachment's
file name, however the message encoded it; an archive member's path; an uploaded
file's name) becomes part of a document id. ``segment`` turns one name into one
path segment, always the same way:

- Unicode NFC: ``cafe\\u0301.md`` (NFD) and ``café.md`` are one name;
- every character a terminal, a URL or a file system could take for something
  else is written as the percent escapes of its UTF-8 bytes, as a URL writes it:
  control characters (C0, DEL, C1: ``new\\nline.md`` is ``new%0Aline.md``),
  format characters (bidi overrides and isolates, zero-width characters, the
  BOM), line and paragraph separators, lone surrogates (an undecodable byte
  comes back as its ``%XX``), and ``/`` and ``\\`` inside one segment;
- spaces at its ends are dropped (an id is stripped where it is given);
  ``.`` and ``..`` are ``%2E`` and ``%2E%2E`` (no URL path can name them);
- at most ``MAX_SEGMENT_BYTES`` bytes of UTF-8: a longer name keeps its
  extension and as much of its start as fits, followed by ``~`` and 8 hex digits
  of the SHA-256 of the whole name, so two long names differing in their tail
  stay two.

``fit_id`` keeps a whole id within the ``MAX_ID_CHARS`` the store's column and
every front end take, the same way. Both are stable (applied again they change
nothing) and what they give passes ``check_id`` (the one id rule, below), so a document made
from any name can be fetched and deleted through the CLI and the API.
``distinct`` gives the later of two documents that would share an id one of its
own (``report (2).pdf``); the ingest says so in its report.

Example:
    >>> segment("new\\nline.md"), segment(".."), segment("cafe\\u0301.md") == "café.md"
    ('new%0Aline.md', '%2E%2E', True)
    >>> len(segment("x" * 300 + ".md").encode()), segment("x" * 300 + ".md")[-12:]
    (200, '~9569758f.md')
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Container

from searchapp.errors import InvalidParameterError

MAX_SEGMENT_BYTES = 200
MAX_ID_CHARS = 500  # documents.external_id is String(500)
HASH_CHARS = 8
_UNSAFE = {"Cc", "Cf", "Cs", "Zl", "Zp"}
_EXTENSION = re.compile(r"(?:\.tar)?\.[A-Za-z0-9]{1,16}$")


def segment(name: str, default: str = "file") -> str:
    """``name`` as one safe path segment of an id (the rule in the module's docstring);
    ``default`` when nothing is left of it.

    Example:
        >>> segment(" report\\u202e.pdf "), segment("a/b\\\\c"), segment("  ", "attachment")
        ('report%E2%80%AE.pdf', 'a%2Fb%5Cc', 'attachment')
    """
    text = unicodedata.normalize("NFC", name)
    text = "".join(_escape(ch) if ch in "/\\" or unicodedata.category(ch) in _UNSAFE else ch
                   for ch in text)
    text = unicodedata.normalize("NFC", text).strip()  # an escape's last digit + a mark
    if text in (".", ".."):
        text = "%2E" * len(text)
    if len(text.encode()) > MAX_SEGMENT_BYTES:
        text = _shortened(text, MAX_SEGMENT_BYTES)
    return text or default


def path_id(path: str) -> str:
    """A path of names (``/`` between them) as an id: each part by ``segment``, empty
    parts dropped, the whole within ``MAX_ID_CHARS``.

    Example:
        >>> path_id("mail.eml//new\\nline.md")
        'mail.eml/new%0Aline.md'
    """
    parts = [segment(part, "") for part in path.split("/")]
    return fit_id("/".join(part for part in parts if part) or "file")


def fit_id(external_id: str) -> str:
    """``external_id`` when it has at most ``MAX_ID_CHARS`` characters; else as many of
    its first segments as fit, a segment ``~`` and 8 hex digits of its SHA-256, and its
    last segment (when short enough). Whole segments only, so the rule stays stable.

    Example:
        >>> fit_id("a.md"), len(fit_id("d/" * 300 + "a.md")), fit_id("d/" * 300 + "a.md")[-15:]
        ('a.md', 500, '/~79d7427c/a.md')
    """
    if len(external_id) <= MAX_ID_CHARS:
        return external_id
    digest = hashlib.sha256(external_id.encode("utf-8", "surrogatepass")).hexdigest()
    parts = external_id.split("/")
    last = parts.pop() if len(parts) > 1 and len(parts[-1]) <= MAX_ID_CHARS // 2 else ""
    tail = f"~{digest[:HASH_CHARS]}" + (f"/{last}" if last else "")
    room, kept = MAX_ID_CHARS - len(tail) - 1, []
    for part in parts:
        if len("/".join([*kept, part])) > room:
            break
        kept.append(part)
    head = "/".join(kept) if kept else external_id[:room].rstrip()
    return f"{head}/{tail}"


def distinct(external_id: str, taken: Container[str]) -> str:
    """``external_id`` with `` (2)``, `` (3)``, ... before its last segment's extension:
    the first that is not ``taken`` (``external_id`` itself when it is free).

    Example:
        >>> distinct("mail.eml/report.pdf", {"mail.eml/report.pdf"})
        'mail.eml/report (2).pdf'
    """
    candidate, number = external_id, 1
    head, _, last = external_id.rpartition("/")
    ext = extension(last)
    stem = last[:len(last) - len(ext)]
    while candidate in taken:
        number += 1
        candidate = fit_id(f"{head}/" * bool(head) + f"{stem} ({number}){ext}")
    return candidate


def extension(name: str) -> str:
    """The extension a name keeps however it is shortened (``.tar.gz`` counts as one).

    Example:
        >>> extension("notes.tar.gz"), extension("a.pdf"), extension("README")
        ('.tar.gz', '.pdf', '')
    """
    found = _EXTENSION.search(name)
    return found.group() if found and found.start() else ""


def _escape(ch: str) -> str:
    errors = "surrogateescape" if 0xDC80 <= ord(ch) <= 0xDCFF else "surrogatepass"
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", errors))


def _shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` bytes: its start, ``~hash`` and its extension."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:HASH_CHARS]
    ext = extension(text)
    room = limit - len(ext.encode()) - 1 - HASH_CHARS
    stem = text[:len(text) - len(ext)].encode()[:room].decode("utf-8", "ignore").rstrip()
    return f"{stem}~{digest}{ext}"


ID_RULE = ("a document id is 1-500 characters of text with no control character (newline, "
           "tab, ...) and is not '.' or '..'; spaces around it are removed")


def check_id(external_id: object) -> str:
    """A document id as stored, by the one rule every front end uses (``ID_RULE``): spaces
    around it removed; refused when empty, too long, holding a control character (a newline
    or a tab anywhere), or ``.``/``..`` (which no URL path can name).

    Example:
        >>> check_id("  q-17 ")
        'q-17'
        >>> check_id("..")
        Traceback (most recent call last):
        ...
        searchapp.errors.InvalidParameterError: Document id '..' cannot be named in a URL; ...
    """
    if not isinstance(external_id, str) or not external_id.strip():
        raise InvalidParameterError(f"A document id must be a non-empty string: {ID_RULE}.")
    external_id = external_id.strip()
    if len(external_id) > MAX_ID_CHARS:
        raise InvalidParameterError(f"Document id {external_id[:40]!r}... is longer than "
                                    f"{MAX_ID_CHARS} characters.")
    if any(unicodedata.category(c) == "Cc" for c in external_id):
        raise InvalidParameterError(f"Document id {external_id[:40]!r} holds a control "
                                    f"character; {ID_RULE}.")
    if external_id in (".", ".."):
        raise InvalidParameterError(f"Document id {external_id!r} cannot be named in a URL; "
                                    f"{ID_RULE}.")
    check_text_value(external_id, "document id")
    return external_id


def check_text_value(value: str, what: str) -> str:
    """``value`` if the database can store it: no NUL character, valid Unicode (no lone
    surrogate, which some JSON encoders let through).

    Example:
        >>> check_text_value("ok", "text")
        'ok'
    """
    if "\x00" in value:
        raise InvalidParameterError(f"The {what} contains a NUL character; remove it.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidParameterError(f"The {what} is not valid Unicode (a lone surrogate "
                                    "code point); send it as UTF-8 text.") from None
    return value
