"""An upload's bytes, read a piece at a time: lines, text chunks, or a seekable file.

Nothing here holds the whole file. A ``Source`` is bytes, an open file (the
Upload page's, read where it lies) or a path (the CLI), plain or gzipped
(``.gz``: decompressed as it is read), and each way of reading it starts again
from the beginning, so a file can be read
twice (a preview, then the upload). What every reader gets is checked on the
way: at most ``limit`` bytes once uncompressed (a gzip bomb stops at the
limit) and, from ``RATIO_FLOOR`` on, at most ``ratio`` (``SEARCHAPP_MAX_RATIO``,
200) times the compressed bytes read so far (a 1 MB .gz of blank lines stops
after 1 MiB, not after the limit's gigabyte), UTF-8 (a BOM is fine; UTF-16 and
UTF-32 with a BOM are recoded to UTF-8), no NUL byte, lines of at most
``MAX_LINE_BYTES``, and at most ``MAX_BLANK_RUN`` blank lines in a row (no table
has them; read one by one they cost minutes); each problem is an ``IngestError``
naming the line (and column) to fix.

Example:
    >>> src = Source(b"text\\nhello\\n", "a.txt", limit=100)
    >>> list(src.lines())
    [(1, 'text\\n'), (2, 'hello\\n')]
    >>> list(Source(gzip.compress(bytes(10_000)), "bomb.txt.gz", limit=1000).lines())
    Traceback (most recent call last):
    ...
    searchapp.errors.IngestError: bomb.txt.gz is larger than the upload limit of 1000 bytes...
    >>> list(Source(gzip.compress(b"a\\n" * (2 << 20)), "as.txt.gz", limit=1 << 30).lines())
    Traceback (most recent call last):
    ...
    searchapp.errors.IngestError: as.txt.gz expands more than 200 times its compressed size...
"""

from __future__ import annotations

import codecs
import gzip
import io
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from searchapp.config import size_words
from searchapp.errors import IngestError

READ_CHUNK = 1 << 20  # bytes read (or decompressed) at a time
MAX_LINE_BYTES = 16 << 20  # one line of a line-based file; a longer one is refused unread
RATIO_FLOOR = 1 << 20  # uncompressed bytes a .gz may give before its ratio counts
DEFAULT_RATIO = 200  # SEARCHAPP_MAX_RATIO: uncompressed bytes per compressed byte
MAX_BLANK_RUN = 200_000  # blank lines in a row (a CSV value holds at most 131,072 characters)
# Byte-order marks other than UTF-8's, longest first (UTF-32-LE's starts with UTF-16-LE's).
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def too_big(filename: str, limit: int) -> IngestError:
    return IngestError(
        f"{filename} is larger than the upload limit of {size_words(limit)} (uncompressed). "
        "Split it into smaller files, or raise SEARCHAPP_MAX_UPLOAD_BYTES."
    )


def check_path(path: Path, formats: tuple[str, ...]) -> None:
    """A folder or a missing path, with a message that says what to give instead."""
    if path.is_dir():
        raise IngestError(f"{path} is a folder. Give the path of one file "
                          f"({', '.join('.' + f for f in formats)}, optionally .gz).")
    if not path.exists():
        raise IngestError(f"No file at {path}: check the path and the file name.")


def too_compressed(filename: str, ratio: int, expanded: int, packed: int) -> IngestError:
    return IngestError(
        f"{filename} expands more than {ratio} times its compressed size ({size_words(expanded)} "
        f"from the first {size_words(packed)}), as a gzip bomb does; a table compresses far "
        "less. Upload it uncompressed, or raise SEARCHAPP_MAX_RATIO if you trust it.")


class _Limited(io.RawIOBase):
    """A readable stream that raises ``too_big`` once more than ``limit`` bytes came through,
    ``too_compressed`` once more than ``ratio`` times the bytes ``packed`` has given (its
    ``tell()``) past ``RATIO_FLOOR``, and turns a damaged gzip stream's errors into one
    IngestError."""

    def __init__(self, inner: BinaryIO, filename: str, limit: int,
                 packed: BinaryIO | None = None, ratio: int = DEFAULT_RATIO):
        self._inner, self._filename, self._limit, self.count = inner, filename, limit, 0
        self._packed, self._ratio = packed, ratio

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            n = self._inner.readinto(buffer)
        except (OSError, EOFError, zlib.error) as exc:  # a damaged or truncated .gz
            raise IngestError(f"{self._filename} is not a valid gzip file ({exc}). "
                              "Compress it again, or upload it uncompressed.") from exc
        self.count += n or 0
        if self.count > self._limit:
            raise too_big(self._filename, self._limit)
        if self._packed is not None and self.count > RATIO_FLOOR:
            packed = self._packed.tell()
            if self.count > self._ratio * packed:
                raise too_compressed(self._filename, self._ratio, self.count, packed)
        return n


class _Recoded(io.RawIOBase):
    """UTF-16 or UTF-32 text (with its BOM) read as UTF-8 bytes, decoded a chunk at a time."""

    def __init__(self, inner: BinaryIO, encoding: str, filename: str):
        self._inner, self._filename, self._encoding = inner, filename, encoding
        self._decoder = codecs.getincrementaldecoder(encoding)()
        self._pending, self._lines = b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            raw = self._inner.read(READ_CHUNK)
            try:
                text = self._decoder.decode(raw, final=not raw)
            except UnicodeDecodeError as exc:
                raise IngestError(
                    f"{self._filename}: after line {self._lines} the text is not valid "
                    f"{self._encoding.upper()}. Save the file as UTF-8 and upload it again."
                ) from exc
            self._lines += text.count("\n")
            self._pending = text.encode("utf-8", errors="surrogatepass")
            if not raw:
                break
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


class Source:
    """An upload (bytes or a path, optionally gzipped) to be read from the start, as often as
    needed, never all at once."""

    def __init__(self, data: bytes | str | Path | BinaryIO, filename: str, limit: int,
                 ratio: int = DEFAULT_RATIO):
        self.data, self.filename, self.limit, self.ratio = data, filename, limit, ratio
        self.compressed = filename.lower().endswith(".gz")
        if isinstance(data, bytes):
            size = len(data)
        elif isinstance(data, str | Path):
            size = Path(data).stat().st_size
        else:  # an open, seekable file (the Upload page's): read in place, never copied
            size = data.seek(0, io.SEEK_END)
        if not self.compressed and size > limit:  # refused before a byte is read
            raise too_big(filename, limit)
        self.empty = size == 0

    @contextmanager
    def _open(self) -> Iterator[BinaryIO]:
        """The stored bytes from their start (closed after, unless the caller's file)."""
        if isinstance(self.data, bytes):
            yield io.BytesIO(self.data)
        elif isinstance(self.data, str | Path):
            try:
                file = Path(self.data).open("rb")  # noqa: SIM115 - closed by the with below
            except OSError as exc:
                raise IngestError(f"Cannot read {self.data}: {exc.strerror}.") from exc
            with file:
                yield file
        else:
            self.data.seek(0)
            yield self.data

    @contextmanager
    def raw(self) -> Iterator[BinaryIO]:
        """The decompressed bytes as a buffered stream, limited to ``limit`` bytes (and a .gz
        to ``ratio`` times what it has read of its own)."""
        with self._open() as stream:
            inner = gzip.GzipFile(fileobj=stream, mode="rb") if self.compressed else stream
            packed = stream if self.compressed else None
            try:
                yield io.BufferedReader(_Limited(inner, self.filename, self.limit, packed,
                                                 self.ratio), READ_CHUNK)
            finally:
                if self.compressed:
                    inner.close()

    @contextmanager
    def utf8(self) -> Iterator[BinaryIO]:
        """The bytes as UTF-8: a UTF-16/UTF-32 file (with its BOM) is recoded on the way."""
        with self.raw() as stream:
            head = stream.peek(4)[:4]
            encoding = next((enc for bom, enc in BOMS if head.startswith(bom)), None)
            if encoding is None:
                yield stream
            else:
                yield io.BufferedReader(_Recoded(stream, encoding, self.filename), READ_CHUNK)

    def lines(self) -> Iterator[tuple[int, str]]:
        """(line number from 1, the line's text with its "\\n"), split at "\\n" only.

        Unicode line breaks (U+2028, form feed, a lone "\\r") are characters inside
        a line, as JSON and CSV see them; "\\r\\n" keeps its "\\r" (readers drop it).
        """
        with self.utf8() as stream:
            number = blank = 0
            while raw := stream.readline(MAX_LINE_BYTES + 1):
                number += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise IngestError(
                        f"{self.filename}: line {number} is longer than "
                        f"{size_words(MAX_LINE_BYTES)}. Is this the right file? A document "
                        "has at most 100,000 characters.")
                blank = blank + 1 if raw in (b"\n", b"\r\n") else 0
                if blank > MAX_BLANK_RUN:
                    raise IngestError(
                        f"{self.filename}: lines {number - blank + 1:,} to {number:,} are "
                        f"blank, more than the {MAX_BLANK_RUN:,} blank lines in a row a file "
                        "may have. Is this the right file? Remove the blank lines and try "
                        "again.")
                if number == 1:
                    raw = raw.removeprefix(codecs.BOM_UTF8)
                if b"\0" in raw:
                    raise _nul_error(self.filename, raw, number)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _utf8_error(self.filename, raw, exc, number, 0) from exc
                yield number, text

    def chunks(self) -> Iterator[str]:
        """The text in pieces of about ``READ_CHUNK`` bytes (for formats that are not lines)."""
        with self.utf8() as stream:
            line, column, carry, first = 1, 0, b"", True
            while raw := stream.read(READ_CHUNK):
                if first:
                    raw, first = raw.removeprefix(codecs.BOM_UTF8), False
                raw = carry + raw
                cut = _complete_utf8(raw)
                raw, carry = raw[:cut], raw[cut:]
                if b"\0" in raw:
                    at = raw.index(b"\0")
                    raise _nul_error(self.filename, raw, line + raw.count(b"\n", 0, at))
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _utf8_error(self.filename, raw, exc, line, column) from exc
                newlines = text.count("\n")
                line += newlines
                column = len(text) - text.rfind("\n") - 1 if newlines else column + len(text)
                yield text
            if carry:
                raise _utf8_error(self.filename, carry,
                                  UnicodeDecodeError("utf-8", carry, 0, len(carry), "truncated"),
                                  line, column)

    @contextmanager
    def seekable(self) -> Iterator[BinaryIO]:
        """A seekable file of the decompressed bytes: the path or bytes themselves, or a
        temporary file the .gz is decompressed into (never memory)."""
        if not self.compressed:
            with self._open() as file:
                yield file
            return
        with tempfile.TemporaryFile() as spool:
            with self.raw() as stream:
                shutil.copyfileobj(stream, spool, READ_CHUNK)
            spool.seek(0)
            yield spool  # type: ignore[misc]


def _complete_utf8(raw: bytes) -> int:
    """Where ``raw`` stops holding whole UTF-8 characters (a character cut by a chunk's end).

    Example:
        >>> _complete_utf8("é".encode()[:1]), _complete_utf8(b"ab")
        (0, 2)
    """
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte < 0x80:
            return len(raw)
        if byte >= 0xC0:  # the lead byte of the last character: is it complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(raw) if back >= need else len(raw) - back
    return len(raw)


def _nul_error(filename: str, raw: bytes, line: int) -> IngestError:
    """NUL bytes: UTF-16 without a BOM when a third of the line is NUL, else a binary file."""
    if line <= 2 and raw.count(0) * 3 >= len(raw[:4096]):
        return IngestError(
            f"{filename} looks like UTF-16 without a byte-order mark. Save it as UTF-8 "
            "(or UTF-16 with a BOM) and upload it again.")
    return IngestError(
        f"{filename}: line {line} contains a NUL byte (\\0), which a text file cannot hold. "
        "Remove it (is this a binary file?) and upload it again.")


def _utf8_error(filename: str, raw: bytes, exc: UnicodeDecodeError, line: int, column: int
                ) -> IngestError:
    """Line and column (in characters, from 1) of the first byte that is not UTF-8.

    ``line`` and ``column`` say where ``raw`` starts (column: characters already on that line).
    """
    before = raw[:exc.start].decode("utf-8", errors="replace")
    newlines = before.count("\n")
    col = len(before) - before.rfind("\n") if newlines else column + len(before) + 1
    return IngestError(
        f"{filename}: line {line + newlines}, column {col} is not valid UTF-8 (byte "
        f"0x{raw[exc.start]:02x}). Save the file as UTF-8 and upload it again.")
