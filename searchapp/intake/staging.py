"""Uploaded files kept for the ``ingest`` job: copied, a piece at a time, into a private
folder of the work directory that the job removes when it ends.

A browser or API upload is gone once the request ends, and the job runs in
another process: the files wait in ``DATA_DIR/work/uploads/<random>/``, each
under a short name of its own (``000001.pdf``: a counter, never the name a
client sent, so no name is too long or unsafe for the disk). Its name as the
client sent it (the last part only: no folder a client sends is trusted) becomes
its document id by the rule of ``names``, unique within the upload: two uploads
named ``café.md`` (NFC and NFD) or ``a.pdf`` twice are both kept, the second as
``café (2).md``, and a note of the job's report says so. The bytes are counted as
they are copied, so a file over the upload limit stops at the limit and nothing of
the upload stays. A file that is not a type we read (``left_out.readable``) is not
copied: it is kept as one ``refused`` line (name, why, what to do) that the job's report
lists with the rest, so every file chosen is named there.

Example:
    >>> import io, tempfile
    >>> work = Path(tempfile.mkdtemp())
    >>> staged = stage_uploads(work, [("../../notes.md", io.BytesIO(b"# Hi"))], limit=100)
    >>> staged.names, [p.name for p in staged.paths]
    ({'000001.md': 'notes.md'}, ['000001.md'])
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from searchapp.corpora.names import MAX_SEGMENT_BYTES, distinct, extension, segment
from searchapp.intake.left_out import not_read, readable
from searchapp.intake.source import too_big

CHUNK = 1 << 20


@dataclass(frozen=True)
class Staged:
    """An upload kept for its job: the ``folder``, each file's ``names`` (the name on disk
    to the name it is known by, its id) and ``notes`` for the job's report (names that
    were made distinct or shortened), and the files ``refused`` unread (the report's
    problems: ``{"path", "reason", "kind": "skipped"}``)."""

    folder: Path
    names: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)

    @property
    def paths(self) -> list[Path]:
        """The files on disk, in the order they were uploaded."""
        return [self.folder / disk for disk in self.names]

    def options(self) -> dict:
        """What ``request_ingest`` carries to the job: the names, the notes and the files
        refused (the report lists them)."""
        return {"names": dict(self.names), "notes": list(self.notes),
                "skipped": [dict(p) for p in self.refused]}


def upload_name(name: str, taken: set[str], notes: list[str] | None = None) -> str:
    """The id an uploaded file's name becomes (its last part, by the rule of ``names``,
    without leading dots, which hide a file), unique among ``taken``; a name made
    distinct or shortened adds a line to ``notes``.

    Example:
        >>> upload_name("C:\\\\docs\\\\a.pdf", set()), upload_name("a.pdf", {"a.pdf"})
        ('a.pdf', 'a (2).pdf')
    """
    last = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = segment(segment(last, "").lstrip("."), "upload")
    candidate = distinct(base, taken)
    taken.add(candidate)
    if notes is not None and len(last.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
        notes.append(f"{candidate}: the uploaded file's name is longer than "
                     f"{MAX_SEGMENT_BYTES} bytes; its document is {candidate!r}.")
    if notes is not None and candidate != base:
        notes.append(f"{candidate}: two uploaded files are named {base!r} (as ids are "
                     "written: Unicode NFC, control characters escaped, at most "
                     f"{MAX_SEGMENT_BYTES} bytes); the second is {candidate!r}.")
    return candidate


def stage_uploads(work_dir: Path, files: Iterable[tuple[str, BinaryIO]], limit: int) -> Staged:
    """Copy uploads into a new private folder under ``work_dir/uploads``.

    Raises IngestError (and keeps nothing) when a file passes ``limit`` bytes. A file not
    of a type we read is not copied; it is one line of ``refused``.
    """
    folder = work_dir / "uploads" / secrets.token_hex(8)
    folder.mkdir(mode=0o700, parents=True)
    staged = Staged(folder)
    taken: set[str] = set()
    try:
        for number, (name, stream) in enumerate(files, 1):
            logical = upload_name(name, taken, staged.notes)
            if not readable(logical):
                staged.refused.append({"path": logical, "reason": not_read(logical),
                                       "kind": "skipped"})
                continue
            disk = f"{number:06d}{extension(logical).lower()}"
            _copy(stream, folder / disk, logical, limit)
            staged.names[disk] = logical
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return staged


def _copy(stream: BinaryIO, target: Path, name: str, limit: int) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := stream.read(CHUNK):
            written += len(chunk)
            if written > limit:
                raise too_big(name, limit)
            out.write(chunk)
