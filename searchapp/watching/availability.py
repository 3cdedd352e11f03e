"""Whether a watched folder can be synced now, and if not, why, in words a person can act on.

A folder that is missing, no longer a folder, on another file system than when it
was added (an unmounted share leaves its empty mount point behind) or not
listable is *unavailable*: its documents stay and syncing waits for it to return.

Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> unavailable(folder, device_of(folder)) is None
    True
    >>> unavailable(folder + "/gone", None)
    'the folder is not there (renamed, moved or unmounted?); its documents are kept'
"""

from __future__ import annotations

import os
import stat


def device_of(path: str) -> str | None:
    """The folder's file system id (``st_dev``) as text, or None when it cannot be read."""
    try:
        return str(os.stat(path).st_dev)
    except OSError:
        return None


def unavailable(path: str, device: str | None) -> str | None:
    """Why ``path`` cannot be synced now, or None when it can."""
    kept = "its documents are kept"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"the folder is not there (renamed, moved or unmounted?); {kept}"
    except OSError as exc:
        return f"the folder cannot be read ({exc.strerror}); {kept}"
    if not stat.S_ISDIR(info.st_mode):
        return f"the path is no longer a folder; {kept}"
    if device is not None and str(info.st_dev) != device:
        return f"another file system (or none) is mounted there now: unmounted? {kept}"
    try:
        with os.scandir(path) as listing:
            next(listing, None)
    except OSError as exc:
        return f"the folder cannot be listed ({exc.strerror}); check its permissions; {kept}"
    return None
