"""E-mail: one message (.eml) or a mailbox of them (.mbox), attachments handed on.

A message is parsed by the standard library (``email.policy.default``). Its
text is the ``text/plain`` body, or else the ``text/html`` one read by the web
page reader; its part's section is the subject. The messages inside it (a
``multipart/digest``'s, a message forwarded as an attachment: ``message/rfc822``
parts) are parts of their own after it, each named by its subject. Metadata: subject, from, to,
cc, date (ISO 8601) and message_id. An attached file of a type we read (a PDF,
a Word document, ...) becomes an ``Attachment`` to be read as a document of its
own (its file name as the sender wrote it, RFC 2231 and encoded words decoded; the
ingest makes it an id by the rule of ``corpora.names``): at most
``Limits.max_attachments`` of them and
``Limits.max_expanded_bytes`` in all; the others are named in a note. An
mbox yields one document per message, suffix ``#n`` (from 1) and metadata
``message``.

Example:
    >>> raw = (b"Subject: Hi\\nFrom: a@example.org\\n"
    ...        b"Date: Tue, 2 Jan 2024 10:00:00 +0100\\n\\nBody\\n")
    >>> doc = message_document(raw, "a.eml")
    >>> doc.parts, doc.meta["date"]
    ([Part(text='Body', page=None, section='Hi')], '2024-01-02T10:00:00+01:00')
"""

from __future__ import annotations

import email.policy
import mailbox
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from pathlib import Path

from searchapp.corpora.names import segment
from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    Attachment,
    DocumentError,
    Extracted,
    Limits,
    Part,
    read_bounded,
)
from searchapp.intake.formats.html import read_html_bytes
from searchapp.intake.formats.registry import Format, document_type, register

HEADERS = {"subject": "subject", "from": "from", "to": "to", "cc": "cc",
           "message_id": "message-id"}


def read_eml(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """One message file (at most ``limits.max_expanded_bytes`` of it is read)."""
    data = read_bounded(path, name, limits, "one message", "Save its attachments separately.")
    return [message_document(data, name, limits)]


def read_mbox(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS) -> list[Extracted]:
    """A mailbox: one document per message, suffix "#n"."""
    try:
        box = mailbox.mbox(str(path), create=False)
    except (OSError, mailbox.Error) as exc:
        raise DocumentError(f"{name} cannot be read as a mailbox ({exc}).") from None
    out = []
    try:
        for number, key in enumerate(box.keys(), 1):
            doc = message_document(box.get_bytes(key), f"{name}#{number}", limits)
            doc.suffix, doc.meta["message"] = f"#{number}", str(number)
            out.append(doc)
    finally:
        box.close()
    return out


def message_document(data: bytes, name: str, limits: Limits = DEFAULT_LIMITS) -> Extracted:
    """A message's text, headers and attachments."""
    message = BytesParser(policy=email.policy.default).parsebytes(data)
    meta = _headers(message)
    subject = meta.get("subject")
    body = _body(message, name, limits)
    text = body or subject or ""
    attachments, notes = _attachments(message, name, limits)
    own = [Part(text, section=subject)] if text.strip() else []
    return Extracted(own + inner_messages(message, name, limits), meta, notes, attachments)


def inner_messages(message: EmailMessage, name: str, limits: Limits = DEFAULT_LIMITS
                   ) -> list[Part]:
    """The messages inside a message (a digest's, a forward's ``message/rfc822`` parts, at
    any depth), each one part: its body, or else its subject, its subject the section; at
    most ``limits.max_attachments``. One attached under a file name we read (``fwd.eml``) is
    left out here: it is handed on as an attachment, a document of its own.

    Example:
        >>> raw = (b"Subject: Digest\\nContent-Type: multipart/digest; boundary=X\\n\\n--X\\n\\n"
        ...        b"Subject: Pumps\\n\\nThe pump stops at night.\\n--X--\\n")
        >>> inner_messages(BytesParser(policy=email.policy.default).parsebytes(raw), "d.eml")
        [Part(text='The pump stops at night.', page=None, section='Pumps')]
    """
    parts: list[Part] = []
    for part in message.walk():
        if part is message or part.get_content_type() != "message/rfc822" or _handed_on(part):
            continue
        payload = part.get_payload()
        inner = payload[0] if isinstance(payload, list) and payload else None
        if not isinstance(inner, EmailMessage) or len(parts) >= limits.max_attachments:
            continue
        subject = _headers(inner).get("subject")
        text = _body(inner, name, limits) or subject or ""
        if text.strip():
            parts.append(Part(text, section=subject))
    return parts


def _handed_on(part: EmailMessage) -> bool:
    """Whether an attached part is read as a document of its own (its file name says how)."""
    filename = part.get_filename() or ""
    return bool(filename) and document_type(filename) is not None


def _headers(message: EmailMessage) -> dict[str, str]:
    meta = {}
    for key, header in HEADERS.items():
        try:
            value = message.get(header)
        except (ValueError, IndexError, TypeError):  # a malformed header
            value = None
        if value is not None and str(value).strip():
            meta[key] = " ".join(str(value).split())
    try:
        date = message.get("date")
        if date is not None:
            meta["date"] = parsedate_to_datetime(str(date)).isoformat()
    except (ValueError, TypeError, IndexError):
        pass
    return meta


def _body(message: EmailMessage, name: str, limits: Limits) -> str:
    try:
        part = message.get_body(preferencelist=("plain", "html"))
        if part is None:
            return ""
        content = part.get_content()
    except (LookupError, ValueError, KeyError, AttributeError):  # unknown charset, damage
        return ""
    if not isinstance(content, str):
        return ""
    if part.get_content_subtype() == "html":
        page = b'<meta charset="utf-8">' + content.encode("utf-8", "replace")
        return read_html_bytes(page, name, limits).text
    return content.strip()


def _attachments(message: EmailMessage, name: str, limits: Limits
                 ) -> tuple[list[Attachment], list[str]]:
    kept, skipped, total = [], [], 0
    for part in message.iter_attachments():
        filename = part.get_filename() or ""
        if not filename or document_type(filename) is None:
            continue
        data = part.get_payload(decode=True) or b""
        if len(kept) >= limits.max_attachments or total + len(data) > limits.max_expanded_bytes:
            skipped.append(segment(filename))
            continue
        kept.append(Attachment(filename, data))
        total += len(data)
    notes = [f"{name}: attachments not read (over the limit of {limits.max_attachments} or "
             f"{limits.max_expanded_bytes:,} bytes): {', '.join(skipped)}."] if skipped else []
    return kept, notes


# This module's formats (``registry``): what names them and what reads them.
register(Format("eml", "document", ("eml",), "e-mail", "an e-mail message", read_eml,
                text_in="body, subject or inner (forwarded, digested) message"))
register(Format("mbox", "document", ("mbox",), "mailbox", "a mailbox", read_mbox,
                text_in="message body, subject or inner (forwarded, digested) message"))
