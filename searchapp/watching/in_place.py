"""A hit from a watched folder opened in place: the file on disk, with this machine's own
program for it, when the app runs on the user's own machine (it listens on loopback only);
everywhere else the browser gets the server's copy (``web.originals``).

The file opened is the one the hit was read from: inside a folder the corpus watches
that is still the folder added (``watching.availability``: not replaced, not reached
through a link, under the roots it was added under), a plain file reached without a
link, with the SHA-256 stored for the document; a file changed or moved since falls
back to the copy. The program is ``SEARCHAPP_OPENER`` (a command the
path is appended to) or the desktop's own (``xdg-open``, macOS ``open``).

Example:
    >>> on_this_machine("127.0.0.1"), on_this_machine("0.0.0.0")
    (True, False)
    >>> path = local_file(app, "notes", "plans/2026.md", stored_sha256)  # doctest: +SKIP
    >>> open_in_place(path)                                               # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from searchapp.context import App
from searchapp.errors import WatchError
from searchapp.store import watched_folders as rows
from searchapp.watching.availability import unavailable
from searchapp.watching.folders import allowed_roots

OPENER_VARIABLE = "SEARCHAPP_OPENER"


def on_this_machine(address: str | None) -> bool:
    """Whether a server listening on ``address`` is reachable from this machine only."""
    if address in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(address or "").is_loopback
    except ValueError:
        return False


def local_file(app: App, corpus: str, doc_id: str, sha256: str | None) -> Path | None:
    """The file in a watched folder of ``corpus`` that document ``doc_id`` was read from and
    that still holds the same bytes, or None."""
    if not sha256:
        return None
    with app.db.session() as s:
        folders = [f for f in rows.list_folders(s) if f.corpus == corpus]
    roots = allowed_roots()
    for folder in folders:
        root = Path(folder.path)
        if unavailable(folder.path, folder.device, roots):
            continue  # replaced, reached through a link, outside the roots: not opened
        path = root / doc_id
        try:
            if not path.resolve().is_relative_to(root):  # the stored path, never resolved
                continue
            if stat.S_ISREG(os.lstat(path).st_mode) and _sha256(path) == sha256:
                return path
        except OSError:
            continue
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def opener_command() -> list[str]:
    """The program that opens a file here (``SEARCHAPP_OPENER``, else the desktop's)."""
    configured = os.environ.get(OPENER_VARIABLE, "").strip()
    if configured:
        return shlex.split(configured)
    program = "open" if sys.platform == "darwin" else "xdg-open"
    if shutil.which(program) is None:
        raise WatchError(f"No program opens files on this machine ({program} was not found); "
                         f"set {OPENER_VARIABLE}, or use the server's copy.")
    return [program]


def open_in_place(path: Path) -> int:
    """Open ``path`` with this machine's program for it, detached; its pid."""
    try:
        proc = subprocess.Popen([*opener_command(), str(path)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as exc:
        raise WatchError(f"Could not open {path} ({exc.strerror}); check {OPENER_VARIABLE} or "
                         "use the server's copy.") from None
    return proc.pid
