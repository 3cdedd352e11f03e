"""Uploaded files kept for the ``ingest`` job: copied, a piece at a time, into a private
folder of the work directory that the job removes when it ends.

A browser or API upload is gone once the request ends, and the job runs in
another process: the files wait in ``DATA_DIR/work/uploads/<random>/``. Each
keeps only the last part of its name (no folder a client sends is trusted),
made unique within the upload; the bytes are counted as they are copied, so a
file over the upload limit stops at the limit and nothing of the upload stays.

Example:
    >>> import io, tempfile
    >>> work = Path(tempfile.mkdtemp())
    >>> folder = stage_uploads(work, [("../../notes.md", io.BytesIO(b"# Hi"))], limit=100)
    >>> sorted(p.name for p in folder.iterdir())
    ['notes.md']
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from searchapp.corpora.source import too_big

CHUNK = 1 << 20


def upload_name(name: str, taken: set[str]) -> str:
    """The last part of an uploaded file's name, unique among ``taken``.

    Example:
        >>> upload_name("C:\\\\docs\\\\a.pdf", set()), upload_name("a.pdf", {"a.pdf"})
        ('a.pdf', 'a (2).pdf')
    """
    base = PurePosixPath(name.replace("\\", "/")).name.strip() or "upload"
    base = "".join(ch for ch in base if ch >= " " and ch != "\x7f").lstrip(".") or "upload"
    stem, dot, ext = base.rpartition(".")
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{stem} ({n}).{ext}" if dot and stem else f"{base} ({n})"
    taken.add(candidate)
    return candidate


def stage_uploads(work_dir: Path, files: Iterable[tuple[str, BinaryIO]], limit: int) -> Path:
    """Copy uploads into a new private folder under ``work_dir/uploads``; returns it.

    Raises IngestError (and keeps nothing) when a file passes ``limit`` bytes.
    """
    folder = work_dir / "uploads" / secrets.token_hex(8)
    folder.mkdir(mode=0o700, parents=True)
    taken: set[str] = set()
    try:
        for name, stream in files:
            _copy(stream, folder / upload_name(name, taken), name, limit)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def _copy(stream: BinaryIO, target: Path, name: str, limit: int) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := stream.read(CHUNK):
            written += len(chunk)
            if written > limit:
                raise too_big(name, limit)
            out.write(chunk)
