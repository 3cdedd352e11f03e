import gzip
import json

import pandas as pd
import pytest

from searchapp.errors import IngestError
from searchapp.intake.ingest import guess_text_column, read_table, to_documents


def docs_of(raw: bytes, name: str, **kw):
    return to_documents(read_table(raw, name), **kw)


def test_csv_with_guessed_columns_and_metadata():
    docs, skipped = docs_of(b"id,question,topic\nq1,How do I log in?,auth\nq2,,auth\n"
                            b"q3,Where is my invoice?,billing\n", "faq.csv")
    assert [d.external_id for d in docs] == ["q1", "q3"]
    assert docs[1].meta == {"topic": "billing", "lang": "en"}
    assert skipped == 1


def test_every_format_reads_the_same_documents(tmp_path):
    rows = [{"text": "first doc", "n": 1}, {"text": "second doc", "n": 2}]
    frame = pd.DataFrame(rows)
    frame.to_parquet(tmp_path / "a.parquet")
    sources = {
        "a.csv": frame.to_csv(index=False).encode(),
        "a.tsv": frame.to_csv(index=False, sep="\t").encode(),
        "a.jsonl": "\n".join(json.dumps(r) for r in rows).encode(),
        "a.json": json.dumps(rows).encode(),
        "a.txt": b"first doc\nsecond doc\n",
        "a.parquet": (tmp_path / "a.parquet").read_bytes(),
        "a.csv.gz": gzip.compress(frame.to_csv(index=False).encode()),
    }
    for name, raw in sources.items():
        docs, _ = docs_of(raw, name)
        assert [d.text for d in docs] == ["first doc", "second doc"], name


def test_bom_is_fine_and_invalid_utf8_names_the_line():
    docs, _ = docs_of("\ufefftext\nhello\n".encode(), "a.csv")
    assert docs[0].text == "hello"
    with pytest.raises(IngestError, match=r"line 3, column 5 is not valid UTF-8 \(byte 0xff\)"):
        read_table(b"text\nok\nbad \xff byte\n", "a.csv")
    with pytest.raises(IngestError, match="line 2, column 3 is not"):  # characters, not bytes
        read_table("text\néé".encode() + b"\xff\n", "a.csv")


def test_duplicate_ids_name_both_lines():
    with pytest.raises(IngestError, match=r"line 4 repeats id 'a' \(first seen at line 2\)"):
        docs_of(b"id,text\na,x\nb,y\na,z\n", "a.csv", id_column="id")


@pytest.mark.parametrize("raw,name,message", [
    (b"", "a.csv", "empty"),
    (b"   \n", "a.txt", "empty"),
    (b"text\n", "a.csv", "no rows"),
    (b'{"text": 1}\nnot json\n', "a.jsonl", "line 2 is not valid JSON"),
    (b"x", "a.docx", r"it is a Word document \(\.docx\)\. Upload CSV \(\.csv\), TSV"),
    (b"x", "a.xlsx", "an Excel workbook .*CSV UTF-8"),
    (b"x", "README", "its name has no extension"),
])
def test_unreadable_files_say_what_is_wrong(raw, name, message):
    with pytest.raises(IngestError, match=message):
        docs_of(raw, name)


def test_missing_text_column_lists_columns():
    with pytest.raises(IngestError, match="Columns in the file: a, b"):
        docs_of(b"a,b\n1,2\n", "a.csv", text_column="body")


def test_generated_ids_are_stable_and_keep_repeats():
    first, _ = docs_of(b"text\nsame\nsame\nother\n", "a.csv")
    again, _ = docs_of(b"text\nsame\nsame\nother\n", "b.csv")
    assert [d.external_id for d in first] == [d.external_id for d in again]
    assert len({d.external_id for d in first}) == 3


def test_text_column_guess_prefers_known_names_then_longest():
    assert guess_text_column(pd.DataFrame({"x": ["a"], "Body": ["b"]})) == "Body"
    assert guess_text_column(pd.DataFrame({"a": ["short"], "b": ["a much longer text"]})) == "b"


# ---- bad input: each a one-line error that says what to fix, nothing stored ------------
def test_a_gzip_bomb_stops_at_the_limit_while_streaming(monkeypatch):
    """50 MB of lines in a ~100 KB .gz, a 1 MiB limit set through the settings: refused
    once the rows are read past the limit, never holding more than about the limit."""
    import tracemalloc

    bomb = gzip.compress(b"text\n" + b"the same line again\n" * 2_500_000, compresslevel=9)
    assert len(bomb) < 200_000
    monkeypatch.setenv("SEARCHAPP_MAX_UPLOAD_BYTES", "1M")
    tracemalloc.start()
    try:
        with pytest.raises(IngestError) as caught:
            for _ in read_table(bomb, "bomb.csv.gz").rows():  # read to the end, keeping none
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value) == ("bomb.csv.gz is larger than the upload limit of 1 MiB "
                                 "(uncompressed). Split it into smaller files, or raise "
                                 "SEARCHAPP_MAX_UPLOAD_BYTES.")
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB held while reading a 1 MiB-limited file"


def test_the_limit_counts_plain_files_and_paths_too(tmp_path):
    raw = b"text\n" + b"x\n" * 600
    assert len(read_table(raw, "a.csv", max_bytes=len(raw)).frame) == 600
    with pytest.raises(IngestError, match="larger than the upload limit of 1 KiB"):
        read_table(raw, "a.csv", max_bytes=1024)
    (tmp_path / "a.txt").write_bytes(raw)
    with pytest.raises(IngestError, match="larger than the upload limit of 1000 bytes"):
        read_table(tmp_path / "a.txt", max_bytes=1000)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_a_bom_are_decoded(encoding):
    text = "id,text\n1,Café crème\n2,日本語のテキスト\n"
    # Python's utf-16 and utf-32 codecs write a BOM; utf-16-be needs it spelled out.
    raw = ("\ufeff" + text).encode(encoding) if encoding.endswith("-be") else text.encode(encoding)
    assert raw[:2] in (b"\xff\xfe", b"\xfe\xff") and raw.count(b"\xfe") == 1  # one BOM
    docs, _ = docs_of(raw, "a.csv")
    assert [(d.external_id, d.text) for d in docs] == [("1", "Café crème"),
                                                       ("2", "日本語のテキスト")]


def test_utf16_without_a_bom_and_nul_bytes_are_refused_with_the_line():
    with pytest.raises(IngestError, match="looks like UTF-16 without a byte-order mark"):
        read_table("text\nhello\n".encode("utf-16-le"), "a.csv")
    with pytest.raises(IngestError, match=r"a.csv: line 3 contains a NUL byte \(\\0\)"):
        read_table(b"text\nfine\nbad\x00byte\nfine\n", "a.csv")
    with pytest.raises(IngestError,
                       match=r"line 2 has a NUL character \(\\u0000\) in column 'text'"):
        read_table(b'{"text": "ok"}\n{"text": "bad\\u0000"}\n', "a.jsonl")


def test_a_folder_or_a_missing_path_says_what_to_give(tmp_path):
    with pytest.raises(IngestError, match=r"is a folder\. Give the path of one file \(\.csv"):
        read_table(tmp_path)
    with pytest.raises(IngestError, match=r"No file at .*nope\.csv: check the path"):
        read_table(tmp_path / "nope.csv")


@pytest.mark.parametrize("name,content,message", [
    ("folder", None, "has no file of a type we read"),
    ("missing.csv", None, "No file at"),
    ("nul.csv", b"text\nbad\x00\n", "line 2 contains a NUL byte"),
    ("bomb.txt.gz", gzip.compress(bytes(5_000_000)), "larger than the upload limit of 1 MiB"),
])
def test_cli_ingest_prints_one_line_and_stores_nothing(tmp_path, monkeypatch, capsys, name,
                                                        content, message):
    from searchapp.cli import main
    from searchapp.context import App
    from searchapp.store import repo

    monkeypatch.setenv("SEARCHAPP_MAX_UPLOAD_BYTES", "1M")
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    assert main(["ingest", str(path), "--corpus", "c"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    app = App()
    with app.db.session() as s:
        assert repo.summaries(s) == []
    app.db.dispose()


def test_the_upload_limit_setting_is_validated():
    from searchapp.config import Settings
    from searchapp.errors import ConfigError

    assert Settings.from_env({}).max_upload_bytes == 2**30
    assert Settings.from_env({"SEARCHAPP_MAX_UPLOAD_BYTES": "500M"}).max_upload_bytes == 500 * 2**20
    with pytest.raises(ConfigError, match="SEARCHAPP_MAX_UPLOAD_BYTES='lots' is not a size"):
        Settings.from_env({"SEARCHAPP_MAX_UPLOAD_BYTES": "lots"})
