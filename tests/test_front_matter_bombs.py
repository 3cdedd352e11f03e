"""Markdown front matter whose YAML costs far more than its size is skipped in
milliseconds, with a note, and the document is still read and stored.

The bomb is the real one: nine aliases of nine aliases ... of "lol" (about 400 bytes)
that ``yaml.safe_load`` loads as shared lists and that the title or tags turned into
gigabytes of text, holding a reader until its memory cap or timeout.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.cli.main import main
from searchapp.corpora.documents import get
from searchapp.intake.formats.document_readers import read_document
from searchapp.intake.formats.yaml_front import MAX_DEPTH, MAX_FRONT_BYTES

BODY = "# Holidays\nThe office is closed over the winter holidays.\n"


def laughs(width: int = 9, depth: int = 9, key: str = "title") -> str:
    """A "billion laughs": ``depth`` levels of ``width`` aliases each, the last one given as
    ``key`` (title: a string of width**depth "lol"s once it is text)."""
    names = "abcdefghijklmnop"
    lines = [f"a: &a [{','.join(['lol'] * width)}]"]
    for level in range(1, depth):
        alias = f"*{names[level - 1]}"
        lines.append(f"{names[level]}: &{names[level]} [{','.join([alias] * width)}]")
    lines.append(f"{key}: *{names[depth - 1]}")
    return "---\n" + "\n".join(lines) + "\n---\n" + BODY


def read(path: Path, text: str):
    path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    [doc] = read_document(path, path.name)
    return doc, time.perf_counter() - started


def test_the_billion_laughs_is_skipped_in_milliseconds_and_the_text_is_read(tmp_path):
    bomb = laughs()
    assert len(bomb.encode()) - len(BODY) < 400  # 387 bytes
    doc, seconds = read(tmp_path / "bomb.md", bomb)
    assert seconds < 1.0, f"{seconds:.2f} s"
    assert doc.meta == {"type": "md"}
    assert doc.text == "Holidays\nThe office is closed over the winter holidays."
    assert doc.notes == ["front matter not read: it uses a YAML alias (*a), which repeats a "
                         "value without copying it; write the value out instead"]


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(width=st.integers(2, 30), depth=st.integers(2, 16),
       key=st.sampled_from(["title", "tags", "author", "date", "other"]))
def test_any_alias_bomb_is_skipped_fast(tmp_path, width, depth, key):
    doc, seconds = read(tmp_path / "b.md", laughs(width, depth, key))
    assert seconds < 1.0 and doc.meta == {"type": "md"} and "YAML alias" in doc.notes[0]
    assert doc.parts[-1].section == "Holidays"


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=st.text(st.characters(categories=["L", "N", "P", "S", "Zs"]),
                     min_size=1, max_size=40).filter(str.strip),
       tags=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), max_size=5))
def test_front_matter_without_aliases_is_still_read(tmp_path, title, tags):
    front = json.dumps({"title": title, "tags": tags}, ensure_ascii=False)  # JSON is YAML
    doc, _ = read(tmp_path / "ok.md", f"---\n{front}\n---\n{BODY}")
    expected = {"title": title.strip(), "type": "md"} | ({"tags": ", ".join(tags)} if tags
                                                         else {})
    assert doc.meta == expected and doc.notes == []


def test_front_matter_over_the_cap_is_skipped(tmp_path):
    lines = "".join(f"k{i}: [" + ",".join(["1"] * 20) + "]\n" for i in range(2_000))
    assert len(lines) > MAX_FRONT_BYTES
    doc, seconds = read(tmp_path / "big.md", f"---\ntitle: Big\n{lines}---\n{BODY}")
    assert seconds < 1.0 and doc.meta == {"type": "md"}
    assert "more than the 64 KiB front matter may hold" in doc.notes[0]
    assert doc.text.startswith("Holidays")


def test_deep_nesting_and_huge_numbers_are_skipped(tmp_path):
    deep = "title: x\nk: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    doc, _ = read(tmp_path / "deep.md", f"---\n{deep}---\n{BODY}")
    assert f"more than {MAX_DEPTH} levels deep" in doc.notes[0] and doc.meta == {"type": "md"}
    doc, _ = read(tmp_path / "int.md", f"---\ntitle: {'9' * 5000}\n---\n{BODY}")
    assert "a value that cannot be read" in doc.notes[0] and doc.text.startswith("Holidays")


def test_text_between_two_rules_is_text_without_a_note(tmp_path):
    doc, _ = read(tmp_path / "rules.md", "---\nNot: yaml: at: all\n---\n" + BODY)
    assert doc.notes == [] and "Not: yaml: at: all" in doc.text


def test_the_ingest_stores_the_document_fast_with_a_note(app, tmp_path, capsys):
    """Through the real ingest (readers in their capped processes): the bomb's reader
    held its slot for the whole timeout and the file failed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "bomb.md").write_text(laughs(), encoding="utf-8")
    (folder / "good.md").write_text("---\ntitle: Good\n---\n" + BODY, encoding="utf-8")
    capsys.readouterr()
    started = time.perf_counter()
    assert main(["ingest", str(folder), "--corpus", "docs", "--wait", "--json"]) == 0
    seconds = time.perf_counter() - started
    report = json.loads(capsys.readouterr().out)
    assert (report["added"], report["failed"], report["skipped"]) == (2, 0, 0)
    assert seconds < 60, f"{seconds:.1f} s"  # reader start-up and the encoder included
    assert [n for n in report["notes"] if "bomb.md" in n] == [
        "bomb.md: front matter not read: it uses a YAML alias (*a), which repeats a value "
        "without copying it; write the value out instead"]
    bomb, good = get(app, "docs", "bomb.md"), get(app, "docs", "good.md")
    assert "winter holidays" in bomb.text and "title" not in bomb.meta
    assert good.meta["title"] == "Good"
