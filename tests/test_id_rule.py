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
    from searchapp.corpora.ingest import read_table
    from searchapp.corpora.service import upload

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
