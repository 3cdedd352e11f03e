"""Whether a watched folder can be synced now, and if not, why, in words a person can act on.

A folder that is missing, no longer a folder, reached through a link now (it or a
folder above it replaced), outside ``SEARCHAPP_WATCH_ROOTS`` when it was added under
them, another folder than the one added (an unmounted share leaves its empty mount
point behind; a folder moved away and another put in its place) or not listable is
*unavailable*: its documents stay and syncing waits for it to return. The checks are
``corpora.folder_check``'s, the same the sync job makes before and after its walk.

Example:
    >>> import tempfile
    >>> folder = os.path.realpath(tempfile.mkdtemp())
    >>> unavailable(folder, identity_of(folder)) is None
    True
    >>> unavailable(folder + "/gone", None)
    'the folder is not there (renamed, moved or unmounted?); its documents are kept'
"""

from __future__ import annotations

import os  # noqa: F401  (the example's)
from collections.abc import Sequence
from pathlib import Path

from searchapp.intake.folder_check import identity_of, trouble

__all__ = ["identity_of", "unavailable"]


def unavailable(path: str, device: str | None,
                roots: Sequence[str | Path] | None = None) -> str | None:
    """Why ``path`` (recorded as ``device``: see ``corpora.folder_check``) cannot be synced
    now, or None when it can. ``roots``: the resolved ``SEARCHAPP_WATCH_ROOTS``, if set."""
    return trouble(path, device, roots)
