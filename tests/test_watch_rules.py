"""The watcher's rules on paths, over generated names: which events make a folder dirty,
and which files the include/exclude globs take. No threads, no file system events."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from searchapp.intake.files_job import matches
from searchapp.store.watched_folders import FolderRow
from searchapp.watching.keeper import Keeper, Tuning

part = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)),
               min_size=1, max_size=12).filter(lambda p: p not in (".", ".."))
paths = st.lists(part, min_size=1, max_size=4)


def row(path: str, include=(), exclude=()) -> FolderRow:
    return FolderRow(1, "notes", path, list(include), list(exclude), False, None, True, None,
                     0, 0, 0, 0)


def test_hidden_files_and_the_data_folder_never_make_a_folder_dirty(app):
    keeper = Keeper(app, Tuning())  # one keeper (an Observer, not started) for every example
    root = str(app.settings.data_dir.parent / "watched")

    @given(parts=paths)
    def check(parts):
        _hidden_and_data(keeper, root, parts)

    check()


def _hidden_and_data(keeper, root, parts):
    hidden_file = [*parts[:-1], "." + parts[-1] + ".md"]  # a type we read, but hidden
    assert not keeper._relevant(row(root), os.path.join(root, *hidden_file), False)
    hidden_folder = ["." + parts[0], *parts[1:], "notes.md"]
    assert not keeper._relevant(row(root), os.path.join(root, *hidden_folder), False)
    inside_data = os.path.join(keeper.data_dir, *parts)
    assert not keeper._relevant(row(keeper.data_dir.rsplit("/", 1)[0]), inside_data, False)
    assert not keeper._relevant(row(root), os.path.join(root + "-other", *parts, "a.md"), False)


def test_a_readable_file_in_the_folder_makes_it_dirty_unless_excluded(app):
    keeper = Keeper(app, Tuning())
    root = str(app.settings.data_dir.parent / "watched")

    @given(parts=paths)
    def check(parts):
        _readable(keeper, root, parts)

    check()


def _readable(keeper, root, parts):
    visible = [p.lstrip(".") or "x" for p in parts]
    if any(p == "__MACOSX" for p in visible):
        return
    path = os.path.join(root, *visible[:-1], visible[-1] + ".md")
    assert keeper._relevant(row(root), path, False)
    assert not keeper._relevant(row(root, exclude=["*.md"]), path, False)
    assert not keeper._relevant(row(root, include=["*.pdf"]), path, False)
    assert keeper._relevant(row(root), os.path.join(root, *visible), True), "a folder event"


@given(parts=paths)
def test_globs_match_the_path_or_the_name(parts):
    rel = "/".join(parts)
    assert matches(rel) and not matches(rel, exclude=["*"])
    assert matches(rel, include=[parts[-1].replace("[", "[[]")]) or "[" in parts[-1] \
        or "*" in parts[-1] or "?" in parts[-1]
    assert not matches(rel, include=["*"], exclude=[rel.replace("[", "[[]")]) or \
        any(c in rel for c in "*?[")
