"""A watched folder is read only while it is the folder that was added: real folders and
links in the test's own tmp folder, synced through the real ingest job and keeper.

The folder swapped for a link to a folder outside the roots (the issue's case), a folder
above it swapped, another folder put in its place, files and subfolders that are links
(to files and folders outside, chains), a subfolder swapped for a link while the walk
runs, a file swapped after it was hashed, and the original and in-place routes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.intake.folder_check import Identity, identity_of, trouble
from searchapp.intake.inputs import LINK, InputFile, InputLimits, Skipped, iter_inputs
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from searchapp.store import repo
from searchapp.store import watched_folders as rows
from searchapp.watching.folders import add_watch, list_watches
from searchapp.watching.in_place import local_file
from searchapp.watching.keeper import Tuning
from searchapp.watching.sync import queue_sync
from tests.test_watched_folders import running_keeper, wait_for

FAST = Tuning(debounce=0.2, longest_wait=1.5, rescan=3600, settle=0.3, retry=1.0, lease=5,
              refresh=0.2)
SECRET = "The server's private key is kept here."


def texts(app, corpus: str = "notes") -> dict[str, str]:
    with app.db.session() as s:
        found = repo.find_corpus(s, corpus)
        if found is None:
            return {}
        from searchapp.store.judgement_rows import texts_by_external_id
        return texts_by_external_id(s, found.id, list(repo.stored_files(s, found.id)))


def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """roots/notes (watched, one file) and outside/ (a secret the app must never read)."""
    roots, outside = tmp_path / "roots", tmp_path / "outside"
    (roots / "notes").mkdir(parents=True)
    outside.mkdir()
    (roots / "notes" / "plan.txt").write_text("The launch is planned for dawn.")
    (outside / "plan.txt").write_text(SECRET)
    (outside / "secret.txt").write_text(SECRET)
    return roots.resolve(), roots.resolve() / "notes", outside.resolve()


def sync_now(app, folder_id: int) -> queue.JobView:
    """One sync of the folder as the keeper queues it, run here to its end."""
    with app.db.session() as s:
        folder = rows.get_folder(s, folder_id)
    job_id = queue_sync(app, folder, settle=0)
    assert job_id is not None
    run_job(app, queue.claim(app.db, "test", kinds=("ingest",)))
    return queue.get(app.db, job_id)


def swap_for_link(folder: Path, target: Path) -> None:
    folder.rename(folder.with_name(folder.name + ".away"))
    folder.symlink_to(target, target_is_directory=True)


# ---- the sync job ------------------------------------------------------------------------
@pytest.mark.parametrize("swap", ["the folder", "a folder above it", "another folder"])
def test_a_sync_of_a_folder_that_changed_reads_nothing_and_removes_nothing(
        app, tmp_path, monkeypatch, swap):
    roots, notes, outside = layout(tmp_path)
    monkeypatch.setenv("SEARCHAPP_WATCH_ROOTS", str(roots))
    added = add_watch(app, notes, "notes", roots=[roots])
    assert sync_now(app, added["id"]).status == "succeeded"
    assert set(texts(app)) == {"plan.txt"}

    if swap == "the folder":
        swap_for_link(notes, outside)
    elif swap == "a folder above it":  # roots/ itself now leads outside
        (outside / "notes").mkdir()
        (outside / "notes" / "secret.txt").write_text(SECRET)
        swap_for_link(roots, outside)
    else:  # moved away, another real folder put at its path, with the secret in it
        notes.rename(tmp_path / "away")
        notes.mkdir()
        (notes / "secret.txt").write_text(SECRET)
    job = sync_now(app, added["id"])
    assert job.status == "failed" and "was not synced" in job.error and "kept" in job.error
    assert texts(app) == {"plan.txt": "The launch is planned for dawn."}, "read none, kept all"


def test_links_inside_a_watched_folder_are_never_followed_out(app, tmp_path, monkeypatch):
    roots, notes, outside = layout(tmp_path)
    (notes / "to-file.txt").symlink_to(outside / "secret.txt")
    (notes / "to-folder").symlink_to(outside, target_is_directory=True)
    (notes / "chain.txt").symlink_to(notes / "to-file.txt")
    (notes / "sub").mkdir()
    (notes / "sub" / "up").symlink_to(outside, target_is_directory=True)
    added = add_watch(app, notes, "notes", roots=[roots])
    job = sync_now(app, added["id"])
    assert job.status == "succeeded"
    assert set(texts(app)) == {"plan.txt"}
    left_out = {p["path"] for p in job.result["problems"] if LINK in p["reason"]}
    assert left_out == {"to-file.txt", "to-folder", "chain.txt", "sub/up"}


# ---- the keeper: how long until a swapped folder shows unavailable ----------------------------
@pytest.fixture
def keeper(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    with running_keeper(app, FAST) as running:
        yield running


def test_a_folder_swapped_for_a_link_is_unavailable_at_the_next_look_and_never_read(
        app, keeper, tmp_path, monkeypatch):
    """The issue's case: added under the roots through the API's path, then replaced by a
    link to a folder outside; before, its files were ingested within 2 s."""
    roots, notes, outside = layout(tmp_path)
    monkeypatch.setenv("SEARCHAPP_WATCH_ROOTS", str(roots))
    add_watch(app, notes, "notes", roots=[roots])
    wait_for(lambda: set(texts(app)) == {"plan.txt"}, "the first sync")
    wait_for(lambda: list_watches(app)[0]["job"] is None, "the first sync's end")

    swapped = time.monotonic()
    swap_for_link(notes, outside)
    status = wait_for(lambda: list_watches(app)[0]["state"] == "unavailable"
                      and list_watches(app)[0], "the folder marked unavailable")
    elapsed = time.monotonic() - swapped
    print(f"\nswapped for a link -> unavailable in {elapsed:.2f} s (refresh {FAST.refresh} s)")
    assert "leads elsewhere" in status["reason"] and "kept" in status["reason"]
    (outside / "new.txt").write_text(SECRET)  # an event, and a rescan's worth of time
    time.sleep(2 * FAST.refresh + FAST.debounce)  # nothing to wait for: it must not happen
    assert texts(app) == {"plan.txt": "The launch is planned for dawn."}


# ---- the walk itself ---------------------------------------------------------------------
def test_a_subfolder_swapped_for_a_link_during_the_walk_is_not_entered(tmp_path, monkeypatch):
    _roots, notes, outside = layout(tmp_path)
    (notes / "sub").mkdir()
    (notes / "sub" / "inner.txt").write_text("Inside.")
    real_open = os.open

    def swapping_open(path, flags, mode=0o777, *, dir_fd=None):
        if path == "sub" and dir_fd is not None and not (notes / "sub").is_symlink():
            swap_for_link(notes / "sub", outside)  # after it was listed and looked at
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", swapping_open)
    found = list(iter_inputs([notes], tmp_path / "work", InputLimits(), lambda p: True))
    monkeypatch.undo()
    assert (notes / "sub").is_symlink(), "the swap happened between the look and the open"
    assert [i.path for i in found if isinstance(i, InputFile)] == ["plan.txt"]
    assert [(i.path, i.reason) for i in found if isinstance(i, Skipped)] == [("sub", LINK)]


def test_a_file_swapped_after_it_was_hashed_is_read_from_what_was_hashed(tmp_path):
    _roots, notes, outside = layout(tmp_path)
    walking = iter_inputs([notes], tmp_path / "work", InputLimits(), lambda p: True)
    found = next(walking)
    (notes / "plan.txt").unlink()
    (notes / "plan.txt").symlink_to(outside / "secret.txt")  # after the hash, before the read
    pinned = found.pin()
    assert isinstance(pinned, InputFile) and pinned.temporary
    assert pinned.local.read_text() == "The launch is planned for dawn."
    assert list(walking) == []
    stale = found.pin()  # the walk moved on: never read from the path again
    assert isinstance(stale, Skipped) and stale.keep == "waiting"


def test_a_folder_found_at_the_path_that_is_not_the_one_added_is_not_walked(tmp_path):
    _roots, notes, _outside = layout(tmp_path)
    info = os.stat(notes)
    notes.rename(tmp_path / "away")
    notes.mkdir()
    (notes / "secret.txt").write_text(SECRET)
    [skipped] = iter_inputs([notes], tmp_path / "work", InputLimits(), lambda p: True,
                            identity=(info.st_dev, info.st_ino))
    assert isinstance(skipped, Skipped) and skipped.under == "" and skipped.keep


# ---- a property over link layouts -----------------------------------------------------------
KINDS = ["file", "link-in", "link-out-file", "link-out-folder", "chain-out", "folder",
         "folder-with-link-out"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(st.sampled_from(KINDS), min_size=1, max_size=6),
       swap=st.sampled_from(["none", "root", "parent", "replaced"]))
def test_no_layout_of_links_reads_a_byte_from_outside(tmp_path_factory, entries, swap):
    base = tmp_path_factory.mktemp("layout").resolve()
    roots, outside = base / "roots", base / "outside"
    (roots / "notes").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "deep" / "secret.txt").write_text(SECRET)
    notes = roots / "notes"
    (notes / "anchor.txt").write_text("inside anchor")
    for i, kind in enumerate(entries):
        entry = notes / f"e{i}"
        if kind == "file":
            (notes / f"e{i}.txt").write_text(f"inside {i}")
        elif kind == "link-in":
            (notes / f"e{i}.txt").symlink_to(notes / "anchor.txt")
        elif kind == "link-out-file":
            (notes / f"e{i}.txt").symlink_to(outside / "secret.txt")
        elif kind == "link-out-folder":
            entry.symlink_to(outside, target_is_directory=True)
        elif kind == "chain-out":
            (notes / f"e{i}-hop").symlink_to(outside / "deep", target_is_directory=True)
            entry.symlink_to(notes / f"e{i}-hop", target_is_directory=True)
        elif kind == "folder":
            entry.mkdir()
            (entry / "in.txt").write_text(f"inside folder {i}")
        else:
            entry.mkdir()
            (entry / "out").symlink_to(outside, target_is_directory=True)
    recorded = identity_of(str(notes), under_roots=True)
    if swap == "root":
        swap_for_link(notes, outside)
    elif swap == "parent":
        (outside / "notes").mkdir()
        (outside / "notes" / "secret.txt").write_text(SECRET)
        swap_for_link(roots, outside)
    elif swap == "replaced":
        notes.rename(base / "away")
        notes.mkdir()
        (notes / "secret.txt").write_text(SECRET)
    reason = trouble(str(notes), recorded, [str(roots)])
    assert (reason is None) == (swap == "none"), reason
    ident = Identity.parse(recorded)
    read = []
    for item in iter_inputs([notes], base / "work", InputLimits(), lambda p: True,
                            identity=(ident.device, ident.inode)):
        if isinstance(item, InputFile):
            pinned = item.pin()  # what the ingest reads and keeps
            assert isinstance(pinned, InputFile) and SECRET not in pinned.local.read_text()
            read.append(item.path)
    inside = {"anchor.txt"} | {f"e{i}.txt" for i, k in enumerate(entries) if k == "file"} \
        | {f"e{i}/in.txt" for i, k in enumerate(entries) if k == "folder"}
    assert set(read) == (inside if swap == "none" else set())


# ---- a hit opened in place -----------------------------------------------------------------
def test_a_hit_is_not_opened_in_place_through_a_folder_swapped_for_a_link(app, tmp_path):
    import hashlib

    roots, notes, outside = layout(tmp_path)
    (outside / "plan.txt").write_text("The launch is planned for dawn.")  # the same bytes
    add_watch(app, notes, "notes", roots=[roots])
    digest = hashlib.sha256(b"The launch is planned for dawn.").hexdigest()
    assert local_file(app, "notes", "plan.txt", digest) == notes / "plan.txt"
    swap_for_link(notes, outside)
    assert local_file(app, "notes", "plan.txt", digest) is None
