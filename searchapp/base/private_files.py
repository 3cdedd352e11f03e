"""Private by default: the data folder 0700, every file the app writes 0600, never via a link.

The database and its WAL/SHM, logs, index files with their metadata and lock
files, pid files, models and exports hold the corpus or describe it, so other
users of the machine must not read them. Two measures do it:

- ``restrict_umask()`` at each process' entry (the CLI's ``main``, which the
  worker runs under too, and ``serve.py`` for the web server): files are then
  created 0600 and folders 0700 without each writer having to remember. SQLite
  creates ``-wal`` and ``-shm`` with the database file's own permissions.
- ``private_dir()`` when the data folder is created or opened: 0700, so even
  files left readable by an older version cannot be reached through it.

And no file the app writes is reached through a link it did not make: files it
appends to or rewrites in place (logs, ``worker.pid``, lock files) are opened
with ``open_private`` (``O_NOFOLLOW``, a regular file with one name, else
``UnsafeFileError``); files in the shared temporary folder live in a folder of
this user's own (``private_temp_dir``); whole files are written under a new
random name and renamed into place (``replace_private``), and a rename replaces
a link itself, never what it points at.

Example:
    >>> import tempfile
    >>> folder = private_dir(Path(tempfile.mkdtemp()) / "data")
    >>> oct(folder.stat().st_mode & 0o777)
    '0o700'
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

PRIVATE_UMASK = 0o077
log = logging.getLogger(__name__)


def restrict_umask() -> int:
    """Make files this process creates private (umask 077); returns the previous umask.

    Example:
        >>> previous = restrict_umask(); os.umask(previous) == PRIVATE_UMASK
        True
    """
    return os.umask(PRIVATE_UMASK)


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if needed and make it 0700; a folder we do not own is
    left as it is, with a warning.

    Example:
        >>> private_dir(Path("/")) == Path("/")               # doctest: +SKIP
        True
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o777 != 0o700:
        try:
            path.chmod(0o700)
        except OSError as exc:
            log.warning("could not make %s private (chmod 700): %s", path, exc)
    return path


APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT


class UnsafeFileError(OSError):
    """A file the app writes is a link, or not a plain file: it is left untouched.

    Example:
        >>> str(UnsafeFileError(errno.ELOOP, "x is a link")).endswith("x is a link")
        True
    """


def open_private(path: Path, flags: int = APPEND, mode: int = 0o600) -> int:
    """A descriptor of ``path`` opened with ``flags``, never through a link: a symbolic link
    at ``path``, a hard link to a file with other names, a FIFO or a device raise
    UnsafeFileError (nothing is written, the link's target is not touched).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> os.close(open_private(folder / "app.log"))
        >>> (folder / "link.log").symlink_to(folder / "app.log")
        >>> try:
        ...     open_private(folder / "link.log")
        ... except UnsafeFileError as exc:
        ...     print("refused:", "is a symbolic link" in str(exc))
        refused: True
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENXIO and os.path.islink(path)):
            raise UnsafeFileError(errno.ELOOP, _refusal(path, "is a symbolic link")) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        what = "is not a plain file" if not stat.S_ISREG(info.st_mode) else \
            "has another name (a hard link)"
        raise UnsafeFileError(errno.EEXIST, _refusal(path, what))
    os.set_blocking(fd, True)
    return fd


def open_private_file(path: Path, flags: int = APPEND, text_mode: str = "ab",
                      **kwargs) -> IO:
    """``open_private`` as a file object (``text_mode`` as for ``open``).

    Example:
        >>> with open_private_file(Path(tempfile.mkdtemp()) / "w.log", text_mode="a") as f:
        ...     _ = f.write("ok")
    """
    return open(open_private(path, flags), text_mode, **kwargs)


def private_temp_dir() -> Path:
    """This user's own folder in the temporary folder (``/tmp/searchapp-UID``, 0700), made if
    needed; UnsafeFileError when that name is a link, not a folder, or someone else's.

    Example:
        >>> oct(private_temp_dir().stat().st_mode & 0o777)
        '0o700'
    """
    path = Path(tempfile.gettempdir()) / f"searchapp-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise UnsafeFileError(errno.EEXIST, _refusal(
            path, "is not a folder of this user's own (a link, a file, or another user's)"))
    if info.st_mode & 0o077:
        os.chmod(path, 0o700, follow_symlinks=False)
    return path


def replace_private(path: Path, write: Callable[[Path], object]) -> None:
    """Run ``write(tmp)`` on a new file of a random name beside ``path`` (made exclusively,
    0600), then rename it to ``path``: a link at ``path`` is replaced, not followed.

    Example:
        >>> target = Path(tempfile.mkdtemp()) / "meta.json"
        >>> replace_private(target, lambda tmp: tmp.write_text("{}"))
        >>> target.read_text()
        '{}'
    """
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _refusal(path: Path, what: str) -> str:
    return (f"{path} {what}; the app writes only files it made itself, so it left it "
            f"alone. Remove it (rm '{path}') and try again.")
