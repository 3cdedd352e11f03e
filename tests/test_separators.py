"""';'-separated CSV and Excel's ``sep=`` first line: read right, or refused saying how to
choose, never read silently as one column named 'id;text' (issue 33, class 7c)."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.corpora import documents as docs
from searchapp.errors import IngestError
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload

CELL = st.text(st.sampled_from("ab ;,\"'\n-é"), min_size=1, max_size=12).filter(
    lambda s: s.strip() and s == s.strip())


def written(rows: list[list[str]], sep: str, sep_line: bool) -> bytes:
    out = io.StringIO()
    if sep_line:
        out.write(f"sep={sep}\r\n")
    csv.writer(out, delimiter=sep, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode("utf-8")


@settings(max_examples=60, deadline=None)
@given(cells=st.lists(st.tuples(CELL, CELL), min_size=1, max_size=8),
       sep=st.sampled_from([";", ",", "|", "\t"]), sep_line=st.booleans())
def test_a_file_with_a_sep_line_or_semicolons_reads_back_as_written(cells, sep, sep_line):
    """Excel's ``sep=X`` line names any separator; a ';' header without it is sniffed."""
    if sep in ("|", "\t") and not sep_line:
        sep_line = True  # only ';' is sniffed (and the tab, by its own rule)
    if sep == "\t":
        cells = [(a, b) for a, b in cells if not any(ch in a + b for ch in '\n"')] or \
            [("x", "y")]  # TSV has no quoting
    rows = [["ref", "body"], *[list(c) for c in cells]]
    table = read_table(written(rows, sep, sep_line), "excel.csv")
    assert table.columns == ["ref", "body"]
    assert table.preview().values.tolist() == [list(c) for c in cells]
    if sep_line or sep != ",":
        assert any("sep=" in n or "';'-separated" in n for n in table.notes), table.notes


def test_an_excel_semicolon_export_uploads_and_comes_back_through_the_api_functions(app):
    raw = b"sep=;\r\nid;text;price\r\n101;Bread, white;1,20\r\n102;Milk;0,99\r\n"
    summary = upload(app, read_table(raw, "shop.csv"), "shop", text_column="text")
    assert summary.added == 2 and "sep=;" in summary.describe()
    found, missing = docs.get_many(app, "shop", ["101"])
    assert not missing and found[0].text == "Bread, white"
    assert found[0].meta == {"price": "1,20", "lang": "und"}


def test_a_semicolon_header_whose_rows_disagree_is_refused_saying_how_to_choose():
    raw = b"id;text\n1;one\n2;two; and more\n"
    with pytest.raises(IngestError, match=r"line 1\) has semicolons .* Put 'sep=;'"):
        read_table(raw, "odd.csv").preview()


def test_sep_comma_keeps_a_one_column_file_whose_name_has_a_semicolon():
    table = read_table(b"sep=,\nnotes; misc\nfirst; second\nthird\n", "notes.csv")
    assert table.columns == ["notes; misc"]
    assert table.preview().values.tolist() == [["first; second"], ["third"]]


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.sampled_from(["sep=;", '"sep=;"', "SEP=;", "sep=;\r"]))
def test_the_sep_line_is_not_a_row_and_line_numbers_stay_the_files(line):
    raw = f"{line}\nid;text\n1;a\n1;b;c\n".encode()
    with pytest.raises(IngestError, match=r"line 4 has 3 values .* a semicolon must be quoted"):
        read_table(raw, "a.csv").preview()


# ---- an empty column name: one rule, "column N" (issue 33, class 7d) -------------------------
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blank=st.sampled_from(["", " ", "  "]), place=st.integers(0, 2), data=st.data())
def test_an_empty_column_name_is_column_n_and_the_document_goes_back_in(app, blank, place, data):
    """A spreadsheet's unnamed column is stored as 'column N' (N its place), and the document
    read back (as the API gives it) is taken again as it is (the API refuses an empty key)."""
    header = ["id", "text"]
    header.insert(place, blank)
    row = {"id": "d1", "text": "hello", blank: "0"}
    raw = ",".join(header) + "\n" + ",".join(row[h] for h in header) + "\n"
    corpus = f"c{data.draw(st.integers(0, 10**9))}"
    upload(app, read_table(raw.encode(), "a.csv"), corpus, text_column="text")
    found, _ = docs.get_many(app, corpus, ["d1"])
    assert found[0].meta == {f"column {place + 1}": "0", "lang": "und"}
    again = docs.upsert(app, corpus, [docs.Doc("d1", found[0].text, found[0].meta)])
    assert again.added == 0 and docs.get_many(app, corpus, ["d1"])[0][0].meta == found[0].meta


def test_an_empty_key_in_a_json_upload_is_refused_naming_the_item(app):
    raw = b'[{"id": "a", "text": "x"}, {"id": "b", "text": "y", "": "v"}]'
    with pytest.raises(IngestError, match=r"item 2: a column name .* is empty"):
        upload(app, read_table(raw, "a.json"), "j", text_column="text")
