"""Backup archives: a tar of files and a manifest that lists each one with its SHA-256.

The format (``searchapp-backup``, version 1): an uncompressed tar whose last
member is ``manifest.json``::

    {"format": "searchapp-backup", "format_version": 1, "kind": "backup",
     "created_at": "2026-11-24T10:15:02Z", "schema_version": 4,
     "source": {"database": "sqlite", "url": "...", "data_dir": "...", "host": "..."},
     "corpora": [{"name": "faq", "model": "...", "documents": 13, "embedded": 13,
                  "generation": 7}],
     "members": {"database/searchapp.db": {"size": 69632, "sha256": "9f2c..."}, ...}}

``verify`` reads the whole archive before anything is restored and refuses, with
one line saying why: a file that is not a tar or ends early (truncated), a tar
without our manifest (foreign), a member whose size or SHA-256 differs from
the manifest (altered), a member the manifest does not list or one it lists
that is missing, a name that would land outside the target folder or is a
link, and an archive of a newer format or schema than this searchapp reads.
An archive cannot lie about sizes: a sparse member, a member whose header
size differs from the manifest's, a manifest of more than ``MAX_MANIFEST``
bytes (refused from its header, before it is read) and manifest sizes adding
up to more than the archive itself are refused; every member is read counting
its bytes. Every header is read through ``tarsafe.SafeTarInfo``: a long-name or PAX
header over 64 KiB, a chain of them (thousands end in a RecursionError) and sparse
members are refused from their 512-byte block, before their data is read. Names are
checked as the file system will take them: no part over
255 bytes, no more than ``MAX_DEPTH`` folders, no name twice, no file that is
also another member's folder, every manifest entry an object with a size and
a SHA-256. ``extract`` then writes the members with the same checks, hashing
and counting again as it writes.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("hello")
    >>> m = write(folder / "b.tar", [("notes/a.txt", folder / "a.txt")], {"schema_version": 4})
    >>> verify(folder / "b.tar", newest_schema=4)["members"]["notes/a.txt"]["size"]
    5
    >>> _ = (folder / "b.tar").write_bytes((folder / "b.tar").read_bytes()[:700])
    >>> verify(folder / "b.tar", newest_schema=4)
    Traceback (most recent call last):
    ...
    searchapp.errors.BackupError: b.tar is damaged (truncated or not a tar archive): ...
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from searchapp.errors import BackupError
from searchapp.store.tarsafe import SafeTarInfo, TarHeaderRefused

FORMAT = "searchapp-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CHUNK = 1 << 20
MAX_MANIFEST = 16 << 20  # a manifest lists a database and model files: kilobytes
MAX_DEPTH = 32  # folders in a member's name (models/NAME/... is 3 to 5)
MAX_PART_BYTES = 255  # a file name's limit on Linux file systems
MAX_NAME_BYTES = 1024


class _Hashing(io.RawIOBase):
    """A file read through SHA-256 (for tarfile.addfile): the file is read once."""

    def __init__(self, raw) -> None:
        self.raw, self.sha, self.size = raw, hashlib.sha256(), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.raw.readinto(buffer)
        if n:
            self.sha.update(memoryview(buffer)[:n])
            self.size += n
        return n or 0


class _Tee:
    """Each chunk into a hash and a file."""

    def __init__(self, digest, out) -> None:
        self.digest, self.out = digest, out

    def write(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        self.out.write(chunk)


def utc_stamp(when: datetime | None = None) -> str:
    """ISO time in UTC, to the second: ``2026-11-24T10:15:02Z``.

    Example:
        >>> utc_stamp(datetime(2026, 11, 24, 10, 15, 2, tzinfo=UTC))
        '2026-11-24T10:15:02Z'
    """
    return (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


def write(dest: Path, files: Sequence[tuple[str, Path]], manifest: dict,
          progress: Callable[[str], None] | None = None) -> dict:
    """Write ``files`` (archive name, path) and the manifest to ``dest``, atomically (a
    temporary name, then a rename): a failure leaves no half archive. Returns the manifest
    with ``format``, ``created_at`` and every member's size and SHA-256 filled in."""
    dest = Path(dest)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    members: dict[str, dict] = {}
    try:
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            for name, path in files:
                _check_name(name)
                if progress:
                    progress(name)
                info = tar.gettarinfo(str(path), arcname=name)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                with open(path, "rb") as raw:
                    hashing = _Hashing(raw)
                    tar.addfile(info, io.BufferedReader(hashing, CHUNK))
                if hashing.size != info.size:
                    raise BackupError(f"{path} changed size while it was archived; try again.")
                members[name] = {"size": hashing.size, "sha256": hashing.sha.hexdigest()}
            full = {"format": FORMAT, "format_version": FORMAT_VERSION,
                    "created_at": utc_stamp(), **manifest, "members": members}
            body = json.dumps(full, indent=2, ensure_ascii=False).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mtime, info.mode = len(body), int(datetime.now(UTC).timestamp()), 0o600
            tar.addfile(info, io.BytesIO(body))
        os.replace(tmp, dest)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BackupError(f"Cannot write {dest}: {exc.strerror or exc}.") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return full


def _check_name(name: str) -> str:
    """An archive member name that stays inside the folder it is extracted to, and that the
    file system can take as it is (no part over 255 bytes, at most ``MAX_DEPTH`` deep).

    Example:
        >>> _check_name("models/m/config.json")
        'models/m/config.json'
        >>> _check_name("a/" * 40 + "b")
        Traceback (most recent call last):
        ...
        searchapp.errors.BackupError: Unsafe name in the archive: ... (41 parts deep; at most 32).
    """
    if not isinstance(name, str):
        raise BackupError(f"Unsafe name in the archive: {name!r} is not a text.")
    path = PurePosixPath(name)
    shown = repr(name[:24] + "...") if len(name) > 40 else repr(name)
    if not name or path.is_absolute() or ".." in path.parts or "\\" in name or \
            any(ord(c) < 32 or ord(c) == 127 for c in name) or str(path) != name:
        raise BackupError(f"Unsafe name in the archive: {shown}.")
    if len(path.parts) > MAX_DEPTH:
        raise BackupError(f"Unsafe name in the archive: {shown} ({len(path.parts)} parts deep; "
                          f"at most {MAX_DEPTH}).")
    try:
        encoded = [part.encode() for part in path.parts]
    except UnicodeEncodeError:
        raise BackupError(f"Unsafe name in the archive: {shown} (not UTF-8).") from None
    if any(len(part) > MAX_PART_BYTES for part in encoded) or len(name.encode()) > \
            MAX_NAME_BYTES:
        raise BackupError(f"Unsafe name in the archive: {shown} (a part over "
                          f"{MAX_PART_BYTES} bytes, or the whole over {MAX_NAME_BYTES}).")
    return name


def check_listing(archive_name: str, listed: object, archive_size: int) -> dict[str, dict]:
    """The manifest's ``members`` checked: each name safe, each entry an object with an
    integer size and a SHA-256, no file that is another's folder, the sizes adding up to no
    more than the archive holds. BackupError naming the first fault.

    Example:
        >>> check_listing("b.tar", {"a": {"size": 1, "sha256": "0" * 64},
        ...                         "a/b": {"size": 1, "sha256": "0" * 64}}, 10_000)
        Traceback (most recent call last):
        ...
        searchapp.errors.BackupError: b.tar: 'a' is both a file and the folder of 'a/b'; refused.
    """
    if not isinstance(listed, dict):
        raise BackupError(f"{archive_name}: its manifest's members are not a list of files.")
    total = 0
    for name, entry in listed.items():
        _check_name(name)
        if not isinstance(entry, dict) or type(entry.get("size")) is not int or \
                entry["size"] < 0 or not _is_sha256(entry.get("sha256")):
            raise BackupError(f"{archive_name}: the manifest's entry for {name!r} is not an "
                              "object with a size and a SHA-256 (altered); refused.")
        total += entry["size"]
    if total > archive_size:
        raise BackupError(f"{archive_name}: its manifest claims {total:,} bytes of files, more "
                          f"than the archive's {archive_size:,} bytes (altered); refused.")
    folders = {str(parent): name for name in listed for parent in PurePosixPath(name).parents}
    for name in listed:
        if name in folders:
            raise BackupError(f"{archive_name}: {name!r} is both a file and the folder of "
                              f"{folders[name]!r}; refused.")
    return listed


def _is_sha256(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and \
        all(c in "0123456789abcdef" for c in value)


TAR_ERRORS = (tarfile.TarError, EOFError, OSError, TarHeaderRefused, RecursionError)


def _open(path: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(path, "r:", tarinfo=SafeTarInfo)  # headers capped: see tarsafe
    except FileNotFoundError:
        raise BackupError(f"No such file: {path}.") from None
    except TAR_ERRORS as exc:
        raise _damaged(path, exc) from None


def _damaged(path: Path, exc: BaseException) -> BackupError:
    """The one line for an archive ``tarfile`` cannot read, or a header it must not."""
    if isinstance(exc, TarHeaderRefused):
        return BackupError(f"{path.name} {exc}: refused from its header, nothing was "
                           "restored.")
    if isinstance(exc, RecursionError):  # a header chain tarsafe did not stop: never here
        return BackupError(f"{path.name} has a chain of tar headers too long to read; "
                           "refused, nothing was restored.")
    return BackupError(f"{path.name} is damaged (truncated or not a tar archive): {exc}.")


def read_manifest(path: Path) -> dict:
    """The manifest of an archive, unchecked (for listings); BackupError when there is none.

    Example:
        >>> read_manifest(Path("/nonexistent.tar"))
        Traceback (most recent call last):
        ...
        searchapp.errors.BackupError: No such file: /nonexistent.tar.
    """
    path = Path(path)
    with _open(path) as tar:
        try:
            member = tar.getmember(MANIFEST)
            if member.issparse() or not member.isfile() or member.size > MAX_MANIFEST:
                raise BackupError(f"{path.name}: its {MANIFEST} is not a plain file of at most "
                                  f"{MAX_MANIFEST >> 20} MiB (it claims {member.size:,} "
                                  "bytes); refused without reading it.")
            data = tar.extractfile(member).read(MAX_MANIFEST + 1)  # type: ignore[union-attr]
        except (KeyError, AttributeError):
            raise BackupError(f"{path.name} is not a searchapp backup: it has no "
                              f"{MANIFEST}.") from None
        except TAR_ERRORS as exc:
            raise _damaged(path, exc) from None
    try:
        manifest = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise BackupError(f"{path.name} is not a searchapp backup: its {MANIFEST} is not "
                          "JSON.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or \
            not isinstance(manifest.get("members"), dict):
        raise BackupError(f"{path.name} is not a searchapp backup (its {MANIFEST} is "
                          "another program's).")
    return manifest


def verify(path: Path, newest_schema: int,
           check_digest: Callable[[str, str], None] | None = None) -> dict:
    """Check every member of an archive against its manifest; the manifest, or BackupError
    saying what is wrong (see the module docstring). Reads the whole archive once.
    ``check_digest(name, sha256)``: told each member's SHA-256 as computed from its bytes
    (a name that is a hash is checked against the bytes, not the manifest)."""
    path = Path(path)
    manifest = read_manifest(path)
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise BackupError(f"{path.name} was written in backup format {version}, newer than "
                          f"this searchapp reads ({FORMAT_VERSION}); upgrade searchapp.")
    schema = manifest.get("schema_version")
    if not isinstance(schema, int) or schema > newest_schema:
        raise BackupError(f"{path.name} holds a database at schema version {schema}, newer "
                          f"than this searchapp ({newest_schema}); upgrade searchapp to "
                          "restore it.")
    listed = check_listing(path.name, manifest["members"], path.stat().st_size)
    seen: set[str] = set()
    with _open(path) as tar:
        try:
            for member in tar:
                if member.name == MANIFEST:
                    continue
                _check_member(path, member, listed, seen)
                digest = hashlib.sha256()
                expected = listed[member.name]
                size = _copy(tar, member, expected["size"], path.name, digest.update)
                if size != expected.get("size") or digest.hexdigest() != expected.get("sha256"):
                    raise BackupError(f"{path.name}: {member.name} does not match its checksum "
                                      "in the manifest (altered or damaged); nothing was "
                                      "restored.")
                if check_digest is not None:
                    check_digest(member.name, digest.hexdigest())
                seen.add(member.name)
        except TAR_ERRORS as exc:
            raise _damaged(path, exc) from None
    missing = sorted(set(listed) - seen)
    if missing:
        raise BackupError(f"{path.name} lacks {missing[0]}, which its manifest lists "
                          "(truncated or altered); nothing was restored.")
    return manifest


def _check_member(path: Path, member: tarfile.TarInfo, listed: dict, seen: set[str]) -> None:
    """A member as its header describes it, before a byte of it is read (and marked seen)."""
    _check_name(member.name)
    if not member.isfile():
        raise BackupError(f"{path.name}: {member.name} is not a plain file (a link or a "
                          "device); refused.")
    if member.issparse():
        raise BackupError(f"{path.name}: {member.name} is a sparse file (its size, "
                          f"{member.size:,} bytes, is mostly holes); a backup never holds "
                          "one; refused.")
    if member.name not in listed:
        raise BackupError(f"{path.name}: {member.name} is not in the manifest (added or "
                          "renamed after the backup); refused.")
    if member.name in seen:
        raise BackupError(f"{path.name}: {member.name} is in the archive twice; refused.")
    if member.size != listed[member.name]["size"]:
        raise BackupError(f"{path.name}: {member.name} claims {member.size:,} bytes, its "
                          f"manifest {listed[member.name]['size']:,} (altered); refused.")
    seen.add(member.name)


def _copy(tar: tarfile.TarFile, member: tarfile.TarInfo, limit: int, archive_name: str,
          sink: Callable[[bytes], object]) -> int:
    """Feed a member's bytes to ``sink``, counting them; BackupError past ``limit``."""
    source = tar.extractfile(member)
    size = 0
    while chunk := source.read(min(CHUNK, limit - size + 1)):  # type: ignore[union-attr]
        size += len(chunk)
        if size > limit:
            raise BackupError(f"{archive_name}: {member.name} holds more than the {limit:,} "
                              "bytes its manifest lists (altered); refused.")
        sink(chunk)
    return size


def extract(path: Path, manifest: dict, place: Callable[[str], Path | None],
            check_digest: Callable[[str, str], None] | None = None) -> list[Path]:
    """Write each member to ``place(name)`` (None: skip it), checking its SHA-256 again as it
    is written (and with ``check_digest``, as ``verify``); returns the files written. Call
    ``verify`` first."""
    written: list[Path] = []
    path = Path(path)
    listed = check_listing(path.name, manifest["members"], path.stat().st_size)
    seen: set[str] = set()
    with _open(path) as tar:
        try:
            for member in tar:
                if member.name == MANIFEST:
                    continue
                _check_member(path, member, listed, seen)
                target = place(member.name)
                if target is None:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                digest = hashlib.sha256()
                with open(target, "xb") as out:  # a new file: never one already there
                    _copy(tar, member, listed[member.name]["size"], path.name,
                          _Tee(digest, out).write)
                if digest.hexdigest() != listed[member.name]["sha256"]:
                    raise BackupError(f"{Path(path).name}: {member.name} changed while it was "
                                      "restored; nothing was restored.")
                if check_digest is not None:
                    check_digest(member.name, digest.hexdigest())
                written.append(target)
        except (TarHeaderRefused, RecursionError) as exc:  # changed since verify read it
            raise _damaged(path, exc) from None
    return written
