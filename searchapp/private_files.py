"""Private by default: the data folder 0700, every file the app writes in it 0600.

The database and its WAL/SHM, logs, index files with their metadata and lock
files, pid files, models and exports hold the corpus or describe it, so other
users of the machine must not read them. Two measures do it:

- ``restrict_umask()`` at each process' entry (the CLI's ``main``, which the
  worker runs under too, and ``serve.py`` for the web server): files are then
  created 0600 and folders 0700 without each writer having to remember. SQLite
  creates ``-wal`` and ``-shm`` with the database file's own permissions.
- ``private_dir()`` when the data folder is created or opened: 0700, so even
  files left readable by an older version cannot be reached through it.

Example:
    >>> import tempfile
    >>> folder = private_dir(Path(tempfile.mkdtemp()) / "data")
    >>> oct(folder.stat().st_mode & 0o777)
    '0o700'
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

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
