"""The keeper: the worker's thread that keeps every watched folder in step with the corpus.

Events only say "look again soon" (the design's rule): watchdog's observer
(inotify on Linux) marks a folder dirty when a file it would read is created,
changed, moved or deleted; once the folder has been quiet for ``debounce``
seconds (or has been dirty for ``longest_wait``, in a stream that never stops),
one sync job is queued (``watching.sync``), never two at once for a folder. A
periodic rescan (``rescan`` seconds) catches what file systems that send no
events (network mounts) changed. A file still being written is read ``settle``
seconds after it is left alone; an unreadable one is tried again every ``retry``
seconds.

Each folder is kept by one worker at a time: a lease in the database, renewed
while the worker lives, free to take ``lease`` seconds after it dies. A folder
that is missing, unmounted, unreadable, reached through a link now, outside the roots
it was added under, or another folder than the one added (``watching.availability``)
is marked unavailable with the reason at the next refresh and nothing is synced (its
documents stay) until it is back.

Idle cost: every ``refresh`` seconds one read of the folder list and a ``stat``
per folder; the observer's thread sleeps in the kernel.

Example:
    >>> keeper = Keeper(app, Tuning(debounce=0.5))          # doctest: +SKIP
    >>> threading.Thread(target=keeper.run, args=(stop,)).start()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from searchapp.context import App
from searchapp.errors import ConfigError, JobNotFoundError
from searchapp.intake.files_job import accepts, matches
from searchapp.intake.folder_check import Identity
from searchapp.intake.inputs import is_archive
from searchapp.jobs import queue
from searchapp.store import watched_folders as rows
from searchapp.watching.availability import identity_of, unavailable
from searchapp.watching.folders import allowed_roots
from searchapp.watching.sync import queue_sync, record

log = logging.getLogger("searchapp.watching")
CHANGES = {"created", "modified", "moved", "deleted", "closed"}  # not opened / closed unwritten
TICK = 0.25  # seconds between looks at the folders' flags


@dataclass(frozen=True)
class Tuning:
    """The keeper's timings in seconds, from ``SEARCHAPP_WATCH_<NAME>`` (e.g.
    ``SEARCHAPP_WATCH_RESCAN=60``).

    Example:
        >>> Tuning.from_env({"SEARCHAPP_WATCH_RESCAN": "60"}).rescan
        60.0
    """

    debounce: float = 1.0  # quiet time after the last event before a sync
    longest_wait: float = 10.0  # a folder that never goes quiet is synced this often
    rescan: float = 300.0  # a full look, for file systems that send no events
    settle: float = 1.0  # a file changed this recently is still being written (<= debounce)
    retry: float = 30.0  # unreadable files are tried again this often
    lease: float = 30.0  # a dead worker's folders are taken over after this
    refresh: float = 2.0  # the folder list, availability and leases are read this often

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Tuning:
        env = os.environ if env is None else env
        values = {}
        for f in fields(cls):
            name = f"SEARCHAPP_WATCH_{f.name.upper()}"
            raw = (env.get(name) or "").strip()
            if not raw:
                continue
            try:
                values[f.name] = float(raw)
            except ValueError:
                values[f.name] = -1.0
            if not 0 < values[f.name] < 1e7:
                raise ConfigError(f"{name}={raw!r} is not a number of seconds above 0; "
                                  f"e.g. {getattr(cls, f.name):g}.")
        return cls(**values)


@dataclass
class _Held:
    """A folder this keeper holds the lease on, and what it knows between syncs."""

    row: rows.FolderRow
    lease_until: float = 0.0
    watch: object | None = None  # watchdog's ObservedWatch
    identity: tuple | None = None  # (st_dev, st_ino) of the folder when it was scheduled
    pending: set[str] = field(default_factory=set)
    dirty_since: float | None = None
    last_event: float = 0.0
    due_at: float = 0.0  # the next sync without events (rescan, retry, settle)
    job_id: int | None = None


class _Events(FileSystemEventHandler):
    """Turns watchdog's events into "this folder is dirty" for the files a sync would read."""

    def __init__(self, keeper: Keeper, folder_id: int):
        self.keeper, self.folder_id = keeper, folder_id

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in CHANGES:
            return
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                self.keeper.mark(self.folder_id, os.fsdecode(path), event.is_directory)


class Keeper:
    """Keeps the watched folders of one data folder in step; ``run`` until ``stop`` is set."""

    def __init__(self, app: App, tuning: Tuning | None = None, owner: str | None = None):
        self.app, self.tuning = app, tuning or Tuning.from_env()
        self.owner = owner or queue.worker_name()
        self.held: dict[int, _Held] = {}
        self.lock = threading.Lock()
        self.observer = Observer()
        self.data_dir = str(Path(app.settings.data_dir).resolve())
        self.next_refresh = 0.0

    def run(self, stop: threading.Event) -> None:
        """Watch until ``stop``; the leases go back at the end."""
        self.observer.start()
        log.info("keeper %s watching folders", self.owner)
        try:
            while not stop.is_set():
                try:
                    self.step(time.monotonic())
                except Exception:  # a database hiccup must not end the watching
                    log.warning("watched folders: a step failed", exc_info=True)
                stop.wait(TICK)
        finally:
            self.observer.stop()
            self.observer.join(timeout=5)
            for folder_id in list(self.held):
                rows.release_lease(self.app.db, folder_id, self.owner)

    # ---- events ---------------------------------------------------------------------------
    def mark(self, folder_id: int, path: str, is_directory: bool) -> None:
        """An event at ``path``: the folder is dirty if a sync would read (or drop) that file."""
        with self.lock:
            held = self.held.get(folder_id)
            if held is None or not self._relevant(held.row, path, is_directory):
                return
            now = time.monotonic()
            held.pending.add(path)
            held.last_event = now
            held.dirty_since = held.dirty_since or now

    def _relevant(self, row: rows.FolderRow, path: str, is_directory: bool) -> bool:
        if path == self.data_dir or path.startswith(self.data_dir + os.sep):
            return False  # the app's own writes
        rel = os.path.relpath(path, row.path)
        if rel == "." or rel.startswith(".."):
            return rel == "."  # the folder itself (renamed, deleted)
        if any(part.startswith(".") or part == "__MACOSX" for part in rel.split(os.sep)):
            return False  # hidden files are never read
        if is_directory:
            return True
        wanted = accepts(rel) or is_archive(rel)
        return wanted and matches(rel.replace(os.sep, "/"), row.include, row.exclude)

    # ---- one pass -------------------------------------------------------------------------
    def step(self, now: float) -> None:
        """Refresh the folders when due, then finish and start syncs."""
        if now >= self.next_refresh:
            self.refresh(now)
            self.next_refresh = now + self.tuning.refresh
        for held in list(self.held.values()):
            self._follow_job(held, now)
            if held.job_id is None and held.row.available and self._due(held, now):
                self._start_sync(held, now)

    def refresh(self, now: float) -> None:
        """Read the folder list: take or renew leases, drop folders paused, removed or lost,
        and look whether each held folder is there."""
        with self.app.db.session() as s:
            listed = {row.id: row for row in rows.list_folders(s)}
        for folder_id in [i for i in self.held if i not in listed or listed[i].paused]:
            self._drop(folder_id, release=True)
        for row in listed.values():
            if row.paused:
                continue
            held = self.held.get(row.id)
            if held is None or now >= held.lease_until - self.tuning.lease / 2:
                if not rows.take_lease(self.app.db, row.id, self.owner, self.tuning.lease):
                    if held is not None:
                        self._drop(row.id, release=False)  # another worker has it now
                    continue
                if held is None:
                    held = self._hold(row, now)
                held.lease_until = now + self.tuning.lease
            held.row = row
            self._check_available(held, now)

    def _hold(self, row: rows.FolderRow, now: float) -> _Held:
        held = _Held(row, job_id=row.job_id, due_at=now)  # a first look at once
        with self.lock:
            self.held[row.id] = held
        log.info("watching %s for corpus %r", row.path, row.corpus)
        return held

    def _drop(self, folder_id: int, release: bool) -> None:
        with self.lock:
            held = self.held.pop(folder_id, None)
        if held is not None:
            self._unschedule(held)
        if release:
            rows.release_lease(self.app.db, folder_id, self.owner)

    def _check_available(self, held: _Held, now: float) -> None:
        """Mark the folder unavailable (with why) or back; (re)start its events."""
        row = held.row
        reason = unavailable(row.path, row.device, allowed_roots())
        if reason and row.available:
            log.warning("watched folder %s unavailable: %s", row.path, reason)
            self._unschedule(held)
            self._write(row.id, available=False, reason=reason)
        elif reason is None and not row.available:
            log.info("watched folder %s is back", row.path)
            self._write(row.id, available=True, reason=None)
            held.due_at = now
        if reason is None and Identity.parse(row.device).inode is None:
            self._write(row.id, device=identity_of(row.path))  # an older record: dev alone
        if reason is None:
            identity = _identity(row.path)
            if held.watch is None or identity != held.identity:
                self._unschedule(held)  # new, back, or another folder under its name
                self._schedule(held, identity)
                held.due_at = min(held.due_at, now)

    def _write(self, folder_id: int, **values) -> None:
        with self.app.db.session() as s:
            rows.write_status(s, folder_id, **values)
        with self.app.db.session() as s:
            fresh = rows.get_folder(s, folder_id)
        if fresh and folder_id in self.held:
            self.held[folder_id].row = fresh

    def _schedule(self, held: _Held, identity: tuple | None) -> None:
        try:
            held.watch = self.observer.schedule(_Events(self, held.row.id), held.row.path,
                                                recursive=True)
        except OSError as exc:  # e.g. out of inotify watches: the rescans still run
            log.warning("no file-system events for %s (%s); rescanned every %g s",
                        held.row.path, exc, self.tuning.rescan)
            held.watch = None
        held.identity = identity

    def _unschedule(self, held: _Held) -> None:
        if held.watch is not None:
            with contextlib.suppress(KeyError, OSError):  # the folder went with its watch
                self.observer.unschedule(held.watch)
            held.watch = None

    # ---- syncs ----------------------------------------------------------------------------
    def _due(self, held: _Held, now: float) -> bool:
        with self.lock:
            if held.dirty_since is not None and (
                    now - held.last_event >= self.tuning.debounce
                    or now - held.dirty_since >= self.tuning.longest_wait):
                return True
        return now >= held.due_at

    def _start_sync(self, held: _Held, now: float) -> None:
        with self.lock:
            waiting = len(held.pending)
            held.pending, held.dirty_since = set(), None
        held.due_at = now + self.tuning.rescan
        held.job_id = queue_sync(self.app, held.row, self.tuning.settle, waiting)

    def _follow_job(self, held: _Held, now: float) -> None:
        """When the folder's sync job has ended: its report becomes the folder's status."""
        if held.job_id is None:
            return
        try:
            job = queue.get(self.app.db, held.job_id)
        except JobNotFoundError:  # deleted with the jobs' history: look again
            job = None
        if job is not None and not job.finished:
            return
        report = record(self.app, held.row.id, job) if job is not None else {}
        held.job_id = None
        if report.get("waiting"):
            held.due_at = min(held.due_at, now + self.tuning.settle + 0.5)
        if any(p.get("kind") == "unreadable" for p in report.get("problems", [])):
            held.due_at = min(held.due_at, now + self.tuning.retry)


def _identity(path: str) -> tuple | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino
