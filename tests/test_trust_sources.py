"""Sources own their documents: an upload, a folder (the command line's or a watch's), a
table and the API each change or remove only what they brought into a corpus, whatever
the documents' metadata says; a collision between two sources is reported, never a
silent overwrite. Real folders, archives, the API through the door, the real ingest job,
the bundled encoder and SQLite throughout."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from searchapp.cli.main import main
from searchapp.jobs import queue
from searchapp.jobs.worker import work
from searchapp.store import repo
from searchapp.store import watched_folders as folder_rows
from searchapp.watching.folders import add_watch
from searchapp.watching.sync import queue_sync
from tests.test_api import stack  # noqa: F401 - the fixture


def ingest(path: Path, capsys, *flags: str, corpus: str = "MyDocs") -> dict:
    capsys.readouterr()
    assert main(["ingest", str(path), "--corpus", corpus, "--wait", "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def documents(app, corpus: str = "MyDocs") -> dict[str, str]:
    """external id → source of every document of the corpus."""
    with app.db.session() as s:
        c = repo.find_corpus(s, corpus)
        return {} if c is None else repo.owners(s, c.id, list(repo.external_ids(s, c.id)
                                                              .values()))


def notes(folder: Path, *names: str, text: str = "Notes") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(f"# {name}\n{text} about {name} and the week ahead.\n",
                                   encoding="utf-8")
    return folder


def upload_zip(client, corpus: str, names: list[str]) -> dict:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for name in names:
            z.writestr(name, f"# {name}\nUploaded {name}: minutes of the planning meeting.\n")
    answer = client.post(f"/api/v1/corpora/{corpus}/files",
                         files=[("files", ("pile.zip", archive.getvalue(), "application/zip"))])
    assert answer.status_code == 202, answer.text
    return answer.json()


def sync_watch(app, folder_id: int) -> dict:
    """Queue the watched folder's sync as the keeper does and run it; its report."""
    with app.db.session() as s:
        row = next(f for f in folder_rows.list_folders(s) if f.id == folder_id)
    job_id = queue_sync(app, row, settle=0)
    assert job_id is not None
    work(app, stop_when_idle=True, poll_seconds=0.05)
    job = queue.get(app.db, job_id)
    assert job.status == "succeeded", job.error
    return job.result


def test_an_empty_folder_watched_into_a_corpus_removes_nothing_it_did_not_bring(
        stack, app, tmp_path):  # noqa: F811
    make, _ = stack
    client, _ = make()
    names = [f"minutes/{i:03}.md" for i in range(12)]
    upload_zip(client, "MyDocs", names)
    work(app, stop_when_idle=True, poll_seconds=0.05)
    assert set(documents(app)) == set(names)
    inbox = tmp_path / "Inbox"
    inbox.mkdir()
    watch = add_watch(app, inbox, "MyDocs")
    report = sync_watch(app, watch["id"])
    assert report["removed"] == 0
    assert set(documents(app)) == set(names)  # the upload's documents are the upload's
    notes(inbox, "todo.md")
    assert sync_watch(app, watch["id"])["added"] == 1
    assert documents(app)["todo.md"] == f"folder:{inbox.resolve()}"
    (inbox / "todo.md").unlink()
    report = sync_watch(app, watch["id"])
    assert report["removed"] == 1  # its own document goes ...
    assert set(documents(app)) == set(names)  # ... and nothing else


def test_two_folders_into_one_corpus_keep_each_others_documents(app, tmp_path, capsys):
    first = notes(tmp_path / "first", "a.md", "shared.md", text="First team")
    second = notes(tmp_path / "second", "b.md", "shared.md", text="Second team")
    assert ingest(first, capsys, "--sync")["added"] == 2
    report = ingest(second, capsys, "--sync")
    assert (report["added"], report["removed"], report["failed"]) == (2, 0, 0)
    [note] = [n for n in report["notes"] if "'shared.md'" in n]  # the collision, named
    assert "both are kept" in note and str(first) in note
    owners = documents(app)
    assert owners == {"a.md": f"folder:{first}", "shared.md": f"folder:{first}",
                      "b.md": f"folder:{second}", "shared (2).md": f"folder:{second}"}
    for _ in range(2):  # each sync leaves the other's documents as they are: no flipping
        assert ingest(first, capsys, "--sync")["removed"] == 0
        again = ingest(second, capsys, "--sync")
        assert (again["removed"], again["unchanged"]) == (0, 2)
    assert documents(app) == owners
    with app.db.session() as s:
        texts = {e: t for e, t in repo.document_texts(
            s, repo.find_corpus(s, "MyDocs").id).values()}
    assert "First team" in texts["shared.md"] and "Second team" in texts["shared (2).md"]
    (second / "shared.md").unlink()
    assert ingest(second, capsys, "--sync")["removed"] == 1
    assert set(documents(app)) == {"a.md", "shared.md", "b.md"}


def test_a_table_of_files_is_not_taken_for_a_folders_documents(app, tmp_path, capsys):
    folder = notes(tmp_path / "docs", "kept.md")
    digest = "ab" * 32
    inventory = tmp_path / "inventory.csv"
    inventory.write_text("id,path,sha256,text\n"
                         f"row1,gone.md,{digest},A file that is listed but not in the folder\n"
                         f"row2,kept.md,{digest},Another row of the inventory of files\n",
                         encoding="utf-8")
    capsys.readouterr()
    assert main(["ingest", str(inventory), "--corpus", "MyDocs", "--text-column", "text",
                 "--id-column", "id", "--wait"]) == 0
    assert ingest(folder, capsys, "--sync")["removed"] == 0
    owners = documents(app)
    assert owners["row1"] == owners["row2"] == "table:inventory.csv"
    assert owners["kept.md"] == f"folder:{folder}"


def test_documents_stored_before_sources_were_recorded_are_taken_over_not_lost(
        app, tmp_path, capsys):
    folder = notes(tmp_path / "docs", "one.md", "two.md")
    assert ingest(folder, capsys)["added"] == 2
    with app.db.engine.begin() as conn:  # as the schema-10 upgrade leaves them
        conn.exec_driver_sql("UPDATE documents SET source = 'files'")
    report = ingest(folder, capsys, "--sync")
    assert (report["unchanged"], report["added"], report["removed"]) == (2, 0, 0)
    assert set(documents(app).values()) == {f"folder:{folder}"}  # taken over, not read again


def _as_version_9(url: str) -> None:
    """A database as version 9 left it: a document read from a file (it has a layout and a
    ``sha256`` in its metadata) and a row of a table whose metadata says the same."""
    from sqlalchemy import text

    from searchapp.store.db import Database

    db = Database(url)
    with db.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "m")
        meta = {"path": "a.md", "sha256": "ab" * 32}
        repo.add_documents(s, c, [repo.NewDocument("a.md", "one", meta, [[0, 3, None, None]]),
                                  repo.NewDocument("row", "two", meta)])
    with db.engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_documents_source"))
        conn.execute(text("ALTER TABLE documents DROP COLUMN source"))
        conn.execute(text("ALTER TABLE documents DROP COLUMN original"))
        conn.execute(text("UPDATE schema_info SET version = 9"))
    db.dispose()


def _sources_after_upgrade(url: str) -> dict:
    from searchapp.store.db import Database

    db = Database(url)
    with db.session() as s:
        c = repo.find_corpus(s, "faq")
        files = {e: (f.source, f.original) for e, f in repo.stored_files(s, c.id).items()}
        owners = repo.owners(s, c.id, ["a.md", "row"])
    db.dispose()
    return {"files": files, "owners": owners}


def test_the_upgrade_records_files_by_their_layout_never_by_their_metadata(tmp_path):
    url = f"sqlite:///{tmp_path / 'v9.db'}"
    _as_version_9(url)
    assert _sources_after_upgrade(url) == {"files": {"a.md": ("files", "ab" * 32)},
                                           "owners": {"a.md": "files", "row": "rows"}}


def test_the_upgrade_on_postgres_records_the_same(postgres_url):
    _as_version_9(postgres_url)
    assert _sources_after_upgrade(postgres_url) == {
        "files": {"a.md": ("files", "ab" * 32)}, "owners": {"a.md": "files", "row": "rows"}}


def test_overlapping_folders_each_keep_their_own_ids(app, tmp_path, capsys):
    outer = notes(tmp_path / "outer", "top.md")
    inner = notes(outer / "inner", "deep.md")
    for _ in range(2):  # again and again: the same ids, nothing removed, nothing moved
        assert ingest(outer, capsys, "--sync")["removed"] == 0
        report = ingest(inner, capsys, "--sync")
        assert (report["removed"], report["moved"]) == (0, 0)
        assert documents(app) == {"top.md": f"folder:{outer}",
                                  "inner/deep.md": f"folder:{outer}",
                                  "deep.md": f"folder:{inner}"}


def test_a_folder_moved_and_ingested_from_its_new_place_takes_its_documents_along(
        app, tmp_path, capsys):
    old = notes(tmp_path / "Notes", "plans.md", "ideas.md")
    assert ingest(old, capsys, "--sync")["added"] == 2
    moved = tmp_path / "Documents" / "Notes"
    moved.parent.mkdir()
    old.rename(moved)
    report = ingest(moved, capsys, "--sync")
    assert (report["added"], report["removed"]) == (2, 0)
    assert not [n for n in report["notes"] if "both are kept" in n]  # no "(2)" copies
    assert documents(app) == {"plans.md": f"folder:{moved}", "ideas.md": f"folder:{moved}"}
    (moved / "ideas.md").unlink()
    assert ingest(moved, capsys, "--sync")["removed"] == 1
