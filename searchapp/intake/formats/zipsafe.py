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

``open_member`` opens a member whose unpacking is bounded at every read, whatever
it declares: ``zipfile`` decompresses a bzip2 or LZMA member a whole compressed
read at a time (1 MiB of bzip2 zeros is a terabyte), so those are decompressed
here with a cap on each step's output. Deflate and stored members are
``zipfile``'s own (already bounded).

Example:
    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as z:
    ...     z.writestr("a.xml", '<!DOCTYPE a [<!ENTITY x "boom">]><a>&x;</a>')
    >>> open_zip(buf, "evil.docx", Limits(), "Word document")
    Traceback (most recent call last):
    ...
    searchapp.intake.formats.document.DocumentError: evil.docx: member a.xml declares...
"""

from __future__ import annotations

import bz2
import codecs
import copy
import io
import lzma
import struct
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO
from xml.etree.ElementTree import Element

from searchapp.intake.formats.document import DocumentError, Limits

MAX_MEMBERS = 10_000
RATIO_FROM = 1 << 20  # members unpacking to less than this are never a bomb by ratio
CHUNK = 1 << 16
PACKED_STEP = 1 << 14  # compressed bytes given a bzip2 or LZMA decompressor at a time
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
        with open_member(archive, member) as stream:
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
        info = archive.getinfo(member)
        with open_member(archive, info) as stream:
            data = stream.read(info.file_size + 1)
        if len(data) > info.file_size:
            raise zipfile.BadZipFile(f"it holds more than the {info.file_size:,} bytes it "
                                     "declares")
        return data
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


def open_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> io.BufferedIOBase:
    """A member's unpacked bytes as a stream whose every read is bounded by its size (see the
    module's docstring); a wrong CRC-32 raises ``zipfile.BadZipFile`` at its end, as
    ``zipfile`` does.

    Example:
        >>> buf = io.BytesIO()
        >>> with zipfile.ZipFile(buf, "w", zipfile.ZIP_BZIP2) as z:
        ...     z.writestr("a.txt", bytes(10_000_000))
        >>> with zipfile.ZipFile(buf) as z, open_member(z, z.getinfo("a.txt")) as m:
        ...     len(m.read(1000)), len(m.read())
        (1000, 9999000)
    """
    if info.compress_type not in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        return archive.open(info)
    packed = copy.copy(info)  # the stored bytes, read as they are (checked below instead)
    packed.compress_type, packed.file_size = zipfile.ZIP_STORED, info.compress_size
    del packed.CRC
    return io.BufferedReader(_Bounded(archive.open(packed), info), CHUNK)


class _Bounded(io.RawIOBase):
    """bzip2 or LZMA (zip's own framing) decompressed at most one read's size at a time."""

    def __init__(self, packed: io.BufferedIOBase, info: zipfile.ZipInfo):
        self._packed, self._info, self._crc = packed, info, 0
        self._decomp = bz2.BZ2Decompressor() if info.compress_type == zipfile.ZIP_BZIP2 \
            else None  # LZMA: made from the member's first bytes (its properties)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while True:
            if self._decomp is None:
                self._decomp = _lzma_decompressor(self._packed)
            if self._decomp.eof:
                return self._end()
            data = self._packed.read(PACKED_STEP) if self._decomp.needs_input else b""
            if self._decomp.needs_input and not data:
                return self._end()
            out = self._decomp.decompress(data, len(buffer))
            if out:
                buffer[:len(out)] = out
                self._crc = zlib.crc32(out, self._crc)
                return len(out)

    def _end(self) -> int:
        if self._crc != self._info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {self._info.filename!r}")
        return 0

    def close(self) -> None:
        self._packed.close()
        super().close()


def _lzma_decompressor(packed: io.BufferedIOBase) -> lzma.LZMADecompressor:
    """LZMA as zip stores it: 2 bytes of version, 2 of the properties' size, the properties,
    then a raw LZMA1 stream (what ``zipfile`` reads, through the same lzma call)."""
    head = packed.read(4)
    if len(head) < 4:
        raise zipfile.BadZipFile("an LZMA member ends before its header")
    size, = struct.unpack("<H", head[2:4])
    props = packed.read(size)
    if len(props) < size:
        raise zipfile.BadZipFile("an LZMA member ends before its properties")
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[
        lzma._decode_filter_properties(lzma.FILTER_LZMA1, props)])
