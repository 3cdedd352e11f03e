"""One input file → the documents it holds, ready to store: what runs in an extraction
process (``extract_pool``), so a file that hangs or exhausts memory costs that file only.

A file is one document whose id is its path relative to the folder or archive
root; an mbox gives one per message (``inbox.mbox#3``) and an e-mail's attached
documents become documents of their own (``mail.eml/report.pdf``), named by the
one rule of ``names`` (``mail.eml/new%0Aline.md`` for a name holding a newline);
two attachments that end with the same id are both kept, the second as
``mail.eml/report (2).pdf``, and a note says so. Each
document's metadata is strings only, usable in filters and facets as any column:
path, folder, file, type, title, author, created, modified, pages, size, sha256, and
the language its text is in (``lang``: ISO 639-1, "und" when it cannot be told; ``langs``
when its parts are in several, main first: ``"en,de"``; see ``language``). A document's
own ``lang`` (front matter) is kept.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "guide.md").write_text("# Install\\nRun make.\\n")
    >>> [(d.external_id, d.meta["type"], d.layout) for d in extract_file(
    ...     str(folder / "guide.md"), "docs/guide.md", 12, None, "ab" * 32).documents]
    [('docs/guide.md', 'md', [[0, 17, None, 'Install']])]
    >>> _ = (folder / "anleitung.md").write_text("# Einbau\\nDie Datei wird gelesen und neu "
    ...                                           "erstellt, bevor der Index wächst.\\n")
    >>> extract_file(str(folder / "anleitung.md"), "anleitung.md", 80, None,
    ...              "ab" * 32).documents[0].meta["lang"]
    'de'
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from searchapp.base.language import document_languages
from searchapp.corpora.names import distinct, fit_id, segment
from searchapp.intake.extract_pool import report_progress
from searchapp.intake.formats.document import DocumentError, Extracted, Limits
from searchapp.intake.formats.document_readers import document_type, read_document
from searchapp.store.documents import NewDocument

ATTACHMENT_DEPTH = 2  # an attachment's attachment is read; deeper ones are not


@dataclass
class FileResult:
    """What one file gave: its documents, notes for the report (pages without text,
    OCR, attachments that could not be read) and the pages that had no text."""

    documents: list[NewDocument] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def file_meta(path: str, kind: str, size: int, mtime: float | None, sha256: str) -> dict:
    """The metadata every document read from a file carries (strings, for filters)."""
    posix = PurePosixPath(path)
    meta = {"path": path, "folder": str(posix.parent) if str(posix.parent) != "." else "",
            "file": posix.name, "type": kind, "size": str(size), "sha256": sha256}
    if mtime is not None:
        meta["modified"] = datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return meta


def extract_file(local: str, path: str, size: int, mtime: float | None, sha256: str,
                 limits: Limits | None = None) -> FileResult:
    """Read the file at ``local`` (named ``path`` relative to its root) into documents.

    Raises DocumentError when the file itself cannot be read (the caller reports it
    and goes on); an unreadable attachment is a note, not a failure of the e-mail.
    Long steps (OCR, page by page) report their progress to the pool running this.
    """
    limits = limits or Limits()
    kind = document_type(path) or "unknown"
    base = file_meta(path, kind, size, mtime, sha256)
    result = FileResult()
    _add(result, _read(Path(local), path, limits), path, base, limits, ATTACHMENT_DEPTH)
    return result


def _read(local: Path, path: str, limits: Limits) -> list[Extracted]:
    return read_document(local, path, limits, progress=report_progress)


def _add(result: FileResult, extracted: list[Extracted], doc_id: str, base: dict,
         limits: Limits, depth: int) -> None:
    for one in extracted:
        text = one.text
        if len(text) > limits.max_text_chars:
            raise DocumentError(
                f"{doc_id}: its text has {len(text):,} characters, more than the "
                f"{limits.max_text_chars:,} one document may hold. Split the file into "
                "smaller ones and add them again.")
        # the file's own metadata (front matter, properties) never names the app's keys:
        # where a document came from and what its bytes are is the app's to say
        meta = {**{k: str(v) for k, v in one.meta.items() if v not in (None, "")}, **base}
        if one.meta.get("modified"):  # a document's own date is its date, not the file's
            meta["modified"] = str(one.meta["modified"])
        if "lang" not in meta:
            meta.update(document_languages(text, one.layout))
        if one.pages_without_text:
            meta["pages_without_text"] = ",".join(str(p) for p in one.pages_without_text)
        external_id = _unique(result, fit_id(doc_id + one.suffix))
        layout = one.layout if text else [[0, 0, None, None]]
        result.documents.append(NewDocument(external_id, text, meta, layout))
        result.notes += [f"{external_id}: {note}" for note in one.notes]
        if depth > 0:
            _attachments(result, one, external_id, base, limits, depth - 1)


def _attachments(result: FileResult, one: Extracted, parent: str, base: dict, limits: Limits,
                 depth: int) -> None:
    """Attached documents of a type we read, each a document of its own."""
    for attachment in one.attachments[:limits.max_attachments]:
        name = segment(attachment.name.replace("\\", "/").rsplit("/", 1)[-1], "attachment")
        kind = document_type(name)
        if kind is None:
            continue
        child_id = _unique(result, fit_id(f"{parent}/{name}"))
        meta = {**base, "type": kind, "file": name, "size": str(len(attachment.data)),
                "attached_to": parent}
        with tempfile.TemporaryDirectory(prefix="searchapp-attachment-") as folder:
            local = Path(folder) / ("attachment." + name.rsplit(".", 1)[-1])
            local.write_bytes(attachment.data)
            try:
                _add(result, _read(local, child_id, limits), child_id, meta, limits,
                     depth)
            except DocumentError as exc:
                result.notes.append(f"{child_id}: not read ({exc})")


def _unique(result: FileResult, external_id: str) -> str:
    """``external_id``, or a distinct one (noted) when a document of this file has it."""
    taken = {d.external_id for d in result.documents}
    if external_id not in taken:
        return external_id
    fresh = distinct(external_id, taken)
    result.notes.append(f"{fresh}: two documents of this file would both be {external_id!r} "
                        f"(two attachments with the same name); the second is {fresh!r}.")
    return fresh
