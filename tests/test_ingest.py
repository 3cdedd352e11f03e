import gzip
import json

import pandas as pd
import pytest

from searchapp.errors import IngestError
from searchapp.ingest import guess_text_column, read_table, to_documents


def docs_of(raw: bytes, name: str, **kw):
    return to_documents(read_table(raw, name), **kw)


def test_csv_with_guessed_columns_and_metadata():
    docs, skipped = docs_of(b"id,question,topic\nq1,How do I log in?,auth\nq2,,auth\n"
                            b"q3,Where is my invoice?,billing\n", "faq.csv")
    assert [d.external_id for d in docs] == ["q1", "q3"]
    assert docs[1].meta == {"topic": "billing"}
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
    with pytest.raises(IngestError, match="line 3 is not valid UTF-8"):
        read_table(b"text\nok\nbad \xff byte\n", "a.csv")


def test_duplicate_ids_name_both_lines():
    with pytest.raises(IngestError, match=r"line 4 repeats id 'a' \(first seen at line 2\)"):
        docs_of(b"id,text\na,x\nb,y\na,z\n", "a.csv", id_column="id")


@pytest.mark.parametrize("raw,name,message", [
    (b"", "a.csv", "empty"),
    (b"   \n", "a.txt", "empty"),
    (b"text\n", "a.csv", "no rows"),
    (b'{"text": 1}\nnot json\n', "a.jsonl", "line 2 is not valid JSON"),
    (b"x", "a.docx", "unknown file type"),
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
