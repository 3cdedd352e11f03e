"""What runs after a job of a kind succeeded: hooks that services register, called by the
worker once the job's success is recorded.

Why: a service above another may want to follow the other's jobs (the saved searches
check each corpus after its documents became searchable, after every ``embed`` and
``ingest`` job) without the lower service knowing it exists, and without polling. The
upper service registers a hook in its ``job_kinds`` module (which ``kinds.discover``
imports before any job runs); the worker calls ``succeeded`` after it recorded a job's
success. A hook should be quick (queue a job, never do the work itself); its failure is
logged and never changes the finished job.

Example:
    >>> seen = []
    >>> after_success("backup", lambda app, payload, result: seen.append(result))
    >>> succeeded(None, "backup", None, {"ok": 1}); seen
    [{'ok': 1}]
    >>> AFTER["backup"].clear()
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from searchapp.jobs import kinds

log = logging.getLogger(__name__)

Hook = Callable[[Any, Any, dict], None]  # (app, the job's payload, its result)
AFTER: dict[str, list[Hook]] = {}  # kind name → its hooks, in the order registered


def after_success(kind_name: str, hook: Hook) -> None:
    """Call ``hook(app, payload, result)`` after each job of ``kind_name`` that succeeded
    (registering the same hook twice keeps one)."""
    hooks = AFTER.setdefault(kind_name, [])
    if hook not in hooks:
        hooks.append(hook)


def succeeded(app, kind_name: str, payload: Any, result: dict) -> None:
    """Run the hooks of ``kind_name`` for a job that succeeded; a failing hook is logged."""
    kinds.discover()  # the modules that register hooks are the kinds' declarations
    for hook in list(AFTER.get(kind_name, ())):
        try:
            hook(app, payload, result)
        except Exception:  # a hook's bug must not touch the finished job or the worker
            log.exception("the hook %s after a %s job failed", getattr(hook, "__name__", hook),
                          kind_name)
