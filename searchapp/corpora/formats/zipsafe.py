"""The one guard every zip-based format passes before a parser sees it.

DOCX, PPTX, XLSX, ODT, ODP, ODS and EPUB are zip archives of XML. An untrusted
one can be a zip bomb (a few KB that unpack to gigabytes) or carry an XML bomb
or an external entity (``<!ENTITY x SYSTEM "http://...">``). ``open_zip``
refuses, before anything is unpacked for a parser: a file that is not a zip,
too many members, a declared unpacked total over ``Limits.max_expanded_bytes``,
a member that claims to unpack more than ``Limits.max_ratio`` times its packed
size, and any XML member holding an entity declaration or a document type
declaration (each member read a chunk at a time, at most what it declared, so
a lying header cannot make it read more). A plain ``<!DOCTYPE html>`` (no
internal subset) is allowed in the (X)HTML chapters of an EPUB, which almost
all carry one; nothing is resolved and nothing reaches the network. ``xml_root``
then parses a checked member with defusedxml (DTDs forbidden as a second lock).

Example:
    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as z:
    ...     z.writestr("a.xml", '<!DOCTYPE a [<!ENTITY x "boom">]><a>&x;</a>')
    >>> open_zip(buf, "evil.docx", Limits(), "Word document")
    Traceback (most recent call last):
    ...
    searchapp.corpora.formats.document.DocumentError: evil.docx: member a.xml declares...
"""

from __future__ import annotations

import codecs
import zipfile
from pathlib import Path
from typing import BinaryIO
from xml.etree.ElementTree import Element

from searchapp.corpora.formats.document import DocumentError, Limits

MAX_MEMBERS = 10_000
RATIO_FROM = 1 << 20  # members unpacking to less than this are never a bomb by ratio
CHUNK = 1 << 16
XML_SUFFIXES = (".xml", ".rels", ".opf", ".ncx", ".xhtml", ".html", ".htm", ".svg", ".rdf",
                ".smil")
HTML_SUFFIXES = (".xhtml", ".html", ".htm")


def open_zip(file: str | Path | BinaryIO, name: str, limits: Limits, kind: str,
             hint: str = "") -> zipfile.ZipFile:
    """The archive, opened and checked (see the module's docstring); the caller closes it.
    ``kind`` names the format in messages ("Word document"), ``hint`` is added to the
    message for a file that is not a zip at all."""
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise DocumentError(
            f"{name} is not a valid {kind} file (damaged or not what its name says). Open it "
            f"in the program that made it and save it again{hint}.") from None
    try:
        check_archive(archive, name, limits)
    except BaseException:
        archive.close()
        raise
    return archive


def check_archive(archive: zipfile.ZipFile, name: str, limits: Limits) -> None:
    """Members, sizes, ratios and XML declarations of an open archive."""
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise DocumentError(f"{name} holds {len(members):,} files inside (at most "
                            f"{MAX_MEMBERS:,} are read): is it really a document?")
    total = sum(m.file_size for m in members)
    if total > limits.max_expanded_bytes:
        raise DocumentError(
            f"{name} would unpack to {total:,} bytes, more than the limit of "
            f"{limits.max_expanded_bytes:,}: a file this large inside is refused (it may be "
            "a zip bomb). Split the document, or save it without embedded media.")
    for member in members:
        _check_ratio(member, name, limits)
    for member in members:
        if member.filename.lower().endswith(XML_SUFFIXES) and not member.is_dir():
            _check_xml(archive, member, name)


def _check_ratio(member: zipfile.ZipInfo, name: str, limits: Limits) -> None:
    packed = max(member.compress_size, 1)
    if member.file_size >= RATIO_FROM and member.file_size > limits.max_ratio * packed:
        raise DocumentError(
            f"{name}: member {member.filename} would unpack to {member.file_size:,} bytes from "
            f"{member.compress_size:,} (more than {limits.max_ratio} times): refused as a "
            "possible zip bomb. If the document is genuine, save it again without that part.")


def _check_xml(archive: zipfile.ZipFile, member: zipfile.ZipInfo, name: str) -> None:
    """Refuse entity declarations, and document type declarations outside (X)HTML."""
    html = member.filename.lower().endswith(HTML_SUFFIXES)
    for text in _texts(archive, member, name):
        low = text.lower()
        if "<!entity" in low:
            raise _xml_refused(name, member.filename, "declares XML entities")
        at = low.find("<!doctype")
        if at >= 0 and (not html or "[" in low[at:].split(">", 1)[0]):
            raise _xml_refused(name, member.filename, "has a document type declaration")


def _texts(archive: zipfile.ZipFile, member: zipfile.ZipInfo, name: str):
    """A member's text a chunk at a time, each chunk with the end of the one before (so a
    declaration cut by a chunk's end is still seen); UTF-16 members are decoded."""
    carry, decoder = "", None
    try:
        with archive.open(member) as stream:  # reads at most the declared size
            while raw := stream.read(CHUNK):
                if decoder is None:
                    encoding = "utf-16" if raw.startswith((b"\xff\xfe", b"\xfe\xff")) else \
                        "utf-8"
                    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
                text = carry + decoder.decode(raw)
                yield text
                carry = text[-4096:]
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise DocumentError(f"{name}: member {member.filename} cannot be unpacked ({exc}); the "
                            "file is damaged. Save it again.") from None


def _xml_refused(name: str, member: str, why: str) -> DocumentError:
    return DocumentError(
        f"{name}: member {member} {why}, which documents do not need and an attack uses (an "
        "XML bomb or an external entity); it was refused without being expanded. Save the "
        "document again from its program if you trust it.")


def read_member(archive: zipfile.ZipFile, member: str, name: str) -> bytes:
    """A checked member's bytes (at most its declared size, which ``open_zip`` bounded)."""
    try:
        return archive.read(member)
    except KeyError:
        raise DocumentError(f"{name} lacks {member}, which its format requires: the file is "
                            "damaged or not what its name says.") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise DocumentError(f"{name}: member {member} cannot be unpacked ({exc}); the file "
                            "is damaged. Save it again.") from None


def xml_root(archive: zipfile.ZipFile, member: str, name: str) -> Element:
    """A checked XML member parsed by defusedxml (no DTD, no entity, no network)."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, fromstring

    data = read_member(archive, member, name)
    try:
        return fromstring(data, forbid_dtd=True)
    except DefusedXmlException:
        raise _xml_refused(name, member, "has a document type declaration") from None
    except ParseError as exc:
        raise DocumentError(f"{name}: {member} is not well-formed XML ({exc}); the file is "
                            "damaged. Save it again.") from None
