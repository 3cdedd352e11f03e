"""Whether a watched folder is still the folder that was added, checked at every sync.

A folder is checked when it is added (``watching.folders``) and again each time it
is read: before the walk, after it (before anything is removed) and when a hit's
file is opened where it lies. It must still be the folder it was:

- its path leads to itself: neither it nor a folder above it is a link now
  (``os.path.realpath`` of the stored path is the stored path; the path was
  resolved when it was added);
- added under ``SEARCHAPP_WATCH_ROOTS`` (the browser, the API): it still lies
  under those roots when they are set;
- the same folder: its ``st_dev`` and ``st_ino`` are the ones recorded when it
  was added (an unmounted share, a folder moved away and another put in its place);
- there, a folder, and listable.

Otherwise it is *unavailable*, with a reason a person can act on, and nothing is
read or removed: its documents are kept. The record is the ``device`` column of
the watched folder, as text: ``"dev:ino"``, ``"dev:ino:roots"`` when it was added
under the roots; an older record without ``":"`` is the device alone; ``restored``
(``store.watched_folders.RESTORED``) is a folder brought by a backup, whose identity
is not known here until a person resumes it.

Example:
    >>> import tempfile
    >>> folder = os.path.realpath(tempfile.mkdtemp())
    >>> recorded = identity_of(folder, under_roots=True)
    >>> trouble(folder, recorded, roots=[os.path.dirname(folder)]) is None
    True
    >>> trouble(folder, recorded, roots=["/srv/docs"]).startswith("it lies outside")
    True
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from searchapp.errors import IngestError
from searchapp.intake.job_payloads import IngestPayload
from searchapp.store.watched_folders import RESTORED

KEPT = "its documents are kept"
ROOTS_MARK = "roots"


@dataclass(frozen=True)
class Identity:
    """A folder's recorded identity: ``device`` (st_dev), ``inode`` (st_ino; None in an
    older record), whether it was added under the roots, and ``known`` (False: restored
    from a backup). A record that is not one matches no folder.

    Example:
        >>> Identity.parse("2049:131"), Identity.parse("2049").inode
        (Identity(device=2049, inode=131, under_roots=False, known=True), None)
    """

    device: int | None = None
    inode: int | None = None
    under_roots: bool = False
    known: bool = True

    @classmethod
    def parse(cls, text: str | None) -> Identity:
        if text is None:
            return cls()
        parts = str(text).split(":")
        under = parts[-1] == ROOTS_MARK
        numbers = parts[:-1] if under else parts
        if str(text) == RESTORED:
            return cls(known=False)
        if not 1 <= len(numbers) <= 2 or not all(n.isdigit() for n in numbers):
            return cls(device=-1)  # a record no file system has: never the same folder
        inode = int(numbers[1]) if len(numbers) == 2 else None
        return cls(int(numbers[0]), inode, under)

    def text(self) -> str:
        return ":".join([str(self.device), str(self.inode)]
                        + ([ROOTS_MARK] if self.under_roots else []))


def identity_of(path: str, under_roots: bool = False) -> str | None:
    """The record of the folder at ``path`` now (``"dev:ino"``, ``":roots"`` added), or None
    when it cannot be read. The path itself, never a link's target."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return Identity(info.st_dev, info.st_ino, under_roots).text()


def under(path: str, roots: Sequence[str | Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies below one (paths compared as given).

    Example:
        >>> under("/srv/docs/a", ["/srv/docs"]), under("/srv/docs2", ["/srv/docs"])
        (True, False)
    """
    return any(Path(path).is_relative_to(root) for root in roots)


def trouble(path: str, recorded: str | None, roots: Sequence[str | Path] | None = None
            ) -> str | None:
    """Why the watched folder at ``path`` (recorded as ``recorded``) must not be read now, or
    None when it may. ``roots``: the resolved ``SEARCHAPP_WATCH_ROOTS`` (None or empty: not
    set)."""
    identity = Identity.parse(recorded)
    if not identity.known:
        return ("it came from a backup and has not been checked here; check the folder, then "
                f"resume it (`searchapp watch resume ID`); {KEPT}")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return f"the folder is not there (renamed, moved or unmounted?); {KEPT}"
    except OSError as exc:
        return f"the folder cannot be read ({exc.strerror}); {KEPT}"
    real = os.path.realpath(path)
    if real != path:
        return (f"the path leads elsewhere now ({real}): it or a folder above it was replaced "
                "by a link, which is never followed; put the folder back, or stop watching it "
                f"and add the folder you mean; {KEPT}")
    if not stat.S_ISDIR(info.st_mode):
        return f"the path is no longer a folder; {KEPT}"
    if identity.under_roots and roots and not under(path, roots):
        shown = ", ".join(map(str, roots))
        return (f"it lies outside SEARCHAPP_WATCH_ROOTS ({shown}) now; add it again from the "
                f"server's command line, or widen the roots; {KEPT}")
    if identity.device is not None and info.st_dev != identity.device:
        return f"another file system (or none) is mounted there now: unmounted? {KEPT}"
    if identity.inode is not None and info.st_ino != identity.inode:
        return ("another folder is at this path now than the one added (moved away and "
                "replaced?); put it back, or stop watching it and add it again to watch the "
                f"new one; {KEPT}")
    try:
        with os.scandir(path) as listing:
            next(listing, None)
    except OSError as exc:
        return f"the folder cannot be listed ({exc.strerror}); check its permissions; {KEPT}"
    return None


def check_synced(paths: Sequence[Path], payload: IngestPayload) -> None:
    """Before an ingest reads a watched folder and before it removes anything: IngestError
    (nothing read, nothing removed) unless ``paths`` is the one folder the sync was queued
    for and ``trouble`` finds nothing (``payload``: ``watch``, ``device``, ``roots``).
    Any other ingest passes."""
    if not payload.watch and payload.device is None:
        return
    if len(paths) != 1:
        raise IngestError("A watched folder's sync reads that one folder; nothing was read.")
    reason = trouble(str(paths[0]), payload.device, payload.roots)
    if reason:
        raise IngestError(f"{paths[0]} was not synced: {reason}.")


def folder_identity(payload: IngestPayload) -> tuple[int, int] | None:
    """The (st_dev, st_ino) a watched folder's walk must find at its top, or None (not a
    watched folder, or an older record without the inode)."""
    identity = Identity.parse(payload.device)
    if not payload.watch or identity.device is None or identity.inode is None:
        return None
    return identity.device, identity.inode
