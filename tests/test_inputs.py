"""``corpora.inputs``: folders and archives into checked input files, hostile ones included.

Every archive is built here with zipfile/tarfile; each guard has a case that would
let the file through (or write outside the work folder) without it. Tests run as
root on CI, so the permission case skips there with its reason.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import tracemalloc
import unicodedata
import zipfile
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.intake.inputs import (
    LINK,
    NESTED,
    NOT_READ,
    SPECIAL,
    InputFile,
    InputLimits,
    Skipped,
    _Refused,
    clean_path,
    count_zip_entries,
    iter_inputs,
    private_work_dir,
)
from tests.filesystems import ran_where_permissions_apply


def run(tmp_path: Path, *paths: Path, limits: InputLimits | None = None,
        accept=lambda path: True) -> list[InputFile | Skipped]:
    return list(iter_inputs(list(paths), tmp_path / "work", limits or InputLimits(), accept))


def files(items) -> dict[str, bytes]:
    return {i.path: i.local.read_bytes() for i in items if isinstance(i, InputFile)}


def skipped(items) -> dict[str, str]:
    return {i.path: i.reason for i in items if isinstance(i, Skipped)}


def listing(root: Path, leave_out: Path) -> set[str]:
    """Every path under ``root`` (links not followed) except those under ``leave_out``."""
    found = set()
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder, name)
            if not path.is_relative_to(leave_out):
                found.add(str(path))
    return found


def make_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, data)
    return path


def zip_info(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system, info.external_attr = 3, mode << 16
    return info


def make_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]],
             mode: str = "w") -> Path:
    with tarfile.open(path, mode, format=tarfile.PAX_FORMAT) as t:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def tar_info(name: str, kind: bytes = tarfile.REGTYPE, **fields) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in fields.items():
        setattr(info, key, value)
    return info


# ---- folders -----------------------------------------------------------------------------------
def test_a_folder_is_walked_in_order_with_sizes_times_and_hashes(tmp_path):
    root = tmp_path / "docs"
    (root / "b" / "c").mkdir(parents=True)
    (root / "b" / "c" / "deep.md").write_text("deep")
    (root / "a.txt").write_text("alpha")
    (root / "b" / "z.txt").write_text("zed")
    items = run(tmp_path, root)
    assert [i.path for i in items] == ["a.txt", "b/c/deep.md", "b/z.txt"]
    first = items[0]
    assert first.local == root / "a.txt" and not first.temporary and first.size == 5
    assert first.sha256 == hashlib.sha256(b"alpha").hexdigest()
    assert first.mtime == (root / "a.txt").stat().st_mtime
    first.discard()
    assert (root / "a.txt").exists(), "a file of a folder is never removed"


def test_links_are_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "docs"
    root.mkdir()
    (root / "ok.txt").write_text("ok")
    (root / "file-link.txt").symlink_to(outside / "secret.txt")
    (root / "dir-link").symlink_to(outside)
    (tmp_path / "given-link.txt").symlink_to(outside / "secret.txt")
    items = run(tmp_path, root, tmp_path / "given-link.txt")
    assert files(items) == {"ok.txt": b"ok"}
    assert skipped(items) == {"dir-link": LINK, "file-link.txt": LINK, "given-link.txt": LINK}


def test_hidden_files_and_folders_are_left_out_silently(tmp_path):
    root = tmp_path / "docs"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("x")
    (root / ".DS_Store").write_text("x")
    (root / "__MACOSX").mkdir()
    (root / "__MACOSX" / "a.txt").write_text("x")
    (root / "a.txt").write_text("a")
    assert [str(i) for i in run(tmp_path, root)] == ["a.txt (1 bytes)"]


def test_a_pipe_is_skipped_without_blocking(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    os.mkfifo(root / "pipe.txt")
    assert skipped(run(tmp_path, root)) == {"pipe.txt": SPECIAL}


def test_an_unreadable_file_is_skipped_with_the_reason(request, tmp_path):
    if ran_where_permissions_apply(request, tmp_path):  # root: run where chmod 000 binds
        return
    root = tmp_path / "docs"
    root.mkdir()
    (root / "locked.txt").write_text("x")
    (root / "locked.txt").chmod(0)
    assert "Permission denied" in skipped(run(tmp_path, root))["locked.txt"]


def test_bad_names_on_disk_are_skipped(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "new\nline.txt").write_text("x")
    os.close(os.open(os.path.join(os.fsencode(root), b"latin-\xe9.txt"), os.O_CREAT))
    reasons = skipped(run(tmp_path, root))
    assert "control character" in reasons["new\\u000aline.txt"]
    assert "not valid UTF-8" in next(iter(v for k, v in reasons.items() if "latin" in k))


def test_types_sizes_and_the_file_limit(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    for name in "abcde":
        (root / f"{name}.txt").write_text(name * 10)
    (root / "big.txt").write_text("x" * 101)
    (root / "image.png").write_bytes(b"png")
    (tmp_path / "later.txt").write_text("later")
    items = run(tmp_path, root, tmp_path / "later.txt",
                limits=InputLimits(max_files=3, max_file_bytes=100),
                accept=lambda p: p.endswith(".txt"))
    assert list(files(items)) == ["a.txt", "b.txt", "c.txt"]
    reasons = skipped(items)
    assert "SEARCHAPP_MAX_UPLOAD_BYTES" in reasons["big.txt"]
    assert "SEARCHAPP_MAX_FILES" in reasons["d.txt"]
    assert "SEARCHAPP_MAX_FILES" in reasons["later.txt"]
    assert "e.txt" not in reasons and "image.png" not in reasons, "the ingest stopped at d.txt"


def test_not_accepted_files_say_so(tmp_path):
    (tmp_path / "image.png").write_bytes(b"png")
    assert skipped(run(tmp_path, tmp_path / "image.png", accept=lambda p: False)) == {
        "image.png": NOT_READ}


def test_the_same_path_twice_keeps_the_first(tmp_path):
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_text(folder)
    items = run(tmp_path, tmp_path / "one", tmp_path / "two")
    assert files(items) == {"a.txt": b"one"}
    assert "appears twice" in skipped(items)["a.txt"]


def test_a_missing_path_is_named(tmp_path):
    assert "check the path" in skipped(run(tmp_path, tmp_path / "nope.txt"))["nope.txt"]


# ---- names -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, words", [
    ("../up.txt", '".."'), ("a/../../up.txt", '".."'), ("/etc/passwd", "absolute"),
    ("C:/windows/x.txt", "absolute"), ("c:x.txt", "absolute"), ("a\\..\\up.txt", "backslash"),
    ("nul\x00.txt", "control"), ("bell\x07.txt", "control"), ("c1\x85.txt", "control"),
    ("bad\udce9.txt", "UTF-8"),
    ("/".join(["d"] * 65) + "/f.txt", "deeper than 64"),
    ("/".join(["d" * 200] * 6), "1024 bytes"),
])
def test_unsafe_names_are_refused(name, words):
    with pytest.raises(_Refused, match=words.replace(".", r"\.")):
        clean_path(name)


def test_names_are_normalised():
    assert clean_path("./a//b/./c.txt") == "a/b/c.txt"
    long = clean_path("x" * 256 + ".txt")
    assert len(long.encode()) == 200 and long.endswith(".txt"), "a long name is shortened"
    assert clean_path("rev\u202etxt.md") == "rev%E2%80%AEtxt.md", "bidi overrides escaped"
    assert clean_path("cafe\u0301.txt") == "caf\u00e9.txt"
    assert clean_path("/".join(["d"] * 64) + "/f.txt") is not None, "64 folders are fine"


# ---- zip ---------------------------------------------------------------------------------------
def test_a_zip_is_unpacked_into_the_private_work_folder(tmp_path):
    info = zipfile.ZipInfo("guide/intro.md", date_time=(2024, 5, 6, 7, 8, 10))
    archive = make_zip(tmp_path / "docs.zip", [(info, b"# Intro"), ("notes.txt", b"n")])
    with private_work_dir(tmp_path) as work:
        items = list(iter_inputs([archive], work, InputLimits(), lambda p: True))
        intro = items[0]
        assert (intro.path, intro.size, intro.temporary) == ("guide/intro.md", 7, True)
        assert intro.local.is_relative_to(work) and intro.local.read_bytes() == b"# Intro"
        assert intro.sha256 == hashlib.sha256(b"# Intro").hexdigest()
        assert intro.mtime is not None
        assert intro.mtime == pytest.approx(
            __import__("datetime").datetime(2024, 5, 6, 7, 8, 10).timestamp())
        assert stat.S_IMODE(intro.local.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(intro.local.stat().st_mode) == 0o600
        intro.discard()
        assert not intro.local.exists() and items[1].local.exists()
    assert not work.exists()


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_hostile_zip_members_are_refused_and_nothing_lands_outside(tmp_path):
    archive = make_zip(tmp_path / "evil.zip", [
        ("../escape.txt", b"x"), ("/abs.txt", b"x"), ("C:/drive.txt", b"x"),
        ("a\\..\\..\\back.txt", b"x"), ("ctl\x01.txt", b"x"),
        (zip_info("link.txt", stat.S_IFLNK | 0o777), b"/etc/passwd"),
        (zip_info("dev.txt", stat.S_IFCHR | 0o600), b""),
        (zip_info("fifo.txt", stat.S_IFIFO | 0o600), b""),
        ("dup.txt", b"first"), ("dup.txt", b"second"), ("./dup.txt", b"third"),
        ("n" * 300 + ".txt", b"x"), ("/".join(["d"] * 100) + "/deep.txt", b"x"),
        ("inner.zip", b"PK"), ("inner.tar.gz", b"x"), ("ok.txt", b"ok"),
    ])
    before = listing(tmp_path, tmp_path / "work")
    items = run(tmp_path, archive)
    assert listing(tmp_path, tmp_path / "work") == before
    kept = files(items)
    assert {k: v for k, v in kept.items() if not k.startswith("nnn")} == {
        "dup.txt": b"first", "ok.txt": b"ok"}
    assert [len(k.encode()) for k in kept if k.startswith("nnn")] == [200], "kept, shortened"
    reasons = skipped(items)
    assert '".."' in reasons["../escape.txt"]
    assert "absolute" in reasons["/abs.txt"] and "absolute" in reasons["C:/drive.txt"]
    assert "backslash" in reasons["a\\..\\..\\back.txt"]
    assert "control" in reasons["ctl\\u0001.txt"]
    assert reasons["link.txt"] == LINK
    assert reasons["dev.txt"] == reasons["fifo.txt"] == SPECIAL
    assert "appears twice" in reasons["dup.txt"]
    assert "n" * 300 + ".txt" not in reasons, "a long name is kept, shortened"
    assert "deeper than 64" in reasons["/".join(["d"] * 100) + "/deep.txt"]
    assert reasons["inner.zip"] == reasons["inner.tar.gz"] == NESTED
    assert len(items) == 16


def zeros_zip(path: Path, size: int, name: str = "zeros.txt") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z, \
            z.open(name, "w") as out:
        for _ in range(size >> 20):
            out.write(bytes(1 << 20))
    return path


def test_a_zip_bomb_is_refused_by_its_declared_sizes(tmp_path):
    bomb = zeros_zip(tmp_path / "bomb.zip", 64 << 20)  # 64 MiB of zeros in ~64 KiB
    tracemalloc.start()
    items = run(tmp_path, bomb, limits=InputLimits(max_ratio=20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "SEARCHAPP_MAX_RATIO" in skipped(items)["zeros.txt"]
    assert peak < 4 << 20, f"refusing it took {peak:,} bytes of memory"
    assert list((tmp_path / "work").rglob("*.txt")) == []


def test_a_whole_zip_past_the_unpacked_limit_is_refused_before_anything_is_written(tmp_path):
    archive = make_zip(tmp_path / "three.zip", [(f"{i}.txt", os.urandom(1 << 20))
                                                for i in range(3)])
    items = run(tmp_path, archive, limits=InputLimits(max_total_bytes=(5 << 20) // 2))
    assert [type(i) for i in items] == [Skipped] * 3
    assert all("SEARCHAPP_MAX_UNPACKED_BYTES" in i.reason for i in items)
    assert list((tmp_path / "work").rglob("*.txt")) == []


def test_a_whole_zip_that_expands_too_much_is_refused(tmp_path):
    # each member alone is under the ratio (its 1 MiB floor), the archive is not
    archive = make_zip(tmp_path / "many.zip", [(f"{i}.txt", bytes(100 << 10))
                                               for i in range(40)])
    items = run(tmp_path, archive, limits=InputLimits(max_ratio=2))
    assert len(items) == 40 and all(isinstance(i, Skipped) for i in items)
    assert "many.zip expands more than 2 times" in items[0].reason


def patch_zip_sizes(path: Path, name: bytes, size: int) -> None:
    """Write ``size`` as the declared unpacked size in both headers of member ``name``."""
    data = bytearray(path.read_bytes())
    for signature, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        start = data.find(signature)
        while data[start + name_at:start + name_at + len(name)] != name:
            start = data.find(signature, start + 1)
        data[start + size_at:start + size_at + 4] = size.to_bytes(4, "little")
    path.write_bytes(bytes(data))


def test_a_huge_declared_zip_member_is_refused_unread(tmp_path):
    archive = make_zip(tmp_path / "huge.zip", [("huge.txt", b"tiny"), ("ok.txt", b"ok")])
    patch_zip_sizes(archive, b"huge.txt", 0xFFFFFFF0)
    items = run(tmp_path, archive)
    assert "SEARCHAPP_MAX_UPLOAD_BYTES" in skipped(items)["huge.txt"]
    assert files(items) == {"ok.txt": b"ok"}


def test_a_zip_member_that_lies_about_its_size_is_refused(tmp_path):
    archive = make_zip(tmp_path / "lies.zip", [("lies.txt", b"0123456789" * 10)])
    patch_zip_sizes(archive, b"lies.txt", 5)
    assert "damaged" in skipped(run(tmp_path, archive))["lies.txt"]


def test_too_many_zip_entries_are_counted_before_zipfile_reads_them(tmp_path):
    archive = make_zip(tmp_path / "many.zip", [(f"{i}.txt", b"x") for i in range(5)])
    assert count_zip_entries(open(archive, "rb"), 10) == 5  # noqa: SIM115
    items = run(tmp_path, archive, limits=InputLimits(max_files=3))
    assert [str(i) for i in items] == [
        "many.zip has more than 3 entries (SEARCHAPP_MAX_FILES); split it into smaller archives"]


def test_zip64_entries_are_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 2)  # a zip64 end record for 5 entries
    archive = make_zip(tmp_path / "z64.zip", [(f"{i}" * 100, b"x") for i in range(5)])
    assert b"PK\x06\x06" in archive.read_bytes()
    with open(archive, "rb") as raw:
        assert count_zip_entries(raw, 100) == 5


def test_a_damaged_zip_is_one_line(tmp_path):
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 not really")
    assert "is not a zip archive or is damaged" in skipped(run(tmp_path, tmp_path / "bad.zip"))[
        "bad.zip"]


def test_an_archive_in_a_folder_is_unpacked_under_its_own_path(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    make_zip(root / "pack.zip", [("a.txt", b"a")])
    assert files(run(tmp_path, root)) == {"pack.zip/a.txt": b"a"}


# ---- tar ---------------------------------------------------------------------------------------
def test_hostile_tar_members_are_refused(tmp_path):
    archive = make_tar(tmp_path / "evil.tar.gz", [
        (tar_info("../escape.txt"), b"x"), (tar_info("/etc/abs.txt"), b"x"),
        (tar_info("sym.txt", tarfile.SYMTYPE, linkname="/etc/passwd"), None),
        (tar_info("hard.txt", tarfile.LNKTYPE, linkname="ok.txt"), None),
        (tar_info("dev.txt", tarfile.CHRTYPE, devmajor=1, devminor=3), None),
        (tar_info("fifo.txt", tarfile.FIFOTYPE), None),
        (tar_info("dup.txt"), b"first"), (tar_info("dup.txt"), b"second"),
        (tar_info("n" * 300 + ".txt"), b"x"), (tar_info("/".join(["d"] * 100) + "/x.txt"), b"x"),
        (tar_info("inner.tgz"), b"x"), (tar_info("folder", tarfile.DIRTYPE), None),
        (tar_info("ok.txt", mtime=1_700_000_000), b"ok"),
    ], mode="w:gz")
    before = listing(tmp_path, tmp_path / "work")
    items = run(tmp_path, archive)
    assert listing(tmp_path, tmp_path / "work") == before
    kept = files(items)
    assert {k: v for k, v in kept.items() if not k.startswith("nnn")} == {
        "dup.txt": b"first", "ok.txt": b"ok"}
    assert [len(k.encode()) for k in kept if k.startswith("nnn")] == [200], "kept, shortened"
    assert [i.mtime for i in items if i.path == "ok.txt"] == [1_700_000_000.0]
    reasons = skipped(items)
    assert '".."' in reasons["../escape.txt"] and "absolute" in reasons["/etc/abs.txt"]
    assert reasons["sym.txt"] == reasons["hard.txt"] == LINK
    assert reasons["dev.txt"] == reasons["fifo.txt"] == SPECIAL
    assert "appears twice" in reasons["dup.txt"]
    assert "n" * 300 + ".txt" not in reasons, "a long name is kept, shortened"
    assert "deeper than 64" in reasons["/".join(["d"] * 100) + "/x.txt"]
    assert reasons["inner.tgz"] == NESTED
    assert len(items) == 12


def test_a_huge_declared_tar_member_is_refused_unread(tmp_path):
    archive = make_tar(tmp_path / "huge.tar", [(tar_info("ok.txt"), b"ok"),
                                               (tar_info("huge.txt", size=8 << 30), None)])
    items = run(tmp_path, archive)
    assert files(items) == {"ok.txt": b"ok"}
    reasons = skipped(items)
    assert "SEARCHAPP_MAX_UPLOAD_BYTES" in reasons["huge.txt"]
    assert "more than the archive" in reasons["huge.tar"]


def zeros_tar_gz(path: Path, size: int) -> Path:
    class Zeros(io.RawIOBase):
        left = size

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            n = min(len(buffer), self.left)
            buffer[:n] = bytes(n)
            self.left -= n
            return n

    with tarfile.open(path, "w:gz", compresslevel=9) as t:
        t.addfile(tar_info("zeros.txt", size=size), io.BufferedReader(Zeros()))
    return path


def test_a_tar_gz_bomb_stops_while_it_streams(tmp_path):
    bomb = zeros_tar_gz(tmp_path / "bomb.tar.gz", 48 << 20)
    tracemalloc.start()
    items = run(tmp_path, bomb, limits=InputLimits(max_ratio=5))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    reasons = skipped(items)
    assert "SEARCHAPP_MAX_RATIO" in reasons["zeros.txt"]
    assert peak < 8 << 20, f"it took {peak:,} bytes of memory"
    assert list((tmp_path / "work").rglob("*.txt")) == [], "the partial file is removed"


def test_a_tar_stops_at_the_unpacked_limit_while_it_streams(tmp_path):
    archive = make_tar(tmp_path / "three.tar", [(tar_info(f"{i}.txt"), os.urandom(1 << 20))
                                                for i in range(3)])
    items = run(tmp_path, archive, limits=InputLimits(max_total_bytes=(5 << 20) // 2))
    assert list(files(items)) == ["0.txt", "1.txt"]
    assert "SEARCHAPP_MAX_UNPACKED_BYTES" in skipped(items)["2.txt"]


def test_a_damaged_tar_is_one_line(tmp_path):
    (tmp_path / "bad.tar.gz").write_bytes(b"\x1f\x8b not gzip")
    assert "is not a tar archive or is damaged" in skipped(
        run(tmp_path, tmp_path / "bad.tar.gz"))["bad.tar.gz"]


# ---- any name ----------------------------------------------------------------------------------
PIECES = st.sampled_from(["..", ".", "/", "\\", "C:", "~", "a", "\u0301", "e\u0301", "\n",
                          ".hidden", "x.txt", "\x00", "\u202e"])
NAMES = st.lists(PIECES | st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
                 max_size=8).map("".join)


def check_inputs(items, work: Path) -> None:
    for item in items:
        if isinstance(item, InputFile):
            assert item.local.resolve().is_relative_to(work.resolve())
            parts = PurePosixPath(item.path).parts
            assert parts and ".." not in parts and not item.path.startswith("/")
            assert PurePosixPath(item.path).as_posix() == item.path == clean_path(item.path)
            assert unicodedata.is_normalized("NFC", item.path)
        else:
            assert item.reason


@pytest.mark.filterwarnings("ignore:Duplicate name")
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=1, max_size=4))
def test_any_member_names_stay_inside_the_work_folder(tmp_path_factory, names):
    tmp = tmp_path_factory.mktemp("names")
    zipped = make_zip(tmp / "a.zip", [(zipfile.ZipInfo(n), b"z") for n in names])
    tarred = make_tar(tmp / "a.tar", [(tar_info(n), b"t") for n in names if n])
    before = listing(tmp, tmp / "work")
    for archive in (zipped, tarred):
        items = list(iter_inputs([archive], tmp / "work", InputLimits(), lambda p: True))
        check_inputs(items, tmp / "work")
    assert listing(tmp, tmp / "work") == before


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["zip", "tar.gz", "tar"]),
       edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1,
                      max_size=6),
       cut=st.none() | st.integers(0, 10**6))
def test_damaged_archives_are_lines_never_exceptions(tmp_path_factory, kind, edits, cut):
    tmp = tmp_path_factory.mktemp("damaged")
    path = tmp / f"a.{kind}"
    if kind == "zip":
        make_zip(path, [("a.txt", b"alpha " * 50), ("b/c.txt", b"beta")])
    else:
        make_tar(path, [(tar_info("a.txt"), b"alpha " * 50), (tar_info("b/c.txt"), b"beta")],
                 mode="w:gz" if kind == "tar.gz" else "w")
    data = bytearray(path.read_bytes())
    for at, value in edits:
        data[at % len(data)] = value
    path.write_bytes(bytes(data[:cut % len(data)] if cut is not None else data))
    before = listing(tmp, tmp / "work")
    items = list(iter_inputs([path], tmp / "work", InputLimits(), lambda p: True))
    check_inputs(items, tmp / "work")
    assert listing(tmp, tmp / "work") == before
