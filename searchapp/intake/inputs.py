"""The files of one ingest: files, folders and archives as a stream of checked input files.

``iter_inputs`` takes what a person gave (one file, many, a folder, an archive:
.zip, .tar, .tar.gz/.tgz, .tar.bz2, .tar.xz) and yields, one at a time, an
``InputFile`` (a real file on disk to read, its path relative to the folder or
archive root, size, mtime and SHA-256) or a ``Skipped`` line that says which
file was left out, why, and what to do. Files are never trusted:

- Links are never followed, devices, pipes and sockets never opened; hidden
  files and folders (a name starting with ".", and ``__MACOSX``) are left out
  without a line. A folder is walked from descriptors: the folder given is opened
  once (O_NOFOLLOW), each subfolder and file by its name in its open parent
  (O_NOFOLLOW), so one swapped for a link while the walk runs is left out, never
  followed out of the folder.
- A name must be clean: relative, no "..", no backslash, drive letter, NUL or
  control character, valid UTF-8, at most 1024 bytes and 64 folders deep; each part
  is then written by the rule of ``names`` (NFC, bidi and zero-width characters
  escaped, at most 200 bytes with a hash of the rest), so its path is the id a
  front end can name. The same path twice keeps the first; two names that become
  one path only by that rule (NFC and NFD) are both kept, the second as
  ``café (2).md``, with a ``note`` for the report.
- An archive is read member by member: every member is checked before anything
  is written, and what is unpacked is counted while it streams, 1 MiB at a time,
  into files named by a counter (never by the member's name) in a private folder
  inside ``work_dir`` (0700, files created O_EXCL|O_NOFOLLOW). A zip's declared
  sizes are checked first and then not trusted; a tar is counted as it streams.
  An archive inside an archive is not unpacked.
- Limits (``InputLimits``): files per ingest, bytes per file, bytes unpacked per
  ingest, and how many times an archive may expand its own size (a zip bomb stops
  at the limit, at a cost of 1 MiB of memory).

A file that is there but cannot be read now (no permission, a folder that
cannot be listed, a file still being written: changed within ``settle`` seconds
or while it was hashed) is a ``Skipped`` line with ``keep`` set: an ingest that
removes vanished files (``--sync``, a watched folder) keeps what it stored for
it, and for everything ``under`` a folder it could not list, and tries again.

Unpacked files stay until the caller is done with them: ``InputFile.discard()``
removes one, and ``private_work_dir()`` removes the whole folder at the end.

Example:
    >>> import tempfile, zipfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with zipfile.ZipFile(root / "docs.zip", "w") as z:
    ...     z.writestr("guide/intro.md", "# Hello")
    ...     z.writestr("../escape.md", "no")
    ...     z.writestr("logo.png", "...")
    >>> with private_work_dir(root) as work:
    ...     for item in iter_inputs([root / "docs.zip"], work, InputLimits(),
    ...                             accept=lambda path: path.endswith(".md")):
    ...         print(item)
    guide/intro.md (7 bytes)
    ../escape.md has ".." in its path, which points outside the archive; ...
    logo.png is not a type we read
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import lzma
import os
import re
import shutil
import stat
import struct
import tarfile
import tempfile
import time
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from searchapp.config import size_words
from searchapp.corpora.names import distinct, segment
from searchapp.intake.formats.zipsafe import open_member
from searchapp.reporting import one_line, printable
from searchapp.store.tarsafe import TarHeaderRefused, open_tar

CHUNK = 1 << 20  # bytes read, hashed and written at a time
MAX_PATH_BYTES = 1024
MAX_DEPTH = 64  # folders above a file
MAX_SHOWN = MAX_PATH_BYTES + 100  # characters of a refused name shown in its line
RATIO_FLOOR = 1 << 20  # compressed bytes: below this the ratio is counted against 1 MiB
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
TAR_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError)
ZIP_ERRORS = (zipfile.BadZipFile, OSError, EOFError, zlib.error, lzma.LZMAError,
              NotImplementedError, RuntimeError, ValueError, struct.error)
LINK = "is a link; links are not followed (copy the file into the folder instead)"
SPECIAL = "is not a regular file (a device, pipe or socket); only files are read"
NOT_READ = "is not a type we read"
NESTED = "is an archive inside an archive; unpack it and add it on its own"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class InputLimits:
    """What one ingest may cost. ``max_files``: files read (and entries in one archive);
    ``max_file_bytes``: one file, unpacked; ``max_total_bytes``: all that is unpacked from
    archives; ``max_ratio``: unpacked bytes per byte of an archive (counted from 1 MiB)."""

    max_files: int = 100_000
    max_file_bytes: int = 1 << 30
    max_total_bytes: int = 4 << 30
    max_ratio: int = 200

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> InputLimits:
        """``SEARCHAPP_MAX_UPLOAD_BYTES`` (bytes per file), ``SEARCHAPP_MAX_FILES``,
        ``SEARCHAPP_MAX_UNPACKED_BYTES`` and ``SEARCHAPP_MAX_RATIO``.

        Example:
            >>> InputLimits.from_env({"SEARCHAPP_MAX_UPLOAD_BYTES": "10M"}).max_file_bytes
            10485760
        """
        from searchapp.config import max_upload_bytes, parse_size
        from searchapp.errors import ConfigError

        env = os.environ if env is None else env
        values = {"max_file_bytes": max_upload_bytes(env)}
        for key, name, parse in (("max_files", "SEARCHAPP_MAX_FILES", int),
                                 ("max_total_bytes", "SEARCHAPP_MAX_UNPACKED_BYTES", parse_size),
                                 ("max_ratio", "SEARCHAPP_MAX_RATIO", int)):
            raw = (env.get(name) or "").strip()
            try:
                if raw and parse(raw) > 0:
                    values[key] = parse(raw)
                elif raw:
                    raise ValueError(raw)
            except ValueError:
                raise ConfigError(f"{name}={raw!r} is not a positive number; e.g. "
                                  f"{getattr(cls, key)}.") from None
        return cls(**values)


@dataclass(frozen=True)
class InputFile:
    """One file to read: ``path`` relative to the folder or archive root (POSIX, NFC),
    ``local`` a real file on disk, ``temporary`` when it was unpacked into the work folder."""

    path: str
    local: Path
    size: int
    mtime: float | None
    sha256: str
    temporary: bool = False
    note: str = ""  # for the report: the path was made distinct from another name's
    # a file of a folder: its bytes copied from the descriptor they were hashed from (see
    # ``_Run.pin``), valid until the next file is taken from ``iter_inputs``
    pin: Callable[[], InputFile | Skipped] | None = field(default=None, compare=False,
                                                          repr=False)

    def discard(self) -> None:
        """Remove the unpacked copy (a file of a folder is left alone)."""
        if self.temporary:
            self.local.unlink(missing_ok=True)

    def __str__(self) -> str:
        return f"{self.path} ({self.size:,} bytes)"


UNREADABLE = "unreadable"  # there, but not readable now (permissions, a lock, an I/O error)
WAITING = "waiting"  # still being written: read once it is left alone
STOPPED = "stopped"  # not looked at: the ingest reached its limit of files


@dataclass(frozen=True)
class Skipped:
    """A file left out: ``path`` as the person knows it (escaped), ``reason`` why and what
    to do, worded to follow the path: ``f"{path} {reason}"``.

    ``keep``: "" when the file is not one we read; ``UNREADABLE``, ``WAITING`` or
    ``STOPPED`` when it is there and what was stored for it must stay. ``under``: the
    relative folder ("" the whole root) that could not be listed: every stored file
    below it stays too."""

    path: str
    reason: str
    keep: str = ""
    under: str | None = None

    def __str__(self) -> str:
        return f"{self.path} {self.reason}"


class _Full(Exception):
    """The ingest has all the files it may take: ``path`` and everything after it is left out."""

    def __init__(self, path: str, reason: str):
        super().__init__(reason)
        self.path, self.reason = path, reason


class _Refused(Exception):
    """A member or entry is left out; ``stop``: and the rest of its archive."""

    def __init__(self, reason: str, stop: bool = False, keep: str = ""):
        super().__init__(reason)
        self.reason, self.stop, self.path, self.keep = reason, stop, "", keep


@contextmanager
def private_work_dir(parent: Path | None = None) -> Iterator[Path]:
    """A new private (0700) folder for unpacked files, removed with all it holds at the end."""
    folder = Path(tempfile.mkdtemp(prefix="searchapp-inputs-", dir=parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def is_archive(path: str) -> bool:
    """Whether the name says archive (.zip, .tar, .tar.gz, .tgz, ...).

    Example:
        >>> is_archive("a/Report.TAR.GZ"), is_archive("notes.gz")
        (True, False)
    """
    return path.lower().endswith(ARCHIVES)


def clean_path(name: str) -> str | None:
    """``name`` as a relative POSIX path in NFC, or None for a folder or a hidden file;
    raises ``_Refused`` with the reason when the name is unsafe.

    Example:
        >>> clean_path("./guide//intro.md"), clean_path(".git/config"), clean_path("")
        ('guide/intro.md', None, None)
    """
    _check_characters(name)
    parts = [p for p in unicodedata.normalize("NFC", name).split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _Refused('has ".." in its path, which points outside the archive; make the '
                       "archive again from inside its folder")
    parts = [p for p in (segment(part, "") for part in parts) if p]  # as ids are written
    if not parts or parts[0] == "__MACOSX" or any(p.startswith(".") for p in parts):
        return None
    if len(parts) > MAX_DEPTH + 1:
        raise _Refused(f"is nested deeper than {MAX_DEPTH} folders; move it up")
    path = "/".join(parts)
    if len(path.encode()) > MAX_PATH_BYTES:
        raise _Refused(f"has a path longer than {MAX_PATH_BYTES} bytes; shorten it")
    return path


def _check_characters(name: str) -> None:
    if _CONTROL.search(name):
        raise _Refused("has a control character in its name; rename it")
    try:
        name.encode()
    except UnicodeEncodeError:
        raise _Refused("has a name that is not valid UTF-8; rename it") from None
    if "\\" in name:
        raise _Refused('has a backslash in its name; rename it, or make the archive with a '
                       'tool that writes "/" between folders')
    if name.startswith("/") or _DRIVE.match(name):
        raise _Refused("has an absolute path; make the archive with paths relative to its "
                       "folder")


def iter_inputs(paths: Sequence[Path], work_dir: Path, limits: InputLimits,
                accept: Callable[[str], bool | str], settle: float = 0.0,
                names: Mapping[str, str] | None = None,
                identity: tuple[int, int] | None = None) -> Iterator[InputFile | Skipped]:
    """Each file of ``paths`` (files, folders, archives) that ``accept(path)`` takes, checked,
    or a ``Skipped`` line; members of archives are unpacked into ``work_dir``. ``accept``
    returns True, or False ("is not a type we read") or the reason a file is left out.

    ``settle``: a file changed less than this many seconds ago is ``WAITING``, not read
    (a watched folder's file being saved in pieces). ``names``: the name a given file is
    known by, where it is not its name on disk (an upload, ``staging``). ``identity``: the
    (st_dev, st_ino) a folder given must have (a watched folder: the one added); another
    folder found there is not read (``UNREADABLE``: what was stored for it stays)."""
    for _, item in iter_rooted(paths, work_dir, limits, accept, settle, names, identity):
        yield item


def iter_rooted(paths: Sequence[Path], work_dir: Path, limits: InputLimits,
                accept: Callable[[str], bool | str], settle: float = 0.0,
                names: Mapping[str, str] | None = None,
                identity: tuple[int, int] | None = None
                ) -> Iterator[tuple[int, InputFile | Skipped]]:
    """``iter_inputs``, each item with the index in ``paths`` of the path it came from (the
    source that brought it), under one set of limits for them all."""
    run = _Run(limits, accept, _private_folder(work_dir), settle=settle, identity=identity)
    try:
        for number, given in enumerate(paths):
            try:
                for item in run.given(Path(given), (names or {}).get(str(given))):
                    yield number, item
            except _Full as full:
                yield number, Skipped(full.path, full.reason, STOPPED, under="")
                for later, rest in enumerate(paths[number + 1:], number + 1):
                    yield later, Skipped(_shown(Path(rest).name), full.reason, STOPPED,
                                         under="")
                return
    finally:
        run.release()


def _private_folder(work_dir: Path) -> Path:
    work_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not stat.S_ISDIR(os.lstat(work_dir).st_mode):
        raise NotADirectoryError(f"{work_dir} is not a folder")
    return Path(tempfile.mkdtemp(prefix="unpacked-", dir=work_dir))


def _shown(name: str) -> str:
    return printable(unicodedata.normalize("NFC", name))


def _plain(name: str) -> str:
    """A member's name without empty and "." parts (``./a//b`` is ``a/b``), as it was."""
    return "/".join(p for p in name.split("/") if p not in ("", "."))


def _join(prefix: str, path: str) -> str:
    return f"{prefix}/{path}" if prefix else path



@dataclass
class _Run:
    """The state of one ``iter_inputs``: limits, paths seen, files and bytes so far."""

    limits: InputLimits
    accept: Callable[[str], bool | str]
    work: Path
    files: int = 0
    unpacked: int = 0
    seen: set[str] = field(default_factory=set)
    settle: float = 0.0
    raw: dict[str, str] = field(default_factory=dict)  # path -> the name it was made from
    notes: dict[str, str] = field(default_factory=dict)  # path -> why it was made distinct
    identity: tuple[int, int] | None = None
    held: tuple[int, int] | None = None  # (descriptor, number) of the last file hashed
    hashed: int = 0

    # ---- what was given, folders, files of folders -------------------------------------------
    def given(self, path: Path, known_as: str | None = None) -> Iterator[InputFile | Skipped]:
        name = _shown(known_as or path.name or str(path))
        try:
            mode = os.lstat(path).st_mode
        except OSError as e:
            yield Skipped(name, f"cannot be read ({e.strerror}); check the path", UNREADABLE,
                          under="")
            return
        if stat.S_ISDIR(mode):
            yield from self.top_folder(path, name)
            return
        try:
            clean = clean_path(known_as or path.name) or name  # a hidden file named on its own
        except _Refused as refused:
            yield Skipped(name, refused.reason)
            return
        yield from self.entry(path, clean, mode, prefix="")

    def top_folder(self, path: Path, name: str) -> Iterator[InputFile | Skipped]:
        """A folder given: opened once, never through a link at its end, and (``identity``)
        only when it is the folder expected; everything below it is reached from that
        descriptor, so nothing swapped for a link above or inside it leads the walk out."""
        try:
            fd = os.open(path, _DIR_FLAGS)
        except OSError as e:
            yield Skipped(name, f"cannot be read ({e.strerror}); check the path", UNREADABLE,
                          under="")
            return
        try:
            info = os.fstat(fd)
            if self.identity is not None and (info.st_dev, info.st_ino) != self.identity:
                yield Skipped(name, "is not the folder that was added (replaced, or reached "
                                    "through a link now); nothing in it was read", UNREADABLE,
                              under="")
                return
            yield from self.folder(path, "", fd)
        finally:
            os.close(fd)

    def folder(self, folder: Path, prefix: str, fd: int) -> Iterator[InputFile | Skipped]:
        """The files below the open folder ``fd`` (shown as ``folder``); each subfolder is
        opened from ``fd`` with O_NOFOLLOW: one swapped for a link is never entered."""
        try:
            with os.scandir(fd) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as e:
            yield Skipped(prefix or _shown(folder.name),
                          f"cannot be read ({e.strerror}); check its permissions", UNREADABLE,
                          under=prefix)
            return
        for entry in entries:
            shown = _shown(_join(prefix, entry.name))
            try:
                path = clean_path(_join(prefix, entry.name))
                mode = entry.stat(follow_symlinks=False).st_mode
            except _Refused as refused:
                yield Skipped(shown, refused.reason)
                continue
            except OSError as e:
                yield Skipped(shown, f"cannot be read ({e.strerror}); check its permissions",
                              UNREADABLE, under=shown)
                continue
            if path is None:
                continue
            if stat.S_ISDIR(mode) and path.count("/") >= MAX_DEPTH:
                yield Skipped(path, f"is nested deeper than {MAX_DEPTH} folders; move it up")
            elif stat.S_ISDIR(mode):
                yield from self.subfolder(folder / entry.name, path, fd)
            else:
                path = self.twin(path, _join(prefix, entry.name))
                yield from self.entry(folder / entry.name, path, mode, prefix=path, dir_fd=fd)

    def subfolder(self, folder: Path, rel: str, parent: int) -> Iterator[InputFile | Skipped]:
        try:
            fd = os.open(folder.name, _DIR_FLAGS, dir_fd=parent)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link (or a file)
                yield Skipped(rel, LINK)
            else:
                yield Skipped(rel, f"cannot be read ({e.strerror}); check its permissions",
                              UNREADABLE, under=rel)
            return
        try:
            yield from self.folder(folder, rel, fd)
        finally:
            os.close(fd)

    def entry(self, path: Path, rel: str, mode: int, prefix: str,
              dir_fd: int | None = None) -> Iterator[InputFile | Skipped]:
        """A file of a folder (``dir_fd``: opened by its name there) or given: an archive is
        unpacked with ``prefix`` before its members' paths."""
        if stat.S_ISLNK(mode):
            yield Skipped(rel, LINK)
        elif not stat.S_ISREG(mode):
            yield Skipped(rel, SPECIAL)
        elif is_archive(rel):
            yield from self.archive(path, rel, prefix, dir_fd)
        else:
            refused = self.admit(rel, 0)
            yield refused or self.take(rel, lambda: self.read_file(path, rel, dir_fd))

    def read_file(self, path: Path, rel: str, dir_fd: int | None = None) -> InputFile:
        """A file of a folder (or given), hashed from one descriptor that stays open until
        the next file: ``pin`` copies the bytes from it, never from the path again."""
        fd = _open_plain(path, dir_fd)
        try:
            st = os.fstat(fd)
            self.check_settled(st.st_mtime)
            self.check_size(st.st_size)
            digest, size = hashlib.sha256(), 0
            with os.fdopen(fd, "rb", closefd=False) as f:
                while chunk := f.read(CHUNK):
                    size += len(chunk)
                    self.check_size(size)
                    digest.update(chunk)
            after = os.fstat(fd)
            if (after.st_size, after.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
                raise _Refused("changed while it was read (still being written?); it is read "
                               "again once it is left alone", keep=WAITING)
        except BaseException:
            os.close(fd)
            raise
        self.release()
        self.hashed += 1
        self.held = (fd, self.hashed)
        found = InputFile(rel, path, size, st.st_mtime, digest.hexdigest())
        return dataclasses.replace(found, pin=lambda n=self.hashed: self.pin(found, n))

    def release(self) -> None:
        """Close the descriptor of the last file hashed."""
        if self.held is not None:
            os.close(self.held[0])
            self.held = None

    def pin(self, found: InputFile, number: int) -> InputFile | Skipped:
        """``found``'s bytes copied into the work folder from the descriptor they were
        hashed from, checked against that hash (what is read and kept is what was hashed,
        whatever is put at the path meanwhile); ``WAITING`` when they changed, or when the
        walk has moved on."""
        changed = Skipped(found.path, "changed while it was read (still being written?); it "
                                      "is read again once it is left alone", WAITING)
        if self.held is None or self.held[1] != number:
            return changed
        fd = self.held[0]
        suffix = "".join(re.findall(r"\.[A-Za-z0-9]{1,16}$", found.path)).lower()
        local = self.work / f"pinned-{number:07d}{suffix}"
        out = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o600)
        digest, size = hashlib.sha256(), 0
        with os.fdopen(out, "wb") as copy:
            while chunk := os.pread(fd, CHUNK, size):
                size += len(chunk)
                digest.update(chunk)
                copy.write(chunk)
                if size > found.size:
                    break
        if (size, digest.hexdigest()) != (found.size, found.sha256):
            local.unlink(missing_ok=True)
            return changed
        return InputFile(found.path, local, size, found.mtime, found.sha256, temporary=True)

    def check_settled(self, mtime: float) -> None:
        """A file changed within ``settle`` seconds is still being written: read it later."""
        age = time.time() - mtime
        if self.settle and -1.0 < age < self.settle:  # a clock ahead of ours is not "writing"
            raise _Refused(f"changed {max(age, 0):.1f} s ago (still being written?); it is "
                           f"read once it has been left alone for {self.settle:g} s",
                           keep=WAITING)

    def twin(self, path: str, raw: str) -> str:
        """``path``, or a distinct one (with a note) when another name became it too."""
        first = self.raw.setdefault(path, raw)
        if first == raw:
            return path  # new, or the same name again: "appears twice"
        fresh = distinct(path, self.seen | self.raw.keys())
        self.raw[fresh] = raw
        self.notes[fresh] = (f"{fresh}: {_shown(first)!r} and {_shown(raw)!r} are one name "
                             f"once written as an id ({path!r}); both are kept, the second "
                             f"as {fresh!r}.")
        return fresh

    # ---- the checks every file and member passes ----------------------------------------------
    def admit(self, rel: str, size: int) -> Skipped | None:
        """Why the file ``rel`` of declared ``size`` is left out, or None to read it."""
        try:
            if rel in self.seen:
                raise _Refused("appears twice; the first one was read")
            self.seen.add(rel)
            verdict = self.accept(rel)
            if not verdict or isinstance(verdict, str):  # False, or why not in words
                raise _Refused(verdict or NOT_READ)
            self.check_size(size)
        except _Refused as refused:
            return Skipped(rel, refused.reason)
        return None

    def take(self, rel: str, read: Callable[[], InputFile]) -> InputFile | Skipped:
        """``read()`` the admitted file ``rel``; a stop (too many files, bytes) is raised."""
        if self.files >= self.limits.max_files:
            raise _Full(rel, f"was not read: this ingest stops at {self.limits.max_files:,} "
                             "files (SEARCHAPP_MAX_FILES); add it and the files after it in "
                             "another ingest")
        try:
            found = read()
        except _Refused as refused:
            if refused.stop:
                refused.path = rel
                raise
            return Skipped(rel, refused.reason, refused.keep)
        except OSError as e:
            return Skipped(rel, f"cannot be read ({e.strerror}); check its permissions",
                           UNREADABLE)
        self.files += 1
        note = self.notes.pop(rel, "")
        return replace(found, note=note) if note else found

    def check_size(self, size: int) -> None:
        if size > self.limits.max_file_bytes:
            raise _Refused(f"is larger than {size_words(self.limits.max_file_bytes)}, the "
                           "limit for one file (SEARCHAPP_MAX_UPLOAD_BYTES); split it or raise "
                           "the limit")

    def check_total(self, more: int) -> None:
        if self.unpacked + more > self.limits.max_total_bytes:
            raise _Refused(f"was not unpacked: this ingest unpacks at most "
                           f"{size_words(self.limits.max_total_bytes)} from archives "
                           "(SEARCHAPP_MAX_UNPACKED_BYTES); unpack it yourself and add the "
                           "folder, or raise the limit", stop=True)

    def check_ratio(self, expanded: int, packed: int, what: str = "it") -> None:
        if expanded > self.limits.max_ratio * max(packed, RATIO_FLOOR):
            raise _Refused(f"was not unpacked: {what} expands more than {self.limits.max_ratio} "
                           "times its packed size, as a zip bomb does (SEARCHAPP_MAX_RATIO); "
                           "unpack it yourself if you trust it and add the folder", stop=True)

    # ---- archives ---------------------------------------------------------------------------
    def archive(self, path: Path, rel: str, prefix: str,
                dir_fd: int | None = None) -> Iterator[InputFile | Skipped]:
        try:
            with os.fdopen(_open_plain(path, dir_fd), "rb") as raw:
                reader = unpack_zip if rel.lower().endswith(".zip") else unpack_tar
                yield from reader(self, raw, rel, prefix)
        except OSError as e:
            yield Skipped(rel, f"cannot be read ({e.strerror}); check its permissions")
        except _Refused as refused:
            if refused.stop:
                raise
            yield Skipped(rel, refused.reason)

    def member(self, name: str, prefix: str, kind: str, size: int) -> str | Skipped | None:
        """The path of a member to unpack, why it is left out, or None (a folder, hidden);
        ``kind`` is "file", "dir", "link" or "special"."""
        try:
            clean = clean_path(name)
        except _Refused as refused:  # the name as given, cut: a header may hold 64 KiB
            return Skipped(one_line(_shown(_join(prefix, name)), MAX_SHOWN), refused.reason)
        if clean is None or kind == "dir":
            return None
        path = self.twin(_join(prefix, clean), _join(prefix, _plain(name)))
        if kind != "file":
            return Skipped(path, LINK if kind == "link" else SPECIAL)
        if is_archive(clean):
            return Skipped(path, NESTED)
        return self.admit(path, size) or path

    def unpack(self, src: BinaryIO, rel: str, mtime: float | None,
               check: Callable[[int], None]) -> InputFile:
        """``src`` copied into the work folder, 1 MiB at a time, every byte counted:
        ``check(bytes so far)`` before each write."""
        suffix = "".join(re.findall(r"\.[A-Za-z0-9]{1,16}$", rel)).lower()
        local = self.work / f"{self.files + 1:07d}{suffix}"
        fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        digest, size = hashlib.sha256(), 0
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := src.read(CHUNK):
                    size += len(chunk)
                    self.check_size(size)
                    self.check_total(size)
                    check(size)
                    digest.update(chunk)
                    out.write(chunk)
        except BaseException:
            local.unlink(missing_ok=True)
            raise
        self.unpacked += size
        return InputFile(rel, local, size, mtime, digest.hexdigest(), temporary=True)


def _open_plain(path: Path, dir_fd: int | None = None) -> int:
    """A read-only descriptor of a regular file (``dir_fd``: its name in that open folder);
    never a link, never blocks on a pipe."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path.name if dir_fd is not None else path, flags, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:  # swapped for a link since it was listed
            raise _Refused(LINK) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _Refused(SPECIAL)
    return fd




# ---- zip -------------------------------------------------------------------------------------
def unpack_zip(run: _Run, raw: BinaryIO, name: str,
               prefix: str) -> Iterator[InputFile | Skipped]:
    """A zip's members: counted and checked by name and declared size before anything is
    written, then unpacked one by one with every byte counted."""
    limit = run.limits.max_files
    try:
        if count_zip_entries(raw, limit) > limit:
            yield Skipped(name, f"has more than {limit:,} entries (SEARCHAPP_MAX_FILES); split "
                                "it into smaller archives")
            return
        archive = zipfile.ZipFile(raw)
    except ZIP_ERRORS as e:
        yield Skipped(name, f"is not a zip archive or is damaged ({e}); check that it opens "
                            "on your computer")
        return
    with archive:
        plan = [_zip_plan(run, info, prefix) for info in archive.infolist()]
        stop = _zip_totals(run, plan, os.fstat(raw.fileno()).st_size, name)
        for step in plan:
            if isinstance(step, Skipped):
                yield step
            elif step is None:
                continue
            elif stop:
                yield Skipped(step[0], stop.reason)
            else:
                try:
                    yield run.take(step[0], lambda s=step: _zip_member(run, archive, *s))
                except _Refused as refused:
                    stop = refused
                    yield Skipped(step[0], stop.reason)


def _zip_plan(run: _Run, info: zipfile.ZipInfo,
              prefix: str) -> tuple[str, zipfile.ZipInfo] | Skipped | None:
    mode = info.external_attr >> 16 if info.create_system == 3 else 0
    kind = ("dir" if info.filename.endswith("/") or stat.S_ISDIR(mode) else
            "link" if stat.S_ISLNK(mode) else
            "file" if stat.S_ISREG(mode) or not stat.S_IFMT(mode) else "special")
    found = run.member(info.filename, prefix, kind, info.file_size)
    if not isinstance(found, str):
        return found
    if info.flag_bits & 0x1:
        return Skipped(found, "is encrypted; unpack it with its password and add the file")
    try:
        run.check_ratio(info.file_size, info.compress_size)
    except _Refused as refused:
        return Skipped(found, refused.reason)
    return found, info


def _zip_totals(run: _Run, plan: list, archive_bytes: int, name: str) -> _Refused | None:
    """Why the whole archive is refused by its declared sizes, before anything is written."""
    declared = sum(step[1].file_size for step in plan if isinstance(step, tuple))
    try:
        run.check_total(declared)
        run.check_ratio(declared, archive_bytes, what=name)
    except _Refused as refused:
        return refused
    return None


def _zip_member(run: _Run, archive: zipfile.ZipFile, path: str,
                info: zipfile.ZipInfo) -> InputFile:
    try:
        with open_member(archive, info) as src:  # bounded reads, bzip2 and LZMA too
            return run.unpack(src, path, _zip_time(info.date_time),
                              lambda size: run.check_ratio(size, info.compress_size))
    except ZIP_ERRORS as e:
        raise _Refused(f"is damaged in the archive ({e}); check that it unpacks on your "
                       "computer") from None


def _zip_time(date_time: tuple[int, ...]) -> float | None:
    try:
        return datetime(*date_time).timestamp()
    except (ValueError, OverflowError):
        return None


def count_zip_entries(raw: BinaryIO, limit: int) -> int:
    """The entries in a zip's central directory, counted from its bytes (at most
    ``limit + 1``), before ``zipfile`` builds an object for each.

    Example:
        >>> import io
        >>> buf = io.BytesIO()
        >>> with zipfile.ZipFile(buf, "w") as z:
        ...     for i in range(5): z.writestr(f"{i}.txt", "x")
        >>> count_zip_entries(buf, 100), count_zip_entries(buf, 3)
        (5, 4)
    """
    start, size = _central_directory(raw)
    raw.seek(start)
    count = 0
    while count <= limit and raw.tell() < start + size:
        header = raw.read(46)
        if len(header) < 46 or header[:4] != b"PK\x01\x02":
            count = max(count, size // 46)  # not walkable: as many as could fit
            break
        name, extra, comment = struct.unpack("<HHH", header[28:34])
        raw.seek(name + extra + comment, os.SEEK_CUR)
        count += 1
    raw.seek(0)
    return count


def _central_directory(raw: BinaryIO) -> tuple[int, int]:
    """(start, size) of the central directory, from the end records; zipfile reports the
    damage where they are missing."""
    end = raw.seek(0, os.SEEK_END)
    raw.seek(max(0, end - (1 << 16) - 22))
    tail = raw.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        raise zipfile.BadZipFile("no end of central directory")
    size, = struct.unpack("<I", tail[at + 12:at + 16])
    record = end - len(tail) + at
    locator = tail[at - 20:at] if at >= 20 else b""
    if locator[:4] == b"PK\x06\x07":  # zip64: its own end record lies before the locator
        for zip64_at in (struct.unpack("<Q", locator[8:16])[0], record - 20 - 56):
            raw.seek(max(0, zip64_at))
            zip64 = raw.read(56)
            if zip64[:4] == b"PK\x06\x06" and len(zip64) == 56:
                size, = struct.unpack("<Q", zip64[40:48])
                return zip64_at - size, size
    return record - size, size


# ---- tar -------------------------------------------------------------------------------------
def unpack_tar(run: _Run, raw: BinaryIO, name: str,
               prefix: str) -> Iterator[InputFile | Skipped]:
    """A tar's members as they stream (plain, gzip, bzip2 or xz): each checked by name and
    declared size, unpacked bytes counted, and the stream's expansion counted against the
    packed bytes read."""
    entries = 0
    try:
        with open_tar(raw) as archive:  # headers capped: see store.tarsafe
            while (member := archive.next()) is not None:
                archive.members.clear()  # tarfile keeps every header otherwise
                entries += 1
                if entries > run.limits.max_files:
                    yield Skipped(name, f"has more than {run.limits.max_files:,} entries "
                                        "(SEARCHAPP_MAX_FILES); split it into smaller archives")
                    return
                run.check_ratio(member.offset, raw.tell())  # what the stream expanded to so far
                step = _tar_member(run, archive, raw, member, prefix)
                if step is not None:
                    yield step
                _check_tar_end(run, archive, raw, member)
    except _Refused as stop:
        if stop.path:
            yield Skipped(stop.path, stop.reason)
            yield Skipped(name, f"was not read past {stop.path}; the files after it were left "
                                "out (see the line above)")
        else:
            yield Skipped(name, f"{stop.reason} (stopped after {entries:,} entries)")
    except TarHeaderRefused as refused:
        yield Skipped(name, f"{refused} (entry {entries + 1:,}): the entries before it were "
                            "read, the rest left out; unpack it yourself if you trust it and "
                            "add the folder")
    except TAR_ERRORS as e:
        yield Skipped(name, f"is not a tar archive or is damaged after {entries:,} entries "
                            f"({e}); check that it unpacks on your computer")


def _check_tar_end(run: _Run, archive: tarfile.TarFile, raw: BinaryIO,
                   member: tarfile.TarInfo) -> None:
    """Before skipping to the next header: a member's declared end must lie inside a plain
    tar, or within the expansion limit of a compressed one (skipping costs decompression)."""
    end, packed = member.offset_data + member.size, os.fstat(raw.fileno()).st_size
    if archive.fileobj is not raw:
        run.check_ratio(end, packed)
    elif end > packed:
        raise tarfile.ReadError(f"{_shown(member.name)} says it holds {member.size:,} bytes, "
                                "more than the archive")


def _tar_member(run: _Run, archive: tarfile.TarFile, raw: BinaryIO, member: tarfile.TarInfo,
                prefix: str) -> InputFile | Skipped | None:
    kind = ("dir" if member.isdir() else "link" if member.issym() or member.islnk() else
            "file" if member.isfile() else "special")
    found = run.member(member.name, prefix, kind, member.size)
    if not isinstance(found, str):
        return found

    def read() -> InputFile:
        src = archive.extractfile(member)
        if src is None:
            raise _Refused(SPECIAL)
        with src:
            return run.unpack(src, found, float(member.mtime), lambda size: run.check_ratio(
                member.offset_data + size, raw.tell()))

    return run.take(found, read)
