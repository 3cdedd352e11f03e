"""CSV and TSV, a line at a time.

CSV is read by the csv module in strict mode: a quoted value may hold commas,
quotes (doubled) and line breaks, and everything else must be well formed; a
quote left open, text after a closing quote, or a value longer than the
module's field limit is an error naming the line. TSV has no quoting: a field
is exactly what lies between two tabs, so a value that starts with a quote
keeps it, and one line is one row. In both, a row with more or fewer values
than the header is refused (nothing is merged into a neighbour or padded), and
blank lines are not rows. A file named .csv whose header line has tabs and no
comma or quote and distinct column names is read as TSV (a TSV saved as .csv is
common): the upload's summary says so, and a row that does not fit says how the file
was read and how to have it read as CSV.

Separators other than the comma: Excel's first line ``sep=;`` (any one character,
quoted or not) names the file's separator; that line is skipped and the file
read with it, a note saying so. A .csv whose header has semicolons and no comma
or tab is read as ';'-separated, with a note, when its first rows have as many
';'-separated values as the header; when they do not, it is refused with a
message that says how to choose (a ``sep=`` first line). Never is such a file
read silently as one column.

Example:
    >>> from searchapp.intake.source import Source
    >>> reading = read_delimited(Source(b'id,text\\n1,"a, b"\\n', "a.csv", 100), "csv")
    >>> reading.columns, list(reading.rows)
    (['id', 'text'], [(2, {'id': '1', 'text': 'a, b'})])
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator

from searchapp.errors import IngestError
from searchapp.intake.formats.base import Reading, Row, header_names
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.source import Source

SEP_LINE = re.compile(r'^"?sep=(.)"?\r?\n?$', re.IGNORECASE)  # Excel's first line: sep=;
SNIFF_ROWS = 20  # rows read ahead to decide that a header with ';' is a ';'-separated file
SEPARATOR_NAMES = {",": "a comma", ";": "a semicolon", "\t": "a tab", "|": "a bar"}


def read_delimited(source: Source, fmt: str, wanted=None) -> Reading:
    """The header and the rows of a CSV or TSV file (``wanted`` is for Parquet only)."""
    lines = source.lines()
    number, first = next(((n, line) for n, line in lines if line.strip("\r\n")), (0, ""))
    if not number:
        raise IngestError(f"{source.filename} is empty: there is nothing to upload.")
    sep = _sep_line(first)
    if sep is not None:
        return _read_named_separator(sep, lines, source.filename)
    sniffed = fmt == "csv" and _looks_tab_separated(first)
    if fmt == "csv" and not sniffed and _has_semicolons_only(first):
        return _read_semicolons(number, first, lines, source.filename)
    if fmt == "tsv" or sniffed:
        columns = header_names(_tsv_fields(first), source.filename, f"line {number}")
        note = (f"{source.filename} was read as tab-separated (TSV): its header line has tabs "
                "and no comma.",) if sniffed else ()
        how = " (it was read as tab-separated: its header line has tabs and no comma; " \
            "quote the header to have it read as CSV)" if sniffed else ""
        return Reading(columns, _tsv_rows(lines, columns, source.filename, how), note)
    return _csv_reading(number, first, lines, source.filename)


def _sep_line(first: str) -> str | None:
    """The separator an Excel ``sep=X`` first line names, else None.

    Example:
        >>> _sep_line("sep=;\\r\\n"), _sep_line('"sep=|"\\n'), _sep_line("id,text\\n")
        (';', '|', None)
    """
    found = SEP_LINE.match(first)
    return found.group(1) if found else None


def _separator_name(sep: str) -> str:
    return SEPARATOR_NAMES.get(sep, repr(sep))


def _read_named_separator(sep: str, lines: Iterator[tuple[int, str]], filename: str
                          ) -> Reading:
    """The rest of a file whose first line is ``sep=X``: read with X (a tab: as TSV)."""
    number, first = next(((n, line) for n, line in lines if line.strip("\r\n")), (0, ""))
    if not number:
        raise IngestError(f"{filename} has only its 'sep={sep}' line: there is nothing to "
                          "upload.")
    note = (f"{filename} was read with {_separator_name(sep)} between values, as its first "
            f"line (sep={sep}) says; that line is not a row.",)
    if sep == "\t":
        columns = header_names(_tsv_fields(first), filename, f"line {number}")
        return Reading(columns, _tsv_rows(lines, columns, filename), note)
    if sep in "\r\n\"" or (sep.isspace() and sep != " "):
        raise IngestError(f"{filename}: its first line names {sep!r} as the separator, which "
                          "cannot separate values. Name another (sep=; or sep=,).")
    return _csv_reading(number, first, lines, filename, sep, note)


def _has_semicolons_only(first: str) -> bool:
    """A header with semicolons and no comma or tab (read as one column, it would be one
    column named 'id;text')."""
    return ";" in first and "," not in first and "\t" not in first


def _read_semicolons(number: int, first: str, lines: Iterator[tuple[int, str]],
                     filename: str) -> Reading:
    """A .csv whose header has ';' and no ',': ';'-separated when its first rows agree."""
    ahead = list(itertools.islice(lines, SNIFF_ROWS))
    rest = itertools.chain(ahead, lines)
    if _rows_agree(first, [text for _, text in ahead], complete=len(ahead) < SNIFF_ROWS):
        note = (f"{filename} was read as ';'-separated: its header has semicolons and no "
                "comma, and its rows have as many ';'-separated values. Put 'sep=,' on a "
                "first line of its own to have it read as one comma-separated column.",)
        return _csv_reading(number, first, rest, filename, ";", note)
    raise IngestError(
        f"{filename}: its header (line {number}) has semicolons and no comma, but its rows "
        "do not all have as many ';'-separated values, so it is neither clearly ';'- nor "
        "','-separated. Put 'sep=;' (or 'sep=,') on a first line of its own to say which, "
        "or save it with commas.")


def _rows_agree(first: str, ahead: list[str], complete: bool) -> bool:
    """Whether the lines after a header have as many ';'-separated values as it does (the
    last row is left out where it may continue past the lines read ahead).

    Example:
        >>> _rows_agree("id;text\\n", ["1;a\\n", "2;b\\n"], True)
        True
        >>> _rows_agree("id;text\\n", ["1;a;b\\n"], True)
        False
    """
    try:
        rows = [r for r in csv.reader([first, *ahead], delimiter=";") if r]
    except csv.Error:
        return False
    width = len(rows[0])
    body = rows[1:] if complete else rows[1:-1]
    return width > 1 and all(len(r) == width for r in body)


def _looks_tab_separated(first: str) -> bool:
    """A .csv header that is a TSV header: tabs, no comma or quote, distinct names (a
    one-column CSV whose name holds a tab twice over the same text stays CSV)."""
    if "\t" not in first or "," in first or '"' in first:
        return False
    names = [n.strip() for n in _tsv_fields(first)]
    return len(set(names)) == len(names)


# ---- TSV ---------------------------------------------------------------------------
def _tsv_fields(line: str) -> list[str]:
    """A TSV line's fields: the line without its "\\n" (and a "\\r" before it), split at tabs."""
    line = line[:-1] if line.endswith("\n") else line
    line = line[:-1] if line.endswith("\r") else line
    return line.split("\t")


def _tsv_rows(lines: Iterator[tuple[int, str]], columns: list[str], filename: str,
              how: str = "") -> Iterator[Row]:
    width = len(columns)
    for number, line in lines:
        fields = _tsv_fields(line)
        if fields == [""]:
            continue  # a blank line
        if len(fields) != width:
            error = _width_error(filename, number, len(fields), width, "a tab")
            raise IngestError(str(error) + how) if how else error
        yield number, dict(zip(columns, fields, strict=True))


# ---- CSV ---------------------------------------------------------------------------
class _Lines:
    """The lines handed to the csv module, remembering the number of the last one read."""

    def __init__(self, first: tuple[int, str], rest: Iterator[tuple[int, str]]):
        self.first, self.rest, self.number = first, rest, first[0] - 1

    def __iter__(self) -> Iterator[str]:
        self.number, text = self.first
        yield text
        for number, text in self.rest:
            self.number = number
            yield text


def _csv_reading(number: int, first: str, lines: Iterator[tuple[int, str]], filename: str,
                 sep: str = ",", notes: tuple[str, ...] = ()) -> Reading:
    source = _Lines((number, first), lines)
    reader = csv.reader(source, strict=True, delimiter=sep)
    start, header = _next_csv_row(reader, source, filename)
    if header is None:
        raise IngestError(f"{filename} is empty: there is nothing to upload.")
    columns = header_names(header, filename, f"line {start}")
    return Reading(columns, _csv_rows(reader, source, columns, filename, sep), notes)


def _csv_rows(reader, source: _Lines, columns: list[str], filename: str, sep: str = ","
              ) -> Iterator[Row]:
    width = len(columns)
    while True:
        start, fields = _next_csv_row(reader, source, filename)
        if fields is None:
            return
        if len(fields) != width:
            raise _width_error(filename, start, len(fields), width, _separator_name(sep))
        yield start, dict(zip(columns, fields, strict=True))


def _next_csv_row(reader, source: _Lines, filename: str) -> tuple[int, list[str] | None]:
    """(the line the next non-blank row starts on, its fields), or (…, None) at the end."""
    while True:
        start = source.number + 1
        try:
            fields = next(reader)
        except StopIteration:
            return start, None
        except csv.Error as exc:
            raise _csv_error(filename, start, source.number, str(exc)) from None
        if fields:  # [] is a blank line
            return start, fields


def _csv_error(filename: str, start: int, line: int, message: str) -> IngestError:
    """The csv module's complaint in words that say what to fix."""
    if "field larger than field limit" in message:
        limit = csv.field_size_limit()
        return IngestError(
            f"{filename}: line {start} has a value longer than {limit:,} characters (a text may "
            "have at most 100,000). Is a quote (\") left open above it?")
    if "unexpected end of data" in message:
        return IngestError(
            f"{filename}: the quoted value that starts on line {start} is never closed: a quote "
            "(\") is missing. Close it, or double a quote that is part of the text (\"\").")
    if "expected after" in message:
        return IngestError(
            f"{filename}: line {line} has text right after a closing quote. A quote inside a "
            "quoted value must be doubled (\"\"), and a quoted value ends at a comma or at the "
            "end of the line.")
    if "new-line character seen in unquoted field" in message:
        return IngestError(
            f"{filename}: line {line} has a carriage return (\\r) inside an unquoted value. "
            "Quote that value, or save the file with ordinary line endings.")
    return IngestError(f"{filename}: line {line} is not valid CSV ({message}).")


def _width_error(filename: str, line: int, got: int, width: int, separator: str
                 ) -> IngestError:
    if got > width:
        hint = {"a tab": "a value cannot hold a tab in a TSV file",
                "a comma": "a value holding a comma must be quoted (\"a, b\")"}.get(
            separator, f"a value holding {separator} must be quoted")
        return IngestError(
            f"{filename}: line {line} has {got} values but the header has {width} columns; "
            f"{hint}.")
    return IngestError(
        f"{filename}: line {line} has {got} value{'s' if got != 1 else ''} but the header has "
        f"{width} columns: is a value missing, or a row broken over two lines?")


# This module's formats (``registry``): what names them and what reads them.
register(Format("csv", "table", ("csv",), "CSV", "a CSV file", read_delimited, unit="line"))
register(Format("tsv", "table", ("tsv", "tab"), "TSV", "a TSV file", read_delimited, unit="line"))
