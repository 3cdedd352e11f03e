"""Notifications sent off the job's thread: a small bounded queue and one thread.

Why: a webhook target that is slow or dead (each try waits for its timeout, then the
retries) must never stall the worker: the ``saved-check`` job only hands its
notifications here and ends. The thread sends them one after another and records each
outcome (``{"webhook": {...}, "desktop": {...}}`` with the time) on the saved search,
where ``saved list`` shows it. At most ``MAX_WAITING`` notifications wait; one more is
not sent, and its outcome says so. A process that ends (``searchapp worker --once``, a
CLI ``--wait`` that ran the check) first gives the thread up to ``DRAIN_SECONDS`` to send
what waits; what is still waiting then is lost (the news stays counted and in the feed).

Example:
    >>> send(app.db, Notification(3, webhook=("https://h.example/x", {"new_hits": []})))
    ...                                                                # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from dataclasses import dataclass

from searchapp.saved import desktop, webhook
from searchapp.store.schema import SavedSearch, utcnow

log = logging.getLogger(__name__)
MAX_WAITING = 64
DRAIN_SECONDS = 20.0  # at exit, the most a process waits for its notifications to go

_waiting: queue.Queue = queue.Queue(maxsize=MAX_WAITING)
_started = threading.Lock()
_thread: list[threading.Thread] = []


@dataclass(frozen=True)
class Notification:
    """What to send for one saved search: a webhook ``(url, body)`` and/or a desktop
    notification ``(title, body)``."""

    saved_id: int
    webhook: tuple[str, dict] | None = None
    desktop: tuple[str, str] | None = None


def send(db, note: Notification) -> bool:
    """Hand ``note`` to the sender thread (started on first use); False, and the refusal
    recorded, when ``MAX_WAITING`` notifications wait already."""
    _ensure_thread()
    try:
        _waiting.put_nowait((db, note))
        return True
    except queue.Full:
        refused = {"error": f"not sent: {MAX_WAITING} notifications were waiting"}
        _record(db, note.saved_id, {k: refused for k in _channels(note)})
        return False


def _channels(note: Notification) -> list[str]:
    return [k for k in ("webhook", "desktop") if getattr(note, k) is not None]


def _ensure_thread() -> None:
    with _started:
        if not _thread or not _thread[0].is_alive():
            thread = threading.Thread(target=_loop, name="saved-search-sender", daemon=True)
            thread.start()
            _thread[:] = [thread]


@atexit.register
def _drain(seconds: float = DRAIN_SECONDS) -> None:
    """At exit: wait (at most ``seconds``) for the notifications handed over to be sent."""
    if not _thread or not _thread[0].is_alive():
        return
    deadline = time.monotonic() + seconds
    while _waiting.unfinished_tasks and time.monotonic() < deadline:
        time.sleep(0.05)


def _loop() -> None:
    while True:
        db, note = _waiting.get()
        try:
            _record(db, note.saved_id, _deliver(note))
        except Exception:  # one bad notification must not end the thread
            log.exception("a notification of saved search %s failed", note.saved_id)
        finally:
            _waiting.task_done()


def _deliver(note: Notification) -> dict:
    outcomes = {}
    if note.webhook is not None:
        outcomes["webhook"] = webhook.deliver(*note.webhook)
    if note.desktop is not None:
        outcomes["desktop"] = desktop.notify(*note.desktop)
    return outcomes


def _record(db, saved_id: int, outcomes: dict) -> None:
    """Each channel's outcome, with the time, on the saved search (gone: nothing to do)."""
    at = utcnow().isoformat(timespec="seconds") + "Z"
    with db.session() as s:
        row = s.get(SavedSearch, saved_id)
        if row is not None:
            row.last_outcome = {**(row.last_outcome or {}),
                                **{k: {**v, "at": at} for k, v in outcomes.items()}}
