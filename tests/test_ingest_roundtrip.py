"""What a file holds is what the readers read: generated tables written in every format.

Hypothesis makes tables of arbitrary Unicode column names and cell values (no
NUL and no lone surrogate, which no database stores and the readers refuse),
writes each the way common tools write that format (the csv module, tab-joined
lines, ``json.dumps``, pyarrow), reads it back with ``read_table`` and
compares cell by cell. Each format's own rules are the only exclusions, named
where they apply: TSV cannot hold a tab or a line break in a value; CSV and TSV
headers are read without surrounding spaces; a one-column TSV cannot tell an
empty value from a blank line; a file's first character U+FEFF is its
byte-order mark, not text; a .csv header with tabs, no comma and distinct names is
read as TSV (a tested note; a row that does not fit says so). Example counts are
bounded (``MAX_EXAMPLES`` per format) so the default run stays fast.
"""

from __future__ import annotations

import csv
import gzip
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchapp.errors import IngestError
from searchapp.intake.formats import delimited
from searchapp.intake.ingest import read_table

MAX_EXAMPLES = 60
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
# any character, with those that formats treat specially drawn often
SPECIAL = '"\',;\t\n\r \\\u2028\u2029\x0c\x85\ufeff{}[]:=<>!#'
CHARS = st.one_of(st.characters(exclude_categories=("Cs",), exclude_characters="\0"),
                  st.sampled_from(SPECIAL))
CELL = st.text(CHARS, max_size=24)
NAME = st.text(CHARS, max_size=10)


@st.composite
def tables(draw, name=NAME, cell=CELL, min_columns=1):
    """(column names, rows of cells): 1-4 distinct names, 1-6 rows; the first name does not
    start with U+FEFF (at the start of a file, that is a byte-order mark)."""
    width = draw(st.integers(min_columns, 4))
    names = draw(st.lists(name, min_size=width, max_size=width, unique=True)
                 .filter(lambda ns: not ns[0].startswith("\ufeff")))
    rows = draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=1, max_size=6))
    return names, rows


def read_back(raw: bytes, filename: str) -> tuple[list[str], list[list[str]], tuple[str, ...]]:
    table = read_table(raw, filename)
    columns = table.columns
    return columns, [[cells.get(c) for c in columns] for _, cells in table.rows()], table.notes


def stripped(name: str) -> bool:
    return name == name.strip()


def as_read(names: list[str]) -> list[str]:
    """The names as a header reads them: an empty one is 'column N' (N its place)."""
    return [n if n.strip() else f"column {i + 1}" for i, n in enumerate(names)]


def other_separator(raw: bytes) -> bool:
    """A CSV whose first line is Excel's sep=X, or a header with ';' and no comma or tab:
    read with that separator or refused, as documented (``formats.delimited``)."""
    first = raw.decode("utf-8").split("\n", 1)[0]
    return delimited._sep_line(first + "\n") is not None or \
        delimited._has_semicolons_only(first)


# ---- CSV ---------------------------------------------------------------------------------
def csv_bytes(names, rows, gz=False) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(names)
    writer.writerows(rows)
    raw = out.getvalue().encode("utf-8")
    return gzip.compress(raw) if gz else raw


@SETTINGS
@given(tables(name=NAME.filter(stripped)), st.booleans())
@example(table=(["0\t0"], [["x"]]), gz=False)  # names that repeat once split: CSV
@example(table=(["a\tb"], [["x"]]), gz=False)  # read as TSV, the row does not fit: said so
def test_csv_reads_back_every_cell_as_written(table, gz):
    names, rows = table
    raw = csv_bytes(names, rows, gz)
    guessed = len(names) == 1 and "\t" in names[0] and not set(names[0]) & set(',"')
    if other_separator(csv_bytes(names, rows)):
        return  # tests/test_separators.py
    try:
        columns, got, notes = read_back(raw, "t.csv.gz" if gz else "t.csv")
    except IngestError as exc:  # the guess below, with rows that do not fit it: said so
        assert guessed and "it was read as tab-separated" in str(exc), exc
        return
    if notes:  # the one documented guess: a header that reads as tab-separated is read
        # as TSV, and the summary says so; nothing else is
        assert guessed and "was read as tab-separated" in notes[0]
        return
    assert (columns, got, notes) == (as_read(names), rows, ())


# ---- TSV ---------------------------------------------------------------------------------
TSV_CHARS = CHARS.filter(lambda c: c not in "\t\n\r")


@SETTINGS
@given(tables(name=st.text(TSV_CHARS, max_size=10).filter(stripped),
              cell=st.text(TSV_CHARS, max_size=24)))
def test_tsv_reads_back_every_cell_as_written_quotes_included(table):
    names, rows = table
    if len(names) == 1:  # one column: an empty value (or name) is a blank line, no row
        names, rows = [names[0] or "t"], [r for r in rows if r[0]] or [["x"]]
    raw = ("\n".join("\t".join(r) for r in [names, *rows]) + "\n").encode("utf-8")
    columns, got, _ = read_back(raw, "t.tsv")
    assert (columns, got) == (as_read(names), rows)


# ---- JSON Lines and JSON -------------------------------------------------------------------
JSON_LEAF = st.one_of(CELL, st.integers(-10**30, 10**30), st.booleans(), st.none(),
                      st.floats(allow_nan=False, allow_infinity=False))
JSON_VALUE = st.recursive(JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(NAME, inner, max_size=3)), max_leaves=6)
RECORDS = st.lists(st.dictionaries(NAME, JSON_VALUE, min_size=1, max_size=4),
                   min_size=1, max_size=6)


def as_written(value, dumps) -> str:
    """The cell a JSON value must become: its text as ``dumps`` wrote it, strings unquoted,
    null empty."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return dumps(value)


def same_cell(got: str, value, dumps) -> bool:
    if isinstance(value, dict | list):  # nested: JSON text, equal as JSON (numbers as written)
        return json.loads(got) == value and got == json.dumps(value, ensure_ascii=False)
    return got == as_written(value, dumps)


@SETTINGS
@given(RECORDS, st.booleans())
def test_jsonl_reads_back_every_value_as_written(records, ascii_only):
    dumps = lambda v: json.dumps(v, ensure_ascii=ascii_only)  # noqa: E731
    raw = "\n".join(dumps(r) for r in records).encode("utf-8")
    table = read_table(raw, "t.jsonl")
    rows = [cells for _, cells in table.rows()]
    assert [list(r) for r in rows] == [list(r) for r in records]  # each row: its own keys
    for row, record in zip(rows, records, strict=True):
        for key, value in record.items():
            assert same_cell(row[key], value, dumps), (key, value, row[key])


@SETTINGS
@given(RECORDS, st.booleans(), st.booleans())
def test_json_arrays_read_back_item_by_item(records, wrapped, indent):
    doc = {"rows": records, "count": len(records)} if wrapped else records
    raw = json.dumps(doc, indent=2 if indent else None).encode("utf-8")
    rows = [cells for _, cells in read_table(raw, "t.json").rows()]
    assert [list(r) for r in rows] == [list(r) for r in records]
    for row, record in zip(rows, records, strict=True):
        for key, value in record.items():
            assert same_cell(row[key], value, json.dumps), (key, value, row[key])


# ---- TXT ---------------------------------------------------------------------------------
@SETTINGS
@given(st.lists(st.text(CHARS.filter(lambda c: c != "\n"), max_size=30)
                .map(lambda t: t.rstrip("\r")), min_size=1, max_size=8)
       .filter(lambda lines: not lines[0].startswith("\ufeff"))
       .filter(lambda lines: any(line.strip() for line in lines)))
def test_txt_is_one_row_per_newline_whatever_else_the_line_holds(lines):
    raw = "".join(line + "\n" for line in lines).encode("utf-8")
    table = read_table(raw, "t.txt")
    assert [(n, c["text"]) for n, c in table.rows()] == list(enumerate(lines, start=1))


# ---- Parquet -------------------------------------------------------------------------------
@SETTINGS
@given(tables(), st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), min_size=1,
                          max_size=6))
def test_parquet_reads_back_strings_and_integers_exactly(table, integers):
    names, rows = table
    count = min(len(rows), len(integers))
    columns = {name: [r[i] for r in rows[:count]] for i, name in enumerate(names)}
    number_column = "n" + "".join(names)  # a name none of the others has
    columns[number_column] = integers[:count]
    buf = pa.BufferOutputStream()
    pq.write_table(pa.table({k: pa.array(v, pa.string() if k != number_column else pa.int64())
                             for k, v in columns.items()}), buf)
    got_columns, got, _ = read_back(buf.getvalue().to_pybytes(), "t.parquet")
    assert got_columns == [*as_read(names), number_column]
    expected = [[*r[:len(names)], "" if n is None else str(n)]
                for r, n in zip(rows[:count], integers[:count], strict=True)]
    assert got == expected


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_generated_file_read_twice_reads_the_same(fmt):
    """``rows()`` starts again from the file's beginning each time (preview, then upload)."""
    raw = csv_bytes(["id", "text"], [["1", "a"], ["2", "b"]]) if fmt == "csv" else \
        b'{"id": 1, "text": "a"}\n{"id": 2, "text": "b"}\n'
    table = read_table(raw, f"t.{fmt}")
    assert list(table.rows()) == list(table.rows())
