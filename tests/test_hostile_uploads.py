"""Hostile and unusual files through ``searchapp ingest``: stored exactly as written, or refused
in one line that names where, never a traceback, never anything half-stored.

Each case is a file and what must come of it: the documents stored (id → text
and metadata, compared exactly) or the words the one ``error:`` line must hold
(then the database must hold no corpus). The cases are grouped by the classes of
bug a review found; the generated round trips and filters are in
``test_ingest_roundtrip.py`` and ``test_filters_any_column.py``.
"""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from searchapp.cli import main
from searchapp.context import App
from searchapp.store import repo


def parquet(columns: dict, types: dict | None = None) -> bytes:
    types = types or {}
    buf = pa.BufferOutputStream()
    pq.write_table(pa.table({k: pa.array(v, types.get(k)) for k, v in columns.items()}), buf)
    return buf.getvalue().to_pybytes()


def pq_table_bytes(table: pa.Table) -> bytes:
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    return buf.getvalue().to_pybytes()


def jsonl(*rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


S = "stored"
R = "refused"
CASES = {
    # ---- TSV has no quoting -------------------------------------------------------------
    "tsv: a value starting with a quote": (
        "a.tsv", b'id\ttext\n1\t"quoted" start\n', S, {"1": ('"quoted" start', {})}),
    "tsv: an unbalanced quote does not swallow the next rows": (
        "a.tsv", b'id\ttext\n1\tone " two\n2\tthree\n3\t"four\n4\tfive\n', S,
        {"1": ('one " two', {}), "2": ("three", {}), "3": ('"four', {}), "4": ("five", {})}),
    "tsv: doubled quotes stay doubled": (
        "a.tsv", b'id\ttext\n1\tsay ""hi""\n', S, {"1": ('say ""hi""', {})}),
    "tsv: CRLF line ends": (
        "a.tsv", b"id\ttext\tk\r\n1\tone\tv\r\n", S, {"1": ("one", {"k": "v"})}),
    "tsv: a carriage return inside a value": (
        "a.tsv", b"id\ttext\tk\n1\tone\ta\rb\n", S, {"1": ("one", {"k": "a\rb"})}),
    "tsv: a tab too many": ("a.tsv", b"id\ttext\n1\tone\textra\n", R, "line 2 has 3 values"),
    "tsv: a missing value": ("a.tsv", b"id\ttext\tk\n1\tone\n", R, "line 2 has 2 values"),
    # ---- types as written ------------------------------------------------------------------
    "json: integer id 1 is '1'": ("a.json", b'[{"id": 1, "text": "a"}]', S, {"1": ("a", {})}),
    "json: a 20-digit id keeps its digits": (
        "a.json", b'[{"id": 12345678901234567891, "text": "a"}, '
                  b'{"id": 12345678901234567892, "text": "b"}]', S,
        {"12345678901234567891": ("a", {}), "12345678901234567892": ("b", {})}),
    "json: an id 1.0 stays 1.0": ("a.json", b'[{"id": 1.0, "text": "a"}]', S,
                                  {"1.0": ("a", {})}),
    "json: numbers, booleans, null as written": (
        "a.jsonl", b'{"id": "x", "text": "a", "p": 1.50, "e": -1E+3, "b": true, "n": null}\n',
        S, {"x": ("a", {"p": "1.50", "e": "-1E+3", "b": "true", "n": ""})}),
    "json: nested values as JSON text": (
        "a.jsonl", jsonl({"id": "x", "text": "a", "tags": ["é", 1.0], "o": {"k": [None]}}), S,
        {"x": ("a", {"tags": '["é", 1.0]', "o": '{"k": [null]}'})}),
    "parquet: int64 id and an int column with a null": (
        "a.parquet", parquet({"id": [1, 2], "text": ["a", "b"], "year": [2024, None]},
                             {"id": pa.int64(), "year": pa.int64()}), S,
        {"1": ("a", {"year": "2024"}), "2": ("b", {"year": ""})}),
    "parquet: uint64 beyond int64": (
        "a.parquet", parquet({"id": [2**64 - 1], "text": ["a"]}, {"id": pa.uint64()}), S,
        {str(2**64 - 1): ("a", {})}),
    "parquet: list, struct and map": (
        "a.parquet", parquet({"id": ["x"], "text": ["a"], "l": [[1, 2]], "s": [{"k": "v"}],
                              "m": [[("a", 1)]]},
                             {"m": pa.map_(pa.string(), pa.int64())}), S,
        {"x": ("a", {"l": "[1, 2]", "s": '{"k": "v"}', "m": '{"a": 1}'})}),
    "parquet: a map that repeats a key keeps both, in order": (
        "a.parquet", parquet({"id": ["x"], "text": ["a"], "m": [[("k", 1), ("k", 2)]]},
                             {"m": pa.map_(pa.string(), pa.int64())}), S,
        {"x": ("a", {"m": '[["k", 1], ["k", 2]]'})}),
    "parquet: a struct that repeats a field name": (
        "a.parquet", pq_table_bytes(pa.table({
            "text": ["a"], "s": pa.StructArray.from_arrays(
                [pa.array([1]), pa.array([2])],
                fields=[pa.field("k", pa.int64()), pa.field("k", pa.int64())])})),
        R, "Column 's' holds nested values whose type repeats a field name"),
    "parquet: empty list": (
        "a.parquet", parquet({"id": ["x"], "text": ["a"], "l": [[]]},
                             {"l": pa.list_(pa.int64())}), S, {"x": ("a", {"l": "[]"})}),
    "parquet: decimal, date, bool": (
        "a.parquet", parquet({"id": ["x"], "text": ["a"], "d": [__import__("decimal")
                                                                .Decimal("12.50")],
                              "day": [__import__("datetime").date(2024, 1, 5)], "f": [True]}),
        S, {"x": ("a", {"d": "12.50", "day": "2024-01-05", "f": "true"})}),
    "parquet: a binary column of UTF-8 text": (
        "a.parquet", parquet({"id": ["x"], "text": ["a"], "b": [b"caf\xc3\xa9"]},
                             {"b": pa.binary()}), S, {"x": ("a", {"b": "café"})}),
    "parquet: a binary column of bytes is left out (noted)": (
        "a.parquet", parquet({"id": ["x"], "text": ["a"], "img": [b"\xff\xd8\xff"]},
                             {"img": pa.binary()}), S, {"x": ("a", {})}),
    "jsonl: an integer column with a gap keeps its digits": (
        "a.jsonl", jsonl({"id": "a", "text": "x", "n": 9007199254740993}, {"id": "b", "text": "y"}),
        S, {"a": ("x", {"n": "9007199254740993"}), "b": ("y", {})}),
    # a column named id is the id: a row without one is refused (once: ids from the text)
    "json: ids when one row has none are refused, naming the item": (
        "a.json", b'[{"id": 1, "text": "x"}, {"id": 2, "text": "y"}, {"text": "z"}]', R,
        "item 3: the id column 'id' is empty"),
    "csv: 007 and 1e5 stay text": (
        "a.csv", b"id,text,code,n\n007,a,007,1e5\n", S, {"007": ("a", {"code": "007",
                                                                        "n": "1e5"})}),
    # ---- JSON, JSONL, TXT edge cases ----------------------------------------------------------
    "jsonl: U+2028 and U+2029 inside strings": (
        "a.jsonl", jsonl({"id": "x", "text": "a\u2028b\u2029c"}), S,
        {"x": ("a\u2028b\u2029c", {})}),
    "jsonl: NEL and form feed inside strings": (
        "a.jsonl", jsonl({"id": "x", "text": "a\x85b\x0cc"}), S, {"x": ("a\x85b\x0cc", {})}),
    "jsonl: a repeated key": ("a.jsonl", b'{"text": "a", "text": "b"}\n', R,
                              "line 1 names the key 'text' twice"),
    "json: a repeated key, nested": (
        "a.json", b'[{"text": "a", "m": {"k": 1, "k": 2}}]', R, "names the key 'k' twice"),
    "json: a repeated key in the top object": (
        "a.json", b'{"rows": [], "rows": [{"text": "a"}]}', R, "names the key 'rows' twice"),
    "json: nested 10,000 deep": ("a.json", b"[" * 10_000 + b"]" * 10_000, R,
                                 "nests values more than 100 levels"),
    "jsonl: nested 150 deep": ("a.jsonl", b'{"text": "a", "d": ' + b"[" * 150 + b"]" * 150
                               + b"}\n", R, "nests values more than 100 levels"),
    "jsonl: a lone surrogate escape": ("a.jsonl", b'{"text": "\\udc80"}\n', R,
                                       "unpaired surrogate"),
    "jsonl: a NUL escape": ("a.jsonl", b'{"text": "a\\u0000"}\n', R, "NUL character"),
    "json: two arrays in the top object": (
        "a.json", b'{"a": [{"text": "x"}], "b": [{"text": "y"}]}', R, "more than one array"),
    "json: text after the array": ("a.json", b'[{"text": "x"}] {}', R, "more JSON after"),
    "json: an array never closed": ("a.json", b'[{"text": "x"}, ', R, "not valid JSON"),
    "txt: form feed and U+2028 stay in the line": (
        "a.txt", "a\x0cb\u2028c\nd\n".encode(), S, None),
    "txt: CRLF": ("a.txt", b"one\r\ntwo\r\n", S, None),
    "csv: a header twice once trimmed": ("a.csv", b"id,text, text\n1,a,b\n", R,
                                         "names column 'text' twice"),
    "csv: a header twice": ("a.csv", b"text,text\na,b\n", R, "names column 'text' twice"),
    "csv: two empty header names are column 1 and column 3": (
        "a.csv", b",text,\n1,a,2\n", S,
        {"ca978112ca1bbdca": ("a", {"column 1": "1", "column 3": "2"})}),
    "csv: a quote never closed": ("a.csv", b'id,text\n1,"a\n2,b\n', R, "never closed"),
    "csv: text after a closing quote": ("a.csv", b'id,text\n1,"a"b\n', R,
                                        "right after a closing quote"),
    "csv: a row too long": ("a.csv", b"id,text\n1,a,b\n", R, "line 2 has 3 values"),
    "csv: a quoted multi-line value is one row": (
        "a.csv", b'id,text\n1,"line one\nline two"\n2,b\n', S,
        {"1": ("line one\nline two", {}), "2": ("b", {})}),
    # ---- size limits -------------------------------------------------------------------------
    "csv: an id of 501 characters": ("a.csv", b"id,text\n" + b"i" * 501 + b",a\n", R,
                                     "has 501 characters; ids may have at most 500"),
    "json: an id of 5 MB": ("a.json", json.dumps([{"id": "x" * 5_000_000, "text": "a"}])
                            .encode(), R, "has 5,000,000 characters"),
    "csv: a metadata value of 10,001 characters": (
        "a.csv", b"id,text,k\n1,a," + b"m" * 10_001 + b"\n", R,
        "metadata values may have at most 10,000"),
    "jsonl: a column name of 1,001 characters": (
        "a.jsonl", jsonl({"text": "a", "k" * 1001: "v"}), R, "names may have at most 1,000"),
    "csv: a 20 MB line": ("a.csv", b"id,text\n1," + b"w" * 20_000_000 + b"\n", R,
                          "line 2 is longer than 16 MiB"),
    "csv.gz: a 20 MB value in quotes over many lines": (
        "a.csv.gz", gzip.compress(b'id,text\n1,"' + b"word\n" * 4_000_000 + b'"\n'), R,
        "longer than 131,072 characters"),
}


def run(app_dir, tmp_path, capsys, name: str, raw: bytes) -> tuple[int, str, str]:
    path = tmp_path / name
    path.write_bytes(raw)
    code = main(["ingest", str(path), "--corpus", "c"])
    out = capsys.readouterr()
    return code, out.out, out.err


def written(meta: dict) -> dict:
    """A document's metadata as the file wrote it: without the language the app detected
    (``lang``, ``langs``; searchapp.base.language), which no file column gave."""
    return {k: v for k, v in meta.items() if k not in ("lang", "langs")}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_file_is_stored_as_written_or_refused_in_one_line(data_dir, tmp_path, capsys,
                                                                     case):
    name, raw, outcome, expected = CASES[case]
    code, out, err = run(data_dir, tmp_path, capsys, name, raw)
    assert "Traceback" not in out + err
    app = App()
    try:
        with app.db.session() as s:
            names = repo.corpus_names(s)
            docs = {}
            if names:
                cid = repo.corpus_state(s, "c").id
                docs = {d.external_id: (d.text, written(d.meta)) for d in
                        repo.documents_by_id(s, repo.document_texts(s, cid)).values()}
    finally:
        app.db.dispose()
    if outcome == R:
        assert code == 1 and err.count("\n") == 1 and err.startswith("error: "), err
        assert expected in err, err
        assert names == []  # nothing half-stored
        return
    assert code == 0, err
    if expected is None and name.endswith(".txt"):  # ids from the text: compare the texts
        lines = raw.decode().replace("\r\n", "\n").split("\n")[:-1]
        assert sorted(t for t, _ in docs.values()) == sorted(line.strip() for line in lines)
    elif expected is None:  # the id column has a gap: ids from the text, ids kept as metadata
        assert sorted(m.get("id", "-") for _, m in docs.values()) == ["-", "1", "2"]
    else:
        assert docs == expected
