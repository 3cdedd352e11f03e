"""One rule for document ids everywhere: spaces around an id removed, control characters
and '.'/'..' refused with a message naming the rule, in the core, the CLI and uploads."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from searchapp.cli.main import main
from searchapp.corpora import documents as docs
from searchapp.corpora.service import create_corpus
from searchapp.errors import IngestError, InvalidParameterError
from searchapp.intake.builder import ID_COLUMN_GUESSES
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.store import repo


@pytest.fixture
def corpus(app):
    create_corpus(app, "t")
    return app


def test_spaces_around_an_id_name_the_same_document(corpus):
    docs.upsert(corpus, "t", [docs.Doc(" d3 ", "one")])
    docs.upsert(corpus, "t", [docs.Doc("d3", "two")])
    found, missing = docs.get_many(corpus, "t", ["d3", "  d3\t"])
    assert [d.id for d in found] == ["d3"] and missing == []
    assert found[0].text == "two"


@pytest.mark.parametrize("bad", ["a\nb", "a\tb", "\x1b[31m", ".", ".."])
def test_control_characters_and_dot_ids_are_refused_naming_the_rule(corpus, bad, capsys):
    with pytest.raises(InvalidParameterError, match="no control character"):
        docs.upsert(corpus, "t", [docs.Doc(bad, "x")])
    assert main(["documents", "upsert", "--corpus", "t", "--id", bad, "--text", "x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no control character" in err


def test_an_upload_refuses_an_id_with_a_control_character_naming_the_line(corpus, tmp_path):
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload

    path = tmp_path / "ids.csv"
    path.write_text('id,text\nok,fine\n"a\tb",tabbed\n')
    with pytest.raises(IngestError, match=r"no control character"):
        upload(corpus, read_table(path), "u", text_column="text", id_column="id")


ID_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                  max_size=30)


@hsettings(max_examples=60, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=ID_TEXT)
def test_an_id_is_refused_or_comes_back_the_same_by_its_stripped_form(corpus, raw):
    try:
        stored = docs.check_id(raw)
    except InvalidParameterError as exc:
        assert "document id" in str(exc).lower()
        core = raw.strip()
        assert not core or core in (".", "..") or \
            any(unicodedata.category(c) == "Cc" for c in core) or "\x00" in core
        return
    assert stored == raw.strip() and stored
    docs.upsert(corpus, "t", [docs.Doc(raw, "text")])
    found, missing = docs.get_many(corpus, "t", [stored])
    assert [d.id for d in found] == [stored] and not missing
    assert docs.delete(corpus, "t", [raw]).deleted == 1


# ---- an id column whose values repeat (exactly or once trimmed) -------------------------------
def _id_name():
    """A column name taken as the id by its name: ``id``, ``ID``, ``Doc_Id``, ..."""
    return st.sampled_from(ID_COLUMN_GUESSES).flatmap(lambda name: st.tuples(
        *(st.sampled_from((c.lower(), c.upper())) for c in name)).map("".join))


@hsettings(max_examples=40, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(column=_id_name(), n=st.integers(2, 40), data=st.data())
def test_a_repeated_id_in_a_column_named_like_an_id_is_an_error_naming_both_lines(
        corpus, column, n, data):
    """Never a silent switch to ids made from the text ("3 added", then the file's own id
    found nothing): the upload stores nothing and names the two lines."""
    first = data.draw(st.integers(0, n - 2))
    second = data.draw(st.integers(first + 1, n - 1))
    padding = data.draw(st.sampled_from(["", " ", "  ", "\t"]))
    ids = [f"{100 + i}" for i in range(n)]
    ids[second] = padding + ids[first] + padding.strip(" ")  # the same once trimmed
    rows = "".join(f'"{i}",text {k}\n' for k, i in enumerate(ids))
    table = read_table(f"{column},text\n{rows}".encode(), "ids.csv")
    with pytest.raises(IngestError) as refused:
        upload(corpus, table, "u", text_column="text")
    message = str(refused.value)
    assert f"line {second + 2} repeats id '{ids[first]}' (first seen at line {first + 2})" \
        in message and "choose no id column" in message
    with corpus.db.session() as s:
        assert [c.name for c in repo.summaries(s)] == ["t"]


def test_a_chosen_id_column_with_a_repeat_is_an_error_in_the_cli_too(corpus, tmp_path, capsys):
    path = tmp_path / "ids.csv"
    path.write_text("ref,text\n101,one\n102,two\n 101 ,three\n")
    assert main(["ingest", str(path), "--corpus", "u", "--id-column", "ref"]) == 1
    assert "line 4 repeats id '101' (first seen at line 2)" in capsys.readouterr().err
    path.write_text("id,text\n101,one\n102,two\n101,three\n")
    assert main(["ingest", str(path), "--corpus", "u"]) == 1
    assert "line 4 repeats id '101'" in capsys.readouterr().err
    assert main(["ingest", str(path), "--corpus", "u", "--id-column", ""]) == 0
    assert "3 added" in capsys.readouterr().out


def test_without_an_id_named_column_ids_are_made_from_the_text(corpus):
    table = read_table(b"ref,text\n101,one\n101,two\n", "ids.csv")
    summary = upload(corpus, table, "u", text_column="text")
    assert summary.added == 2
    found, _ = docs.get_many(corpus, "u", ["101"])
    assert found == []  # "ref" is metadata: no column was chosen or named like an id
