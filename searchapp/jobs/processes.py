"""Is a process still there? The checks the queue and the worker keeper share.

A pid can name a zombie (exited, not yet reaped by its parent: ``kill -0``
still succeeds) or a process of another user; both must read as "not our live
worker". Linux only for the zombie check (``/proc``); elsewhere a zombie reads
as alive.

Example:
    >>> import os
    >>> pid_alive(os.getpid()), is_zombie(os.getpid())
    (True, False)
"""

from __future__ import annotations

import os


def is_zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and waits for its parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs and can be signalled by this user (a zombie does not count).

    Only a positive pid names one process: ``kill(0, …)`` and ``kill(-N, …)`` reach a
    whole process group, so 0 and below are never alive.

    Example:
        >>> pid_alive(os.getpid()), pid_alive(0), pid_alive(-1)
        (True, False, False)
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return not is_zombie(pid)
