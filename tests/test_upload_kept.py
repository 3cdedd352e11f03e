"""What a user uploads is stored as written, updated by a re-upload, or refused with a reason.

One group of tests per class of bug a review found: a re-upload must update
metadata (and say so); ids and values keep the file's own text (no float on the
way); TSV has no quoting; JSON, JSONL and TXT edge cases; cell size limits; a
bad row anywhere stores nothing; memory stays flat while a file streams in.
"""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import select

from searchapp.errors import IngestError, InvalidParameterError
from searchapp.intake.ingest import read_table, to_documents
from searchapp.intake.table_upload import upload
from searchapp.search.filters import parse_condition, where_sql
from searchapp.search.service import search
from searchapp.store import fulltext, repo
from searchapp.store.schema import Document

MODEL = "all-MiniLM-L6-v2"


def up(app, raw: bytes, name: str, corpus: str = "c", **kw):
    return upload(app, read_table(raw, name), corpus, **kw)


def stored(app, corpus: str = "c") -> dict[str, tuple[int, str, dict]]:
    """{external id: (row id, text, metadata)} as the database holds them."""
    with app.db.session() as s:
        cid = repo.corpus_state(s, corpus).id
        rows = s.execute(select(Document.external_id, Document.id, Document.text, Document.meta)
                         .where(Document.corpus_id == cid)).all()
    return {e: (i, t, m) for e, i, t, m in rows}


def matching(app, corpus: str, condition: str) -> set[str]:
    """External ids of the documents a filter passes (the SQL the searches use)."""
    docs = stored(app, corpus)
    by_id = {i: e for e, (i, _, _) in docs.items()}
    with app.db.session() as s:
        cid = repo.corpus_state(s, corpus).id
    with app.db.reader() as conn:
        flt = where_sql([parse_condition(condition)], conn.dialect.name)
        return {by_id[i] for i in fulltext.all_matching_ids(conn, cid, flt)}


def with_vectors(app, corpus: str = "c") -> None:
    """Give every document a vector (no encoder): searches open the corpus."""
    model = app.model_ref(MODEL)
    with app.db.session() as s:
        c = repo.corpus_state(s, corpus)
        ids = sorted(i for i, _, _ in stored(app, corpus).values())
        vectors = np.random.default_rng(0).normal(size=(len(ids), model.dimension))
        repo.save_embeddings(s, c.id, model.id, ids, vectors.astype(np.float32))


# ---- a re-upload updates ---------------------------------------------------------------
FIRST = b"id,text,colour\na,Red apples are sweet,red\nb,Blue skies today,blue\n" \
        b"c,Green tea is hot,green\n"
SECOND = (b'[{"id": "a", "text": "Red apples are sweet", "colour": "crimson"},'
          b' {"id": "b", "text": "Blue skies today", "colour": "blue", "size": "L"},'
          b' {"id": "c", "text": "Green tea is cold", "colour": "green"}]')


def test_a_reupload_updates_metadata_in_place_and_says_how_many_changed(app):
    up(app, FIRST, "first.csv")
    with_vectors(app)
    before = stored(app)
    with app.db.session() as s:
        generation = repo.corpus_state(s, "c").generation
    summary = up(app, SECOND, "second.json")
    after = stored(app)
    assert (summary.added, summary.updated, summary.meta_updated, summary.unchanged) == \
        (0, 1, 2, 0)
    assert summary.describe() == ("Corpus 'c': 0 added, 3 updated (1 with a new text, 2 with "
                                  "new metadata only).")
    assert after["a"] == (before["a"][0], "Red apples are sweet",
                          {"colour": "crimson", "lang": "en"})
    assert after["b"] == (before["b"][0], "Blue skies today", {"colour": "blue", "size": "L",
                                                      "lang": "en"})
    assert after["c"][0] != before["c"][0] and after["c"][1] == "Green tea is cold"
    with app.db.session() as s:
        state = repo.corpus_state(s, "c")
        model = app.model_ref(MODEL)
        embedded = repo.count_embedded(s, state.id, model.id)
    assert state.generation > generation and "size" in state.meta_columns
    assert embedded == 2  # a and b kept their vectors; only the new text waits for one
    assert matching(app, "c", "colour=crimson") == {"a"}
    assert matching(app, "c", "colour=red") == set()
    assert matching(app, "c", "size=L") == {"b"}
    again = up(app, SECOND, "second.json")
    assert (again.added, again.updated, again.meta_updated, again.unchanged) == (0, 0, 0, 3)
    with app.db.session() as s:
        assert repo.corpus_state(s, "c").generation == state.generation


def test_searches_filter_on_a_column_that_only_a_later_upload_brought(app):
    up(app, FIRST, "first.csv")
    with_vectors(app)
    with pytest.raises(InvalidParameterError, match="has no metadata column 'size'"):
        search(app, "c", "skies", mode="lexical", where=["size=L"])
    up(app, SECOND, "second.json")
    hits = search(app, "c", "skies", mode="lexical", where=["size=L"])
    assert [(h.id, h.meta) for h in hits] == [("b", {"colour": "blue", "size": "L", "lang": "en"})]
    assert [h.meta for h in search(app, "c", "apples", mode="lexical")] == \
        [{"colour": "crimson", "lang": "en"}]


def test_the_cli_says_how_many_rows_changed(app, tmp_path, capsys):
    from searchapp.cli import main

    (tmp_path / "a.csv").write_bytes(FIRST)
    (tmp_path / "b.json").write_bytes(SECOND)
    assert main(["ingest", str(tmp_path / "a.csv"), "--corpus", "c"]) == 0
    capsys.readouterr()
    assert main(["ingest", str(tmp_path / "b.json"), "--corpus", "c"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == \
        "Corpus 'c': 0 added, 3 updated (1 with a new text, 2 with new metadata only)."


# ---- types: as the file wrote them ---------------------------------------------------------
def test_json_and_parquet_ids_keep_their_digits_and_match_across_formats(app):
    big = 2**63 + 1  # beyond float64's exact integers: 2**63 + 1 and 2**63 + 2 are one float
    rows = [{"id": 1, "text": "one"}, {"id": big, "text": "big one"},
            {"id": big + 1, "text": "big two"}]
    summary = up(app, json.dumps(rows).encode(), "a.json")
    assert summary.added == 3
    assert set(stored(app)) == {"1", str(big), str(big + 1)}
    table = pa.table({"id": pa.array([1, 2**62 + 1], pa.int64()), "text": ["one", "x"]})
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    again = up(app, buf.getvalue().to_pybytes(), "b.parquet")
    assert (again.added, again.unchanged) == (1, 1)  # id 1 is the same document
    assert str(2**62 + 1) in stored(app)
    csv_again = up(app, b"id,text\n1,one\n", "c.csv")
    assert csv_again.unchanged == 1


def test_integers_with_gaps_and_nested_values_are_stored_as_written(app):
    table = pa.table({
        "text": ["a", "b", "c"],
        "year": pa.array([2024, None, 2025], pa.int64()),
        "price": pa.array([1.5, 0.1, None], pa.float64()),
        "tags": pa.array([[1, 2], [], None], pa.list_(pa.int64())),
        "pos": pa.array([{"x": 1, "y": "n"}, None, {"x": 2, "y": "é"}],
                        pa.struct([("x", pa.int64()), ("y", pa.string())])),
        "attrs": pa.array([[("k", 1)], [], [("a", 2), ("b", 3)]], pa.map_(pa.string(), pa.int64())),
        "flag": [True, False, None],
    })
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    up(app, buf.getvalue().to_pybytes(), "a.parquet", id_column="")
    meta = {t: m for _, t, m in stored(app).values()}
    assert meta["a"] == {"year": "2024", "price": "1.5", "tags": "[1, 2]",
                         "pos": '{"x": 1, "y": "n"}', "attrs": '{"k": 1}', "flag": "true",
                         "lang": "und"}
    assert meta["b"] == {"year": "", "price": "0.1", "tags": "[]", "pos": "", "attrs": "{}",
                         "flag": "false", "lang": "und"}
    assert meta["c"]["attrs"] == '{"a": 2, "b": 3}' and meta["c"]["pos"] == '{"x": 2, "y": "é"}'
    jsonl = b'{"text": "j", "n": 1.50, "big": 123456789012345678901234567890, "e": 1E+3}\n'
    up(app, jsonl, "a.jsonl", corpus="j")
    [(_, _, jmeta)] = stored(app, "j").values()
    assert jmeta == {"n": "1.50", "big": "123456789012345678901234567890", "e": "1E+3",
                     "lang": "und"}
    assert matching(app, "c", "year=2024") == {next(e for e, v in stored(app).items()
                                                    if v[1] == "a")}


def test_a_binary_column_is_text_when_it_is_utf8_and_left_out_with_a_note_when_not(app):
    table = pa.table({"text": ["a", "b"], "label": pa.array([b"caf\xc3\xa9", b"x"], pa.binary()),
                      "thumb": pa.array([b"\x89PNG\r\n", b"\xff\xd8"], pa.binary())})
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    summary = up(app, buf.getvalue().to_pybytes(), "a.parquet", id_column="")
    assert {t: m for _, t, m in stored(app).values()} == {"a": {"label": "café", "lang": "und"},
                                                          "b": {"label": "x", "lang": "und"}}
    assert summary.describe().endswith(
        "Column 'thumb' holds binary data (not text) and was not kept.")


def test_a_nul_in_a_parquet_string_is_refused_naming_the_row_and_column(app):
    """Arrow strings may hold NUL (no text file can): the one reader whose cells the builder
    checks character by character."""
    table = pa.table({"text": ["fine", "also fine"], "note": ["ok", "bad\x00byte"]})
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    with pytest.raises(IngestError, match=r"row 2, column 'note', contains a NUL character"):
        up(app, buf.getvalue().to_pybytes(), "a.parquet")


# ---- TSV: no quoting ------------------------------------------------------------------------
def test_tsv_keeps_quotes_and_never_merges_rows(app):
    raw = (b'id\ttext\n1\t"Quoted" at the start\n2\tAn unbalanced " quote\n'
           b'3\t"starts quoted but never closes\n4\tthe last row\n')
    summary = up(app, raw, "a.tsv")
    assert summary.added == 4
    assert {e: t for e, (_, t, _) in stored(app).items()} == {
        "1": '"Quoted" at the start', "2": 'An unbalanced " quote',
        "3": '"starts quoted but never closes', "4": "the last row"}


def test_a_tsv_row_with_a_tab_too_many_is_refused_naming_the_line(app):
    with pytest.raises(IngestError, match=r"a.tsv: line 3 has 3 values but the header has 2"):
        up(app, b"id\ttext\n1\tone\n2\ttwo\textra\n", "a.tsv")


# ---- edge cases of the formats ----------------------------------------------------------------
def test_jsonl_with_a_line_separator_inside_a_string_is_one_record(app):
    raw = '{"id": "a", "text": "first\u2028second"}\n{"id": "b", "text": "x\u2029y"}\n'
    up(app, raw.encode(), "a.jsonl")
    assert {e: t for e, (_, t, _) in stored(app).items()} == {"a": "first\u2028second",
                                                              "b": "x\u2029y"}


def test_txt_lines_end_at_newlines_only_so_errors_name_the_right_line():
    raw = "one\u2028still one\x0cand still\nline two\nline three " + "x" * 100_001 + "\n"
    table = read_table(raw.encode(), "a.txt")
    assert [n for n, _ in table.rows()] == [1, 2, 3]
    with pytest.raises(IngestError, match=r"^line 3: the text \(column 'text'\) has 100,012"):
        to_documents(table)


@pytest.mark.parametrize("raw,name,message", [
    (b'{"text": "a", "text": "b"}\n', "a.jsonl", "line 1 names the key 'text' twice"),
    (b'[{"text": "a"}, {"text": "b", "n": {"k": 1, "k": 2}}]', "a.json",
     r"item 2 \(line 1\) names the key 'k' twice"),
    (b"id,text, text\n1,a,b\n", "a.csv", r"names column 'text' twice \(columns 2 and 3, once"),
    (b"text\ttext\na\tb\n", "a.tsv", r"names column 'text' twice \(columns 1 and 2\)"),
    (b'{"a":' * 5000 + b"1" + b"}" * 5000, "a.jsonl", "nests values more than 100 levels"),
    (b"[" * 200_000, "a.json", "nests values more than 100 levels"),
    (b'{"text": "\\ud800"}\n', "a.jsonl", r"unpaired surrogate \(\\ud800\)"),
    (b'[{"text": "a"}] [1]', "a.json", "line 1 has more JSON after the document's end"),
    (b'{"a": [{"text": "x"}], "b": [{"text": "y"}]}', "a.json", "more than one array"),
    (b'id,text\n1,"never closed\n2,b\n', "a.csv", "starts on line 2 is never closed"),
    (b"id,text\n1,a\n2\n", "a.csv", "line 3 has 1 value but the header has 2 columns"),
])
def test_malformed_files_are_one_line_errors_naming_where(app, raw, name, message):
    with pytest.raises(IngestError, match=message):
        up(app, raw, name)
    with app.db.session() as s:
        assert repo.summaries(s) == []


# ---- size limits: ids and metadata like texts ---------------------------------------------
@pytest.mark.parametrize("row,message", [
    (f"{'i' * 501},text,x", r"line 3: the id \(column 'id'\) has 501 characters; ids may have "
                            r"at most 500"),
    (f"2,text,{'m' * 10_001}", r"line 3: column 'note' has 10,001 characters; metadata values "
                               r"may have at most 10,000"),
    (f"2,{'t' * 100_001},x", r"line 3: the text \(column 'text'\) has 100,001 characters"),
])
def test_cells_over_their_limit_are_refused_naming_the_line_and_nothing_is_stored(app, row,
                                                                                  message):
    raw = f"id,text,note\n1,fine,ok\n{row}\n".encode()
    with pytest.raises(IngestError, match=message):
        up(app, raw, "a.csv")
    with app.db.session() as s:
        assert repo.summaries(s) == []


def test_a_five_megabyte_id_is_refused_from_json_too(app):
    raw = json.dumps([{"id": "x" * 5_000_000, "text": "t"}]).encode()
    with pytest.raises(IngestError, match=r"item 1: the id .* has 5,000,000 characters"):
        up(app, raw, "a.json")


def test_a_bad_row_after_many_batches_stores_nothing(app):
    rows = "".join(f"{i},document number {i}\n" for i in range(12_000))
    raw = f"id,text\n{rows}5,a repeat at the end\n".encode()
    with pytest.raises(IngestError, match=r"line 12002 repeats id '5' \(first seen at line 7\)"):
        up(app, raw, "a.csv", id_column="id")
    with app.db.session() as s:
        assert repo.summaries(s) == []
        assert s.scalar(select(Document.id).limit(1)) is None


def test_an_id_column_by_its_name_that_repeats_late_is_an_error_naming_both_lines(app):
    """Past the rows read on opening, a column named id repeats: an error naming both lines
    and what to choose instead, nothing stored (it once switched to ids from the text)."""
    rows = "".join(f"{i},text {i}\n" for i in range(1_500))  # past the rows read on opening
    with pytest.raises(IngestError, match=r"line 1502 repeats id '7' \(first seen at line 9\)"
                                          r".*choose no id column"):
        up(app, f"id,text\n{rows} 7,text 7 again\n".encode(), "a.csv")
    with app.db.session() as s:
        assert repo.summaries(s) == []
    summary = up(app, f"id,text\n{rows}7,text 7 again\n".encode(), "a.csv", id_column="")
    assert summary.added == 1_501 and all(len(e) >= 16 for e in stored(app))


# ---- memory: a constant plus a batch, not a multiple of the file ---------------------------
def big_file(name: str, n: int) -> bytes:
    texts = [f"Document {i}: a sentence of ordinary words about item {i % 977}." for i in range(n)]
    if ".csv" in name or ".tsv" in name:
        sep = "\t" if ".tsv" in name else ","
        raw = ("id" + sep + "text" + sep + "group\n" +
               "".join(f"{i}{sep}{t}{sep}g{i % 13}\n" for i, t in enumerate(texts))).encode()
    elif ".jsonl" in name:
        raw = "\n".join(json.dumps({"id": i, "text": t, "group": f"g{i % 13}"})
                        for i, t in enumerate(texts)).encode()
    else:  # a JSON array on one line, as json.dumps writes it
        raw = json.dumps([{"id": i, "text": t, "group": f"g{i % 13}"}
                          for i, t in enumerate(texts)]).encode()
    return gzip.compress(raw, compresslevel=1) if name.endswith(".gz") else raw


def peak_while_reading(name: str, n: int) -> int:
    """tracemalloc's peak while every document of an n-row file goes through the batches an
    upload stores (the reading and checking; the database write is the benchmark's)."""
    from searchapp.intake.builder import ColumnPlan, Counts, document_batches

    table = read_table(big_file(name, n), name)
    counts = Counts()
    tracemalloc.start()
    try:
        for batch in document_batches(table, ColumnPlan("text", "id"), counts):
            del batch
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts.documents == n
    return peak


@pytest.mark.slow  # about 10 s a format under tracemalloc on 2 quiet cores
@pytest.mark.parametrize("name", ["big.csv", "big.jsonl", "big.json", "big.tsv.gz"])
def test_reading_holds_a_batch_whatever_the_size_of_the_file(name):
    """Four times the rows (about 1.4 MB against 5.6 MB), about the same peak: memory is a
    constant (read buffers, a batch of documents), not a multiple of the file as it was."""
    small, large = peak_while_reading(name, 12_000), peak_while_reading(name, 48_000)
    assert large < 1.25 * small + 2**20, f"{small / 2**20:.1f} MiB, then {large / 2**20:.1f} MiB"


def test_the_upload_page_keeps_no_table_and_shows_what_a_reupload_changed(app, ui_resources):
    from tests.test_ui_pages import button, page, texts

    up(app, FIRST, "first.csv")
    at = page("upload").run()
    at.file_uploader[0].upload("second.json", SECOND, "application/json").run()
    assert any(c.startswith("second.json: 3 rows, columns id, text, colour, size")
               for c in texts(at.caption))
    assert not [k for k in at.session_state if "parsed" in str(k)]  # no table kept per session
    at.radio[0].set_value("An existing corpus").run()
    button(at, "Upload and embed").click().run()
    assert not at.error
    assert ("Corpus 'c': 0 added, 3 updated (1 with a new text, 2 with new metadata only)."
            in texts(at.success))


def test_reading_twice_from_an_open_file_leaves_it_usable():
    """The Upload page hands its open file (read in place, never copied): reads seek back."""
    f = io.BytesIO(FIRST)
    table = read_table(f, "a.csv")
    assert [n for n, _ in table.rows()] == [2, 3, 4] == [n for n, _ in table.rows()]
    assert not f.closed


def test_a_lone_surrogate_in_json_is_a_message_on_the_page_not_a_traceback(app, ui_resources):
    """Valid JSON (an escape), no character: refused while opening, before the preview
    table (whose Arrow strings cannot hold it) is drawn."""
    from tests.test_ui_pages import page, texts

    at = page("upload").run()
    at.file_uploader[0].upload("a.jsonl", b'{"text": "ok"}\n{"text": "bad \\ud800"}\n',
                               "application/json").run()
    assert not at.exception
    assert any("line 2 has an unpaired surrogate" in e for e in texts(at.error)), texts(at.error)
