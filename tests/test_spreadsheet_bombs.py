"""Spreadsheets whose sheet spans far more cells than they write are refused before calamine
builds them, quickly, naming the sheet and its span; nothing stored changes.

calamine holds a sheet as one rectangle up to its farthest cell: one number at XFD1048576
in a 1.5 KB .xlsx asked for 512 GiB and aborted the process (the server, for an upload),
and a 753-byte .ods repeating a row 100,000 times took 1.35 GB. The bombs are built here
as real workbooks (zipfile and hand-written XML); the abort is run in a child process.
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.cli import main
from searchapp.errors import IngestError
from searchapp.intake.formats import sheet_extent
from searchapp.intake.ingest import read_table
from tests.document_files import xlsx_members

ROOT = Path(__file__).resolve().parents[1]
ODS_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')
MANIFEST = ('<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:'
            'opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" '
            'manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
            '</manifest:manifest>')
HEADER = [["id", "text"], [1, "hello"]]


def zipped(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def xlsx(extra: str = "", rows: list = HEADER, second: str = "") -> bytes:
    """A workbook of ``rows`` with ``extra`` XML after them (a far cell); ``second``: the
    rows of a second sheet."""
    members = xlsx_members(rows, sheets=("Data", "More") if second else ("Data",))
    first = "xl/worksheets/sheet1.xml"
    members[first] = members[first].replace("</sheetData>", extra + "</sheetData>")
    if second:
        members["xl/worksheets/sheet2.xml"] = members["xl/worksheets/sheet2.xml"].replace(
            "<sheetData>", f"<sheetData>{second}")
    return zipped(members)


def far_cell(ref: str, row: int) -> str:
    return f'<row r="{row}"><c r="{ref}"><v>1</v></c></row>'


def cell(text: str, repeat: int = 1) -> str:
    times = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
    return (f'<table:table-cell office:value-type="string"{times}><text:p>{text}</text:p>'
            "</table:table-cell>")


def ods(rows: str, name: str = "S") -> bytes:
    """An OpenDocument spreadsheet whose first table has the header id, text, then ``rows``."""
    content = (f'<?xml version="1.0"?><office:document-content {ODS_NS}><office:body>'
               f'<office:spreadsheet><table:table table:name="{name}"><table:table-row>'
               f'{cell("id")}{cell("text")}</table:table-row>{rows}</table:table>'
               "</office:spreadsheet></office:body></office:document-content>")
    return zipped({"mimetype": "application/vnd.oasis.opendocument.spreadsheet",
                   "content.xml": content, "META-INF/manifest.xml": MANIFEST})


def repeated(rows: int, columns: int, text: str = "y") -> str:
    return f'<table:table-row table:number-rows-repeated="{rows}">{cell(text, columns)}' \
           "</table:table-row>"


def texts(data: bytes, name: str) -> list[str]:
    return [cells["text"] for _, cells in read_table(data, name).rows()]


def refused(data: bytes, name: str) -> tuple[str, float]:
    started = time.perf_counter()
    with pytest.raises(IngestError) as caught:
        list(read_table(data, name).rows())
    return str(caught.value), time.perf_counter() - started


# ---- the bombs ----------------------------------------------------------------------------------
def test_one_cell_at_the_last_position_no_longer_aborts_the_process(tmp_path):
    """Run in a child under a 4 GB cap: without the check calamine aborts it (exit 134)."""
    bomb = tmp_path / "bomb.xlsx"
    bomb.write_bytes(xlsx(far_cell("XFD1048576", 1_048_576)))
    assert len(bomb.read_bytes()) < 2_000
    script = ("import sys; from searchapp.intake.ingest import read_table\n"
              "from searchapp.errors import IngestError\n"
              "try: list(read_table(open(sys.argv[1], 'rb').read(), 'bomb.xlsx').rows())\n"
              "except IngestError as e: print(e)\n")

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    done = subprocess.run([sys.executable, "-c", script, str(bomb)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120, preexec_fn=cap,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == (
        "bomb.xlsx: sheet 'Data' spans A1:XFD1048576 (17.2 billion cells), more than the "
        "4,000,000 the app reads; delete the empty rows and columns past your data, or save "
        "it as CSV.")


@pytest.mark.parametrize("extra", [
    far_cell("ZZ100000", 100_000),
    '<row r="1048576"><c><v>1</v></c></row><row><c r="D1"><v>2</v></c></row>',  # no r: row's
    '<row r="3"><c r="XFD3" t="inlineStr"><is><t>far</t></is></c></row>'
    '<row r="1048576"><c r="A1048576"><f>1+1</f></c></row>',
], ids=["ZZ100000", "implicit-positions", "inline-and-formula"])
def test_an_xlsx_reaching_far_is_refused_at_once(extra):
    message, seconds = refused(xlsx(extra), "far.xlsx")
    assert seconds < 2, f"{seconds:.2f} s"
    assert message.startswith("far.xlsx: sheet 'Data' spans A1:")
    assert "the app reads; delete the empty rows and columns past your data" in message


def test_any_sheet_of_the_workbook_is_measured(tmp_path):
    message, _ = refused(xlsx(second=far_cell("AB900000", 900_000)), "two.xlsx")
    assert message.startswith("two.xlsx: sheet 'More' spans A1:AB900000 (25.2 million cells)")


def test_an_ods_repeating_a_row_is_refused_at_once():
    message, seconds = refused(ods(repeated(100_000, 100)), "bomb.ods")
    assert seconds < 2, f"{seconds:.2f} s"
    assert message == ("bomb.ods: sheet 'S' spans A1:CV100001 (10 million cells), more than the "
                       "4,000,000 the app reads; delete the empty rows and columns past your "
                       "data, or save it as CSV.")


def test_an_ods_reaching_far_after_empty_rows_is_refused():
    empty = '<table:table-row table:number-rows-repeated="1048000"><table:table-cell ' \
            'table:number-columns-repeated="1024"/></table:table-row>'
    message, _ = refused(ods(empty + f"<table:table-row>{cell('z', 30)}</table:table-row>"),
                         "far.ods")
    assert "spans A1:AD1048002 (31.4 million cells)" in message


# ---- what is still read -------------------------------------------------------------------------
def test_ordinary_spreadsheets_are_read_as_before():
    rows = HEADER + [[n, f"row {n}"] for n in range(2, 500)]
    assert texts(xlsx(rows=rows), "a.xlsx") == ["hello"] + [f"row {n}" for n in range(2, 500)]
    # LibreOffice ends every sheet with empty rows repeated to the last one: not data
    tail = '<table:table-row table:number-rows-repeated="1048574"><table:table-cell ' \
           'table:number-columns-repeated="1024"/></table:table-row>'
    assert texts(ods(repeated(3, 2, "y") + tail), "a.ods") == ["y", "y", "y"]


def test_a_sparse_sheet_is_read_while_it_writes_a_sixteenth_of_its_area():
    """3,000 rows of two cells, the last in column ZZ: 2.1 million cells, 6,000 written."""
    rows = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}" t="inlineStr"><is>'
                   f"<t>t{r}</t></is></c></row>" for r in range(3, 3_001))
    assert len(texts(xlsx(rows + far_cell("ZZ3001", 3_001)), "s.xlsx")) == 3_000


# ---- the real ingest: refused, nothing stored changes -------------------------------------------
def corpus_documents(capsys) -> int:
    capsys.readouterr()
    assert main(["corpora", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    return sum(c["documents"] for c in listed["corpora"] if c["name"] == "sheets")


@pytest.mark.parametrize("name, bomb", [
    ("bomb.ods", lambda: ods(repeated(50_000, 100))),  # 5 million cells: read whole before
    ("bomb.xlsx", lambda: xlsx(far_cell("CV50000", 50_000))),
])
def test_searchapp_ingest_refuses_the_bomb_and_keeps_the_corpus(app, capsys, tmp_path, name,
                                                                 bomb):
    good = tmp_path / "good.xlsx"
    good.write_bytes(xlsx(rows=[*HEADER, [2, "second"]]))
    assert main(["ingest", str(good), "--corpus", "sheets", "--wait"]) == 0
    before = corpus_documents(capsys)
    assert before == 2
    path = tmp_path / name
    path.write_bytes(bomb())
    capsys.readouterr()
    started = time.perf_counter()
    code = main(["ingest", str(path), "--corpus", "sheets", "--wait"])
    seconds = time.perf_counter() - started
    err = capsys.readouterr().err
    assert code == 1 and seconds < 10, (code, f"{seconds:.1f} s", err)
    assert f"{name}: sheet " in err and "more than the 4,000,000 the app reads" in err
    assert corpus_documents(capsys) == before


# ---- any position, any repeat -------------------------------------------------------------------
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.integers(3, 400), column=st.integers(1, 400), ods_file=st.booleans())
def test_a_sheet_is_read_exactly_when_its_area_fits(monkeypatch, row, column, ods_file):
    """One far cell (or a row repeated to it) with the caps lowered to 3,000 cells, 16 x
    written: read whole when the area fits, refused naming the span when it does not."""
    monkeypatch.setattr(sheet_extent, "MAX_CELLS", 3_000)
    if ods_file:
        data, name = ods(repeated(row - 1, column, "far")), "p.ods"
        written = 3  # the header's two cells and the repeated one
    else:
        letters = sheet_extent.column_letters(column)
        extra = f'<row r="{row}"><c r="{letters}{row}" t="inlineStr"><is><t>far</t></is></c>' \
                "</row>"
        data, name, written = xlsx(extra), "p.xlsx", 5
    width = max(column, 2)
    if width * row > max(3_000, 16 * written):
        message, _ = refused(data, name)
        assert f"spans A1:{sheet_extent.column_letters(width)}{row} " in message
    else:
        read = read_table(data, name)
        assert sum(1 for _ in read.rows()) == (row - 1 if ods_file else 2)
