"""A spreadsheet's extent, measured from its XML before calamine builds it.

calamine turns a sheet into one rectangle from A1 (or its first cell) to the farthest
cell holding something, every position in it a value in memory. A sheet can place
that farthest cell anywhere for a few bytes: a 1.5 KB .xlsx with one number at
XFD1048576 asks for 512 GiB and aborts the process, and a 753-byte .ods whose
row is repeated 100,000 times (``table:number-rows-repeated``) with a cell repeated
100 times (``table:number-columns-repeated``) costs 1.35 GB. ``check_extent`` streams
every sheet's XML (``zipsafe.open_member``: bounded reads; the archive was already
checked for bombs and entities) through expat, and follows positions the way
calamine does:

- .xlsx: a row at its ``r`` (or the row after the last), a cell at its ``r`` (or the
  column after the last); only a cell with a value (``<v>``, ``<is>``, ``<f>``) reaches;
- .ods: rows and cells advance by their repeat counts; a cell with a value type or
  any content reaches as far as its repeats go, an empty one only moves the column.

A sheet whose area from A1 to its farthest reaching cell is more than
``max(MAX_CELLS, SPARSE_FACTOR x the cells written in it)`` (at most ``MAX_AREA``,
about 1 GB in calamine) is refused with
``SheetTooLarge`` (an ``IngestError``), naming the sheet and its span, before
calamine reads a byte of it. A genuine sheet fills most of its rectangle; one with
gaps is still read when the written cells are at least a sixteenth of it.

Example:
    >>> Extent(rows=1_048_576, columns=16_384, written=1).span()
    'A1:XFD1048576 (17.2 billion cells)'
    >>> Extent(rows=10, columns=3, written=30).too_large()
    False
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from dataclasses import dataclass
from xml.parsers import expat

from searchapp.errors import IngestError
from searchapp.intake.formats.zipsafe import CHUNK, open_member, xml_root

MAX_CELLS = 4_000_000  # cells the app reads from a sheet whatever it writes
SPARSE_FACTOR = 16  # ... or this many times the cells it writes, when more
MAX_AREA = 32_000_000  # ... but never more (calamine holds about 32 bytes a cell: 1 GB)
MAX_REPEAT = 1 << 40  # a repeat count past this is not a number a sheet holds
SHEET_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
REF = re.compile(r"([A-Za-z]{0,8})([0-9]{0,16})$")


class SheetTooLarge(IngestError):
    """A sheet spans more cells than the app reads; calamine was not given it."""


@dataclass
class Extent:
    """How far a sheet reaches (1-based, from A1) and how many cells it writes."""

    rows: int = 0
    columns: int = 0
    written: int = 0

    def reach(self, row: int, column: int, count: int = 1) -> None:
        """A cell (or ``count`` repeated ones) holding something, ending at row, column."""
        self.rows, self.columns = max(self.rows, row), max(self.columns, column)
        self.written += count

    def area(self) -> int:
        return self.rows * self.columns

    def allowed(self) -> int:
        return min(max(MAX_CELLS, SPARSE_FACTOR * self.written), MAX_AREA)

    def too_large(self) -> bool:
        return self.area() > self.allowed()

    def span(self) -> str:
        return f"A1:{column_letters(self.columns)}{self.rows} ({count_words(self.area())} cells)"


def check_extent(archive: zipfile.ZipFile, fmt: str, name: str) -> None:
    """Refuse (``SheetTooLarge``) a workbook with a sheet larger than the app reads; a
    damaged sheet is left for calamine to name."""
    sheets = _xlsx_sheets(archive, name) if fmt == "xlsx" else [("content.xml", "")]
    for member, title in sheets:
        for sheet, extent in _measure(archive, member, fmt):
            if extent.too_large():
                shown = title or sheet or member
                raise SheetTooLarge(
                    f"{name}: sheet {shown!r} spans {extent.span()}, more than the "
                    f"{extent.allowed():,} the app reads; "
                    "delete the empty rows and columns past your data, or save it as CSV.")


def _measure(archive: zipfile.ZipFile, member: str, fmt: str):
    """(sheet name, Extent) of each sheet in one XML member, streamed."""
    scan = _XlsxScan() if fmt == "xlsx" else _OdsScan()
    parser = expat.ParserCreate(namespace_separator=None if fmt == "xlsx" else " ")
    parser.StartElementHandler, parser.EndElementHandler = scan.start, scan.end
    parser.StartDoctypeDeclHandler = parser.EntityDeclHandler = _refuse_dtd
    try:
        with open_member(archive, archive.getinfo(member)) as stream:
            while chunk := stream.read(CHUNK):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except (KeyError, expat.ExpatError, zipfile.BadZipFile, OSError, EOFError, ValueError):
        pass  # damaged or missing: calamine says so in its own words
    return scan.sheets


def _refuse_dtd(*_args) -> None:
    raise ValueError("a document type declaration in a sheet")


class _XlsxScan:
    """Rows and cells of one worksheet's XML, positioned as calamine positions them (the
    tags' namespace prefix, if any, is dropped: calamine reads them by local name)."""

    def __init__(self) -> None:
        self.extent, self.row, self.column, self.cell = Extent(), 0, 0, None
        self.sheets = [("", self.extent)]
        self.names: dict[str, str] = {}
        self.refs = _Refs()
        self.end = None  # no end handler: a value only follows its cell's start

    def start(self, tag: str, attrs: dict) -> None:
        local = self.names.get(tag)
        if local is None:
            local = self.names[tag] = tag.rpartition(":")[2]
        if local == "c":
            ref = attrs.get("r")
            row, column = self.refs.get(ref) or _cell_ref(ref) if ref else (0, 0)
            self.row = row or self.row
            self.column = column or self.column + 1
            self.cell = (self.row, self.column)
        elif local == "v" or local == "is" or local == "f":
            if self.cell is not None:
                self.extent.reach(*self.cell)
                self.cell = None
        elif local == "row":
            self.row = _number(attrs.get("r"), self.row + 1)
            self.column, self.cell = 0, None


class _OdsScan:
    """Tables, rows and cells of content.xml, repeats counted as calamine expands them."""

    ROW, CELLS = f"{TABLE} table-row", (f"{TABLE} table-cell", f"{TABLE} covered-table-cell")

    def __init__(self) -> None:
        self.sheets: list[tuple[str, Extent]] = []
        self.depth = 0  # elements open inside the current cell
        self.row, self.rows_repeated, self.column = 0, 1, 0
        self.cell: tuple[int, int] | None = None  # (first column, repeats) of an open cell

    def start(self, tag: str, attrs: dict) -> None:
        if self.cell is not None:
            self.depth += 1
            self._reached()
        elif tag == f"{TABLE} table":
            self.sheets.append((attrs.get(f"{TABLE} name", ""), Extent()))
            self.row, self.rows_repeated = 0, 1
        elif tag == self.ROW and self.sheets:
            self.row += self.rows_repeated
            self.rows_repeated = _number(attrs.get(f"{TABLE} number-rows-repeated"), 1)
            self.column = 0
        elif tag in self.CELLS and self.sheets:
            repeats = _number(attrs.get(f"{TABLE} number-columns-repeated"), 1)
            self.cell, self.column = (self.column + 1, repeats), self.column + repeats
            if f"{OFFICE} value-type" in attrs:
                self._reached()

    def end(self, tag: str) -> None:
        if self.cell is not None:
            if self.depth:
                self.depth -= 1
            else:
                self.cell = None

    def _reached(self) -> None:
        if self.cell is not None and self.cell[1]:
            first, repeats = self.cell
            self.sheets[-1][1].reach(self.row + self.rows_repeated - 1, first + repeats - 1)
            self.cell = (first, 0)  # counted once: written is the elements, not the repeats


def _xlsx_sheets(archive: zipfile.ZipFile, name: str) -> list[tuple[str, str]]:
    """(member, sheet name) of every worksheet: those the workbook lists, in its order,
    then any other member under xl/worksheets/ (read by nothing, but cheap to check)."""
    found: list[tuple[str, str]] = []
    try:
        targets = {r.get("Id"): r.get("Target", "") for r in xml_root(
            archive, "xl/_rels/workbook.xml.rels", name).iter(f"{{{PKG_REL_NS}}}Relationship")}
        for sheet in xml_root(archive, "xl/workbook.xml", name).iter(f"{{{SHEET_NS}}}sheet"):
            target = targets.get(sheet.get(f"{{{REL_NS}}}id"), "")
            member = target.lstrip("/") if target.startswith("/") else \
                posixpath.normpath(posixpath.join("xl", target))
            found.append((member, sheet.get("name", "")))
    except IngestError:
        pass  # no workbook: calamine refuses the file in its own words
    listed = {member for member, _ in found}
    return found + [(m, "") for m in archive.namelist()
                    if m.startswith("xl/worksheets/") and m.endswith(".xml") and m not in listed]


class _Refs(dict):
    """A1 references parsed with the columns' letters remembered (a sheet has few columns
    and many rows): ``get(ref)`` is (row, column), or None for one to parse slowly."""

    def get(self, ref: str) -> tuple[int, int] | None:
        letters = ref.rstrip("0123456789")
        column = dict.get(self, letters)
        if column is None:
            if not letters.isalpha() or len(letters) > 8 or not letters.isascii():
                return None
            column = self[letters] = _cell_ref(letters)[1]
        digits = ref[len(letters):]
        return (int(digits), column) if digits.isdigit() and len(digits) <= 16 else None


def _number(text: str | None, default: int) -> int:
    """A repeat count or row number; a count no sheet holds is kept, to be refused."""
    if text is None or not text.strip().isdigit():
        return default
    return min(int(text.strip()[:16]), MAX_REPEAT)


def _cell_ref(ref: str | None) -> tuple[int, int]:
    """(row, column) of an A1 reference, 0 for a part it lacks.

    Example:
        >>> _cell_ref("XFD1048576"), _cell_ref("B"), _cell_ref(None)
        ((1048576, 16384), (0, 2), (0, 0))
    """
    match = REF.match((ref or "").strip())
    if not match:
        return 0, 0
    letters, digits = match.groups()
    column = 0
    for letter in letters.upper():
        column = column * 26 + ord(letter) - 64
    return int(digits or 0), column


def column_letters(column: int) -> str:
    """A column's letters (1 is A).

    Example:
        >>> column_letters(1), column_letters(27), column_letters(16_384)
        ('A', 'AA', 'XFD')
    """
    letters = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return letters or "A"


def count_words(n: int) -> str:
    """A count as people say it.

    Example:
        >>> count_words(4_000_000), count_words(17_179_869_184), count_words(12_345)
        ('4 million', '17.2 billion', '12,345')
    """
    for size, word in ((10**12, "trillion"), (10**9, "billion"), (10**6, "million")):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + f" {word}"
    return f"{n:,}"
