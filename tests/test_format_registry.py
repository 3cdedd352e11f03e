"""One record per format: a format added through the registry alone is read by every way in.

``tests/toy_format.py`` is a new format as a developer would add one: a reader and its
``register`` call, nothing else. The CLI's help names it and ``searchapp ingest`` reads it,
the Upload page names it and takes it, and a watched folder's sync reads it; without the
record, each of them refuses the file. The registry's own rules are checked here too.
"""

from __future__ import annotations

import importlib
from pathlib import Path, PurePath

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from searchapp.cli.main import main
from searchapp.intake.formats import registry
from searchapp.intake.formats.registry import Format, find, listing, register
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from searchapp.store import repo
from searchapp.store import watched_folders as folder_rows
from searchapp.store.judgement_rows import texts_by_external_id
from searchapp.watching.folders import add_watch
from searchapp.watching.sync import queue_sync

REPO = Path(__file__).resolve().parents[1]
TOY_TEXT = "title: Moon notes\nbody: The moon orbits the earth every 27 days.\n"


@pytest.fixture
def toy():
    """The toy format registered for one test, then removed."""
    module = importlib.import_module("tests.toy_format")
    register(module.TOY)  # again, should an earlier test have removed it
    yield module.TOY
    registry.unregister(module.TOY)


def texts(app, corpus: str) -> dict[str, str]:
    with app.db.session() as s:
        found = repo.find_corpus(s, corpus)
        ids = list(repo.stored_files(s, found.id)) if found else []
        return texts_by_external_id(s, found.id, ids) if found else {}


def test_the_cli_names_the_new_format_in_its_help_and_ingests_it(app, bundled_encoder, toy,
                                                                   tmp_path, capsys):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    with pytest.raises(SystemExit):
        main(["ingest", "--help"])
    assert "Toy notes (.toy)" in capsys.readouterr().out
    note = tmp_path / "moon.toy"
    note.write_text(TOY_TEXT)
    assert main(["ingest", str(note), "--corpus", "toys", "--wait"]) == 0
    assert "The moon orbits the earth" in texts(app, "toys")["moon.toy"]


def test_without_its_record_the_same_file_is_refused(app, tmp_path, capsys):
    assert find("moon.toy", "document") is None
    note = tmp_path / "moon.toy"
    note.write_text(TOY_TEXT)
    code = main(["ingest", str(tmp_path), "--corpus", "toys"])
    assert code == 1 and "has no file of a type we read" in capsys.readouterr().err


def test_the_upload_page_names_and_takes_the_new_format(app, ui_resources, toy):
    at = AppTest.from_file(REPO / "searchapp" / "ui" / "pages" / "upload.py",
                           default_timeout=60).run()
    assert "Toy notes" in at.get("file_uploader")[0].proto.label
    at.file_uploader[0].upload("moon.toy", TOY_TEXT.encode(), "application/octet-stream").run()
    assert not at.exception and not at.error
    assert [b for b in at.button if b.label == "Add and embed"], "the file is taken"


def test_a_watched_folder_reads_the_new_format(app, bundled_encoder, toy, tmp_path):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "moon.toy").write_text(TOY_TEXT)
    (folder / "skip.xyz").write_text("not a format")
    added = add_watch(app, folder, "notes")
    with app.db.session() as s:
        row = folder_rows.get_folder(s, added["id"])
    job_id = queue_sync(app, row, settle=0)
    run_job(app, queue.claim(app.db, "test", kinds=("ingest",)))
    assert queue.get(app.db, job_id).status == "succeeded"
    assert set(texts(app, "notes")) == {"moon.toy"}


def test_an_ending_belongs_to_one_format_of_a_kind():
    first = Format("toy", "document", ("toy",), "Toy", "a toy", lambda *a: [])
    clash = Format("other", "document", ("toy", "oth"), "Other", "another", lambda *a: [])
    with registry.registered(first):
        with pytest.raises(ValueError, match=r"\.toy is already a toy"):
            register(clash)
        assert find("x.oth", "document") is None, "a refused record registers nothing"
    assert find("x.toy", "document") is None


def test_every_list_of_formats_is_made_from_the_records():
    for fmt in registry.formats("document"):
        assert fmt.listed in listing("document")
        assert find(f"a.{fmt.extensions[-1].upper()}", "document") == fmt
    for fmt in registry.formats("table"):
        assert find(f"a.{fmt.extensions[0]}.gz", "table") == fmt
    assert registry.document_type("notes.markdown") == "md"


NAME_PARTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
                     min_size=0, max_size=12)
ENDINGS = st.sampled_from(sorted({*registry.extensions("document"), *registry.extensions("table"),
                                  "gz", "exe", "doc", "xls", "zip", "", "PDF", "Md", "CSV"}))


@given(NAME_PARTS, st.lists(ENDINGS, min_size=0, max_size=3))
def test_any_file_name_gets_one_answer_from_the_records(stem, endings):
    """Whatever a file is called, the registry's answers agree with each other: its ending
    decides (in any case), a table is looked at through .gz, a document never is, and the
    routing sends one name the table path only when a table record reads it."""
    from searchapp.intake.routing import takes_table

    name = ".".join([stem, *endings]) if endings else stem
    doc, table = find(name, "document"), find(name, "table")
    last = PurePath(name).suffix.lower().lstrip(".")  # ".md" alone is a hidden file, no ending
    assert (doc is not None) == (last in registry.extensions("document"))
    assert registry.document_type(name) == (doc.name if doc else None)
    assert find(name.upper(), "document") == doc
    if table is not None:
        assert registry.extension(name, "table") in table.extensions
    assert takes_table([name]) == (table is not None)
    assert not takes_table([name, name]), "several files are never one table"
    if table is not None and doc is not None:  # .txt: both read it; whole files asks for one
        assert not takes_table([name], whole_files=True)
