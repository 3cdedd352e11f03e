"""Archives that lie are refused by ``restore --check`` exactly as restore refuses them, and
restore reports what it restored (counted in the restored database), not the manifest.

Every archive is a real tar file made here: sparse members written by GNU tar, members
whose header disagrees with the manifest, the same name twice, a file and a folder of one
name, names over 255 bytes, paths thousands of folders deep, manifests that are not what
they should be, databases that are foreign or of a newer schema, and a full disk.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sqlite3
import subprocess
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from searchapp.backups import service as backups
from searchapp.cli.main import main
from searchapp.corpora import documents as docs
from searchapp.corpora.service import create_corpus
from searchapp.errors import BackupError
from searchapp.store import archive
from searchapp.store.schema import SCHEMA_VERSION
from tests.filesystems import small_disk

DB = "database/searchapp.db"


@pytest.fixture
def good(app, tmp_path) -> tuple[Path, bytes, dict]:
    """A real backup of a corpus 'tiny' with 2 documents: (archive, database bytes, manifest)."""
    create_corpus(app, "tiny")
    docs.upsert(app, "tiny", [docs.Doc("d1", "one"), docs.Doc("d2", "two")])
    made = backups.backup(app, tmp_path / "good.tar")
    with tarfile.open(made.path) as tar:
        database = tar.extractfile(DB).read()
    return made.path, database, made.manifest


def entry(data: bytes) -> dict:
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def lying_tar(dest: Path, members: list[tuple[str, bytes]], manifest: dict,
              listed: dict | None = None) -> Path:
    """A tar of ``members`` (name, bytes) in that order, then a manifest listing them (or
    ``listed`` instead): names are written as given, checked by nothing."""
    body = {**manifest, "members": listed if listed is not None else
            {name: entry(data) for name, data in members}}
    with tarfile.open(dest, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [*members, (archive.MANIFEST, json.dumps(body).encode())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return dest


def refused_alike(path: Path, target: Path, match: str) -> str:
    """``--check`` and restore refuse ``path`` with the same message; nothing is written."""
    with pytest.raises(BackupError, match=match) as checked:
        backups.check(path)
    with pytest.raises(BackupError, match=match) as restored:
        backups.restore(path, target)
    assert not target.exists()
    assert not list(target.parent.glob(f".{target.name}.restoring-*"))
    assert str(checked.value) == str(restored.value)
    return str(checked.value)


def gnu_sparse_tar(dest: Path, files: list[str], root: Path) -> Path:
    """GNU tar ``--sparse``: holes are stored as a map, so a big file costs a few bytes."""
    subprocess.run(["tar", "--format=gnu", "--sparse", "-cf", str(dest), "-C", str(root),
                    *files], check=True, capture_output=True)
    return dest


@pytest.mark.parametrize(("size", "padding", "match"), [
    (64 << 20, 0, "sparse file"),  # a small archive claiming 64 MiB: refused from its header
    (256 << 10, 1 << 20, "sparse file"),  # claims no more than the archive holds
])
def test_a_sparse_member_is_refused_by_check_before_restore_writes_it(
        good, tmp_path, size, padding, match):
    _, database, manifest = good
    root = tmp_path / "root"
    (root / "database").mkdir(parents=True)
    (root / DB).write_bytes(database)
    (root / "models" / "m").mkdir(parents=True)
    big = root / "models" / "m" / "weights.bin"
    with open(big, "wb") as f:  # holes and 5 bytes of data
        f.truncate(size)
        f.seek(size // 2)
        f.write(b"hello")
    body = {**manifest, "note": "x" * padding,  # a manifest big enough to cover the claims
            "members": {DB: entry(database), "models/m/weights.bin": entry(big.read_bytes())}}
    (root / archive.MANIFEST).write_text(json.dumps(body))
    path = gnu_sparse_tar(tmp_path / "sparse.tar", [DB, "models/m/weights.bin",
                                                    archive.MANIFEST], root)
    with tarfile.open(path) as tar:
        assert tar.getmember("models/m/weights.bin").issparse()
    refused_alike(path, tmp_path / "into", match)


def test_a_2_gib_sparse_manifest_is_refused_from_its_header(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with open(root / archive.MANIFEST, "wb") as f:
        f.truncate(2 << 30)
    path = gnu_sparse_tar(tmp_path / "m.tar", [archive.MANIFEST], root)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        refused_alike(path, tmp_path / "into", "sparse file.*refused from its header")
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 5 and peak < 20 << 20, (seconds, peak)


def test_a_member_whose_header_disagrees_with_the_manifest_is_refused(good, tmp_path):
    _, database, manifest = good
    weights = b"w" * 1000
    listed = {DB: entry(database), "models/m/w.bin": {**entry(weights), "size": 10}}
    path = lying_tar(tmp_path / "lies.tar", [(DB, database), ("models/m/w.bin", weights)],
                     manifest, listed)
    refused_alike(path, tmp_path / "into", r"claims 1,000 bytes, its manifest 10")


def test_manifest_sizes_beyond_the_archive_are_refused(good, tmp_path):
    _, database, manifest = good
    listed = {DB: entry(database), "models/m/w.bin": {"size": 1 << 40, "sha256": "0" * 64}}
    path = lying_tar(tmp_path / "huge.tar", [(DB, database)], manifest, listed)
    refused_alike(path, tmp_path / "into", "more than the archive")


@pytest.mark.parametrize(("name", "match"), [
    ("models/" + "x" * 300, "over 255 bytes"),
    ("models/" + "d/" * 3000 + "f", "parts deep"),
    ("models/./m", "Unsafe name"),
])
def test_names_the_file_system_would_refuse_are_refused_by_check(good, tmp_path, name, match):
    _, database, manifest = good
    path = lying_tar(tmp_path / "names.tar", [(DB, database), (name, b"x")], manifest)
    refused_alike(path, tmp_path / "into", match)


def test_a_file_then_a_folder_of_the_same_name_is_refused(good, tmp_path):
    _, database, manifest = good
    path = lying_tar(tmp_path / "ff.tar", [(DB, database), ("models/a", b"file"),
                                           ("models/a/b", b"in a folder")], manifest)
    refused_alike(path, tmp_path / "into", "both a file and the folder")


def test_the_same_member_twice_is_refused(good, tmp_path):
    _, database, manifest = good
    path = lying_tar(tmp_path / "twice.tar", [(DB, database), ("models/a", b"one"),
                                              ("models/a", b"one")], manifest)
    refused_alike(path, tmp_path / "into", "twice")


@pytest.mark.parametrize(("change", "match"), [
    (lambda m, db: {**m, "members": {DB: "not an object"}}, "not an object"),
    (lambda m, db: {**m, "members": {DB: {**entry(db), "size": "12"}}}, "not an object"),
    (lambda m, db: {**m, "corpora": ["tiny"]}, "corpora list is malformed"),
    (lambda m, db: {**m, "corpora": {"tiny": 2}}, "corpora list is malformed"),
])
def test_malformed_manifests_are_refused_by_check(good, tmp_path, change, match):
    _, database, manifest = good
    body = change({**manifest, "members": {DB: entry(database)}}, database)
    path = lying_tar(tmp_path / "bad.tar", [(DB, database)], body, body["members"])
    refused_alike(path, tmp_path / "into", match)


def test_an_archive_without_a_database_is_refused(good, tmp_path):
    _, _, manifest = good
    path = lying_tar(tmp_path / "nodb.tar", [("models/m/config.json", b"{}")], manifest)
    refused_alike(path, tmp_path / "into", "holds no database")


def sqlite_bytes(tmp_path: Path, statements: list[str]) -> bytes:
    path = tmp_path / f"db-{len(list(tmp_path.glob('db-*')))}.sqlite"
    con = sqlite3.connect(path)
    for sql in statements:
        con.execute(sql)
    con.commit()
    con.close()
    return path.read_bytes()


def test_a_foreign_or_newer_database_is_refused_by_check(good, tmp_path):
    _, database, manifest = good
    foreign = sqlite_bytes(tmp_path, ["create table notes (x)"])
    path = lying_tar(tmp_path / "foreign.tar", [(DB, foreign)], manifest)
    refused_alike(path, tmp_path / "into", "not a searchapp database")
    copy = tmp_path / "newer.db"
    copy.write_bytes(database)
    with sqlite3.connect(copy) as con:
        con.execute("UPDATE schema_info SET version = 99")
    path = lying_tar(tmp_path / "newer.tar", [(DB, copy.read_bytes())], manifest)
    message = refused_alike(path, tmp_path / "into", "schema version 99, newer than")
    assert f"({SCHEMA_VERSION})" in message


def test_restore_reports_what_the_database_holds_not_what_the_manifest_says(
        good, tmp_path, capsys):
    _, database, manifest = good
    lie = {**manifest, "corpora": [{"name": "huge", "documents": 10**6, "embedded": 0,
                                    "generation": 1}]}
    path = lying_tar(tmp_path / "lie.tar", [(DB, database)], lie)
    assert main(["restore", str(path), "--check"]) == 0
    assert "1 corpus (2 documents)" in capsys.readouterr().out
    assert main(["restore", str(path), "--data-dir", str(tmp_path / "into")]) == 0
    out = capsys.readouterr().out
    assert "Restored 1 corpus (2 documents)" in out and "tiny: 2 documents" in out
    assert "huge" not in out and "1,000,000" not in out


def test_a_full_disk_during_restore_leaves_the_target_untouched(good, tmp_path):
    _, database, manifest = good
    weights = bytes(range(256)) * 8192  # 2 MiB that does not compress away
    path = lying_tar(tmp_path / "big.tar", [(DB, database), ("models/m/w.bin", weights)],
                     manifest)
    with small_disk(tmp_path / "disk", 1 << 20) as disk:
        target = disk / "data"
        target.mkdir()
        (target / "precious.txt").write_text("keep me")
        with pytest.raises(BackupError, match="nothing was restored"):
            backups.restore(path, target, force=True)
        assert [p.name for p in disk.iterdir()] == ["data"]
        assert sorted(p.name for p in target.iterdir() if p.name != ".in-use") == \
            ["precious.txt"]


NAME_PART = st.text(st.characters(codec="utf-8", exclude_characters="/"), min_size=1,
                    max_size=90) | st.sampled_from([".", "..", "", "x" * 256, "é" * 128])


@hsettings(max_examples=40, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(NAME_PART, min_size=1, max_size=4))
def test_check_passes_exactly_what_restore_restores(good, tmp_path_factory, parts):
    _, database, manifest = good
    folder = tmp_path_factory.mktemp("prop")
    name = "models/" + "/".join(parts)
    path = lying_tar(folder / "p.tar", [(DB, database), (name, b"data")], manifest)
    try:
        backups.check(path)
        checked = None
    except BackupError as exc:
        checked = str(exc)
    try:
        done = backups.restore(path, folder / "into")
        restored = None
    except BackupError as exc:
        restored = str(exc)
    assert checked == restored, name
    if checked is None:
        assert (done.data_dir / name).read_bytes() == b"data"
    shutil.rmtree(folder, ignore_errors=True)
