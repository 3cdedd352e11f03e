"""Restore trusts nothing a backup says: real backups made by the app, then tampered the way
someone who can write the archive would (the manifest recomputed to match), checked and
restored.

- an original whose bytes were swapped is refused by ``restore --check`` and by restore,
  whatever its manifest entry says, and nothing of the data folder there changes;
- a watched folder planted in the backup's database is listed by ``--check``, restored
  paused (never synced by the keeper) and named in the report; resuming it checks it as
  adding does.
"""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
import tarfile
from pathlib import Path

import pytest

from searchapp.backups import service as backups
from searchapp.backups.trust import RESUME
from searchapp.cli.main import main
from searchapp.config import Settings
from searchapp.context import App
from searchapp.errors import BackupError, WatchError
from searchapp.intake.files_job import request_ingest
from searchapp.jobs import queue
from searchapp.jobs.worker import work
from searchapp.store import archive
from searchapp.store import watched_folders as rows
from searchapp.watching.folders import list_watches, set_paused
from searchapp.watching.keeper import Keeper, Tuning

GENUINE = b"The launch window opens at dawn on the coast.\n"
PLANTED = b"Send the passwords to the address below.\n"


@pytest.fixture
def source(app, bundled_encoder, tmp_path):
    """The App with one file ingested from a folder: its original is kept under its hash."""
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "launch.txt").write_bytes(GENUINE)
    request_ingest(app, "docs", [folder])
    work(app, stop_when_idle=True)
    return app


def tamper(path: Path, dest: Path, change) -> Path:
    """A copy of an archive with ``change(name, data) -> data`` applied per member, and the
    manifest's size and SHA-256 of each changed member recomputed to match (so only a
    check that does not trust the manifest can tell)."""
    with tarfile.open(path) as src:
        members = [(m, src.extractfile(m).read()) for m in src]
    changed = {m.name: change(m.name, data) for m, data in members
               if m.name != archive.MANIFEST}
    manifest = json.loads(next(d for m, d in members if m.name == archive.MANIFEST))
    for name, data in changed.items():
        manifest["members"][name] = {"size": len(data),
                                     "sha256": hashlib.sha256(data).hexdigest()}
    with tarfile.open(dest, "w") as out:
        for member, data in members:
            if member.name != archive.MANIFEST:
                data = changed[member.name]
            else:
                data = json.dumps(manifest).encode()
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    return dest


def original_name() -> str:
    digest = hashlib.sha256(GENUINE).hexdigest()
    return f"originals/{digest[:2]}/{digest}"


def swap_original(name: str, data: bytes) -> bytes:
    return PLANTED if name == original_name() else data


def test_an_original_whose_bytes_were_swapped_is_refused_by_check_and_restore(
        source, tmp_path, capsys):
    made = backups.backup(source, tmp_path / "b.tar")
    assert original_name() in made.manifest["members"]
    bad = tamper(made.path, tmp_path / "swapped.tar", swap_original)
    assert archive.read_manifest(bad)["members"][original_name()]["sha256"] == \
        hashlib.sha256(PLANTED).hexdigest(), "the manifest agrees with the planted bytes"

    with pytest.raises(BackupError, match="not the hash that names it"):
        backups.check(bad)
    assert main(["restore", str(bad), "--check"]) == 1
    assert "not the hash that names it" in capsys.readouterr().err

    target = tmp_path / "restored"
    with pytest.raises(BackupError, match="not the hash that names it"):
        backups.restore(bad, target)
    assert not target.exists()

    # a data folder there already, with the genuine original: restore --force changes nothing
    backups.restore(made.path, target)
    kept = target / original_name()
    before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()}
    with pytest.raises(BackupError, match="not the hash that names it"):
        backups.restore(bad, target, force=True)
    assert kept.read_bytes() == GENUINE
    assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before
    assert not list(tmp_path.glob("restored.replaced-*"))
    assert not list(tmp_path.glob(".restored.restoring-*"))


def test_a_member_under_originals_not_named_by_a_hash_is_refused(source, tmp_path):
    made = backups.backup(source, tmp_path / "b.tar")
    renamed = tmp_path / "renamed.tar"
    with tarfile.open(made.path) as src, tarfile.open(renamed, "w") as out:
        for member in src:
            data = src.extractfile(member).read()
            if member.name == archive.MANIFEST:
                manifest = json.loads(data)
                manifest["members"]["originals/ab/notes.txt"] = \
                    manifest["members"].pop(original_name())
                data = json.dumps(manifest).encode()
            elif member.name == original_name():
                member.name = "originals/ab/notes.txt"
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    with pytest.raises(BackupError, match="not the hash that names it"):
        backups.check(renamed)


def plant_watched_folder(folder: Path):
    """``change`` for ``tamper``: a watched folder row added to the backup's database."""

    def change(name: str, data: bytes) -> bytes:
        if name != backups.DATABASE_SQLITE:
            return data
        copy = folder.parent / "planted.db"
        copy.write_bytes(data)
        con = sqlite3.connect(copy)
        with con:
            corpus_id = con.execute("SELECT id FROM corpora WHERE name = 'docs'").fetchone()[0]
            con.execute(
                "INSERT INTO watched_folders (corpus_id, path, include, exclude, paused, device, "
                "available, files_seen, files_in_step, files_waiting, files_failed, failures, "
                "last_change, created_at) VALUES (?, ?, '[]', '[]', 0, ?, 1, 0, 0, 0, 0, '[]', "
                "'{}', '2026-01-01 00:00:00')",
                (corpus_id, str(folder), str(folder.stat().st_dev)))
        con.close()
        return copy.read_bytes()

    return change


def test_a_watched_folder_a_backup_names_is_listed_restored_paused_and_never_synced(
        source, tmp_path, capsys, bundled_encoder, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("The server's private notes.")
    made = backups.backup(source, tmp_path / "b.tar")
    bad = tamper(made.path, tmp_path / "planted.tar", plant_watched_folder(outside))

    checked = backups.inspect(bad)
    assert [w.path for w in checked.watched] == [str(outside)]
    assert main(["restore", str(bad), "--check"]) == 0
    assert f"1 watched folder (a restore brings them paused): #1 docs: {outside}" in \
        capsys.readouterr().out

    target = tmp_path / "restored"
    assert main(["restore", str(bad), "--data-dir", str(target)]) == 0
    assert f"1 watched folder restored paused: #1 docs: {outside}; {RESUME}" in \
        capsys.readouterr().out

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(target)}))
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    try:
        [folder] = list_watches(app)
        assert folder["paused"] and folder["state"] == "paused"
        with app.db.session() as s:
            assert rows.get_folder(s, folder["id"]).device == rows.RESTORED
        before = {j.id for j in queue.recent(app.db, 50)}  # the source's jobs, restored
        keeper = Keeper(app, Tuning(refresh=0.1), owner="test")
        for now in (0.0, 1.0, 2.0):  # the keeper's passes: a paused folder is never synced
            keeper.step(now)
        assert {j.id for j in queue.recent(app.db, 50)} == before

        monkeypatch.setenv("SEARCHAPP_WATCH_ROOTS", str(tmp_path / "roots"))
        with pytest.raises(WatchError, match="outside"):  # from the API or the browser
            set_paused(app, folder["id"], False, roots=[(tmp_path / "roots").resolve()])
        resumed = set_paused(app, folder["id"], False)  # the owner, on the server
        assert not resumed["paused"] and resumed["available"]
        with app.db.session() as s:
            device = rows.get_folder(s, folder["id"]).device
        assert device == f"{outside.stat().st_dev}:{outside.stat().st_ino}"
    finally:
        app.db.dispose()


def test_a_restored_watched_folder_inside_the_data_folder_is_not_resumed(
        source, tmp_path, bundled_encoder):
    target = tmp_path / "restored"
    made = backups.backup(source, tmp_path / "b.tar")
    placeholder = tmp_path / "placeholder"
    placeholder.mkdir()
    bad = tamper(made.path, tmp_path / "planted.tar", plant_watched_folder(placeholder))
    backups.restore(bad, target)
    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(target)}))
    try:
        [folder] = list_watches(app)
        with app.db.session() as s:  # the backup names the new data folder's own originals
            rows.write_status(s, folder["id"], path=str(target / "originals"))
        with pytest.raises(WatchError, match="data folder"):
            set_paused(app, folder["id"], False)
        assert list_watches(app)[0]["paused"]
    finally:
        app.db.dispose()
