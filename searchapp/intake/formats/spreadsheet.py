"""Spreadsheets (.xlsx, .ods) as tables: the first sheet's rows, each row a document.

Like a CSV file, the first row is the header and every other non-empty row is a
row of cells. The workbook is a zip, checked by ``zipsafe`` first (no bomb, no
XML entity) and by ``sheet_extent`` (no sheet spanning more cells than the app
reads: calamine builds the whole rectangle up to the farthest cell), then read
by calamine (Rust, no macros, no formulas run: a formula cell gives its saved
value). Each cell is the text the sheet shows for it, not a guessed type: a
whole number without ".0", other numbers in their shortest form, dates and times
ISO 8601, booleans TRUE/FALSE, an empty cell "". Only the first sheet is read;
the upload's summary names the others. A row's number is its row in the sheet (1
is the header's).

Example:
    >>> from datetime import date
    >>> [cell_text(v) for v in (3.0, 2.5, date(2024, 1, 2), True, "", None)]
    ['3', '2.5', '2024-01-02', 'TRUE', '', '']
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Iterator

from searchapp.errors import IngestError
from searchapp.intake.formats.base import Reading, Row, header_names
from searchapp.intake.formats.document import Limits
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.formats.sheet_extent import check_extent
from searchapp.intake.formats.zipsafe import open_zip
from searchapp.intake.source import Source

KINDS = {"xlsx": ("an Excel workbook (.xlsx)", "in Excel, File > Save As > CSV UTF-8"),
         "ods": ("an OpenDocument spreadsheet (.ods)", "File > Save As > Text CSV")}


def read_spreadsheet(source: Source, fmt: str, wanted=None) -> Reading:
    """The header and rows of a workbook's first sheet (``wanted`` is for Parquet only)."""
    words = KINDS[fmt][0]
    with source.seekable() as file:
        _check(file, source.filename, fmt)
        header, first, others = _head(file, source.filename, words)
    columns = header_names(header, source.filename, f"row {first}")
    notes = (f"{source.filename}: only its first sheet was read; also in it: "
             f"{', '.join(others)}. Save each sheet as its own file to read it.",) if others \
        else ()
    return Reading(columns, _rows(source, columns, words), notes, clean=False)


def _check(file, name: str, fmt: str) -> None:
    words, export = KINDS[fmt]
    if not zipfile.is_zipfile(file):
        raise IngestError(f"Cannot open {name} as {words}: it is not a valid .{fmt} file "
                          f"(damaged or not what its name says). Save it again, or use "
                          f"{export} to make a file we read.")
    file.seek(0)
    with open_zip(file, name, Limits(), words) as archive:
        check_extent(archive, fmt, name)  # before calamine builds the sheet's rectangle
    file.seek(0)


def _sheet(file, name: str, words: str):
    """(the workbook's first sheet, the other sheets' names)."""
    import python_calamine

    try:
        book = python_calamine.CalamineWorkbook.from_filelike(file)
        names = book.sheet_names
        if not names:
            raise IngestError(f"{name} has no sheets: there is nothing to upload.")
        return book.get_sheet_by_index(0), names[1:]
    except python_calamine.CalamineError as exc:
        raise IngestError(f"{name} cannot be read as {words} ({exc}). Open it in its "
                          "program and save it again.") from None


def _head(file, name: str, words: str) -> tuple[list[str], int, list[str]]:
    sheet, others = _sheet(file, name, words)
    for number, cells in _numbered(sheet):
        names = [c or f"column {i}" for i, c in enumerate(cells, 1)]
        return names, number, others
    raise IngestError(f"{name} is empty: its first sheet has no rows.")


def _numbered(sheet) -> Iterator[tuple[int, list[str]]]:
    """(row number in the sheet, cell texts) of each row holding something."""
    start = (sheet.start or (0, 0))[0]
    for i, values in enumerate(sheet.iter_rows()):
        cells = [cell_text(v) for v in values]
        if any(c.strip() for c in cells):
            yield start + i + 1, cells


def _rows(source: Source, columns: list[str], words: str) -> Iterator[Row]:
    with source.seekable() as file:
        sheet, _ = _sheet(file, source.filename, words)
        rows = _numbered(sheet)
        next(rows, None)  # the header
        width = len(columns)
        for number, cells in rows:
            cells = (cells + [""] * width)[:width]
            yield number, dict(zip(columns, cells, strict=True))


def cell_text(value) -> str:
    """A cell's value as the sheet shows it."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


# This module's formats (``registry``): what names them and what reads them.
register(Format("xlsx", "table", ("xlsx",), "Excel", "an Excel workbook",
                read_spreadsheet, unit="row"))
register(Format("ods", "table", ("ods",), "OpenDocument spreadsheet",
                "an OpenDocument spreadsheet", read_spreadsheet, unit="row"))
