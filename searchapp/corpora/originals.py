"""The files a corpus was read from, kept as they came: once per SHA-256, however often
they are ingested, under ``DATA_DIR/originals/ab/abcdef...``.

A hit opens its original at the page (a PDF in the browser's own viewer) or as
a download; backups carry the folder and restore brings it back. The file is
copied to a temporary name in its final folder, flushed and renamed, so a
crash never leaves half a file under a content address; the name is the hash,
so nothing a user controls becomes a path.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "a.txt").write_bytes(b"hello")
    5
    >>> digest = sha256_of(root / "a.txt")
    >>> keep(root / "store", root / "a.txt", digest).name == digest
    True
    >>> original_path(root / "store", digest).read_bytes()
    b'hello'
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from searchapp.errors import IngestError, NotFoundError

CHUNK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")


class OriginalNotFoundError(NotFoundError):
    """No stored original with that hash (never uploaded, or the data folder lost it)."""


class OriginalChangedError(IngestError):
    """A file's bytes changed between its hash and its copy: nothing was stored for it."""


def sha256_of(path: Path) -> str:
    """SHA-256 hex of a file, read 1 MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _address(root: Path, digest: str) -> Path:
    if not _HEX64.fullmatch(digest or ""):
        raise OriginalNotFoundError(f"{digest!r} is not the SHA-256 of a stored file.")
    return root / digest[:2] / digest


def keep(root: Path, source: Path, digest: str) -> Path:
    """Store the bytes of ``source`` under ``root`` as the original whose SHA-256 is
    ``digest``; returns its stored path.

    The bytes are hashed as they are copied, and stored only if they are the bytes
    ``digest`` names: a file replaced or rewritten since it was hashed raises
    ``OriginalChangedError`` and stores nothing, so an original can never hold other
    bytes than its name says. What was there under that name is replaced by the
    verified copy (renamed into place: a reader of the old file keeps reading it), so a
    planted or damaged original heals the next time the genuine file is read.
    """
    target = _address(root, digest)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = target.with_name(f".{digest}.{os.getpid()}.part")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        hashed = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            while chunk := src.read(CHUNK):
                hashed.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if hashed.hexdigest() != digest:
            raise OriginalChangedError(
                f"{source.name} changed while it was read (its bytes are no longer those "
                "hashed); it is read again once it is left alone.")
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target


def read_bytes_head(path: Path, size: int = 8) -> bytes:
    """The first ``size`` bytes of a stored original (to tell its type by its bytes)."""
    with open(path, "rb") as f:
        return f.read(size)


def original_path(root: Path, digest: str) -> Path:
    """The stored file with this SHA-256; OriginalNotFoundError when there is none."""
    path = _address(root, digest)
    if not path.is_file():
        raise OriginalNotFoundError(
            f"The original file {digest[:12]}... is not in the data folder (deleted, or the "
            "data folder was restored from a backup without it). Ingest the file again.")
    return path
