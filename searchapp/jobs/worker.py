"""The worker: a separate process that claims jobs and runs them.

``searchapp worker`` runs ``work`` until stopped. The Streamlit app calls
``ensure_worker`` to start one in the background when none is alive. A worker
holds an exclusive ``flock`` on ``DATA_DIR/worker.pid`` for as long as it runs
and writes its pid into it: the lock, not the pid, says a worker is alive, so
a stale file naming a recycled pid (a container restarted, the pid now some
other program's) never stops a new worker from starting. ``run_until_done`` lets the
CLI's ``--wait`` work the queue in its own process until one job ends, through
the same claim, so it never races a background worker.

A heartbeat thread keeps a running job fresh while the task is in a long step,
so only a dead worker's jobs are ever taken over. ``run_job`` finds the job's kind
(``searchapp.jobs.kinds``) and reads its payload into the kind's dataclass before
anything runs: a payload that does not fit fails the job, naming the field. Once a
job's success is recorded, the hooks services registered for its kind run
(``searchapp.jobs.after``: a saved search's check after an embed job). It is
the worker's error boundary: a task's SearchAppError is the job's error (one line, capped);
any other exception is logged with its traceback under a reference
(``searchapp.reporting``) and the job fails with one line naming it.

Example:
    >>> app = App(Settings.from_env({"SEARCHAPP_DATABASE_URL": "sqlite://"}))
    >>> work(app, stop_when_idle=True)       # nothing queued: returns at once
    0
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import gc
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from searchapp.base.private_files import open_private_file
from searchapp.config import (
    SECRET_VARIABLES,
    Settings,  # noqa: F401 - used in the doctest
    worker_rest,
)
from searchapp.context import App
from searchapp.errors import JobCancelled, SearchAppError, os_error
from searchapp.jobs import after, kinds, queue
from searchapp.jobs.processes import pid_alive
from searchapp.jobs.tasks import STOPPING, TaskContext, WorkerStopping, fault_point
from searchapp.reporting import describe, one_line

log = logging.getLogger("searchapp.worker")
HEARTBEAT_SECONDS = 10.0
PID_FILE = "worker.pid"  # the worker's lock, and its pid inside
LOG_FILE = "worker.log"
LOCK_WAIT_SECONDS = 2.0  # a new worker waits this long for a probe's shared lock to go


def run_job(app: App, job: queue.JobView) -> str:
    """Run one claimed job to its end; returns its final status ("lost": taken over)."""
    lease = job.lease
    stop_beat = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(app, lease, stop_beat), daemon=True)
    beat.start()
    try:
        fault_point(f"{job.kind} job {job.id} claimed")
        kind = kinds.kind(job.kind)  # unknown: the job fails, listing the known kinds
        payload = kinds.parse_payload(kind, job.payload)  # refused before anything runs
        result = kind.run(TaskContext(app, lease, kind.unit), payload)
        fault_point(f"{job.kind} job {job.id} returned, result not recorded")
        status = _final(app, lease, "succeeded", result=result, message="Done.")
        if status == "succeeded":  # what services follow this kind with (``jobs.after``)
            after.succeeded(app, kind.name, payload, result)
        return status
    except queue.LeaseLost:
        log.warning("job %s was taken over by another worker; this one stops", job.id)
        return "lost"
    except JobCancelled:
        return _final(app, lease, "cancelled", message="Cancelled.")
    except WorkerStopping:
        queue.requeue(app.db, lease, "Worker stopped; the job resumes with the next worker.")
        return "queued"
    except SearchAppError as exc:
        return _final(app, lease, "failed", error=one_line(exc))
    except Exception as exc:  # a bug: keep the worker alive, the traceback in worker.log
        message = describe(exc, Path(app.settings.data_dir) / LOG_FILE,
                           f"{job.kind} job {job.id}")
        log.error("job %s failed: %s", job.id, message)
        return _final(app, lease, "failed", error=message)
    finally:
        stop_beat.set()
        beat.join()


def _final(app: App, lease: queue.Lease, status: str, **fields) -> str:
    """Write the job's end, unless another worker holds it now (then write nothing)."""
    if queue.finish(app.db, lease, status, **fields):
        return status
    log.warning("job %s was taken over by another worker; its %s result is discarded",
                lease.job_id, status)
    return "lost"


def _heartbeat(app: App, lease: queue.Lease, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_SECONDS):
        try:
            if not queue.heartbeat(app.db, lease):
                return  # taken over: the task's next progress report stops it
        except Exception:  # a locked database now and then must not kill the job
            log.warning("heartbeat for job %s failed", lease.job_id, exc_info=True)


def work(app: App, stop_when_idle: bool = False, poll_seconds: float = 1.0,
         stop: threading.Event | None = None, rest_seconds: float = 0.0,
         on_rest: Callable[[App], None] | None = None) -> int:
    """Claim and run jobs; returns how many ran. Stops when idle if asked, or on ``stop``.

    ``rest_seconds`` (> 0): once that long without a job, free what the jobs loaded
    (``on_rest``, by default ``rest``), once per idle spell.
    """
    on_rest = on_rest or rest
    name, ran = queue.worker_name(), 0
    idle_since, rested = time.monotonic(), False
    while not STOPPING.is_set() and (stop is None or not stop.is_set()):
        job = queue.claim(app.db, name)
        if job is None:
            if stop_when_idle:
                return ran
            if rest_seconds and not rested and time.monotonic() - idle_since >= rest_seconds:
                on_rest(app)
                rested = True
            queue.QUEUED.wait(poll_seconds)  # a job queued by this process wakes it at once
            queue.QUEUED.clear()  # then the claim above runs again: nothing queued is missed
            continue
        log.info("job %s (%s) started", job.id, job.kind)
        status = run_job(app, job)
        log.info("job %s %s", job.id, status)
        ran += 1
        idle_since, rested = time.monotonic(), False
    return ran


def rest(app: App) -> None:
    """Give back the memory the jobs used: the App's encoders, indexes and memos go
    (``App.rest``), the garbage is collected, and glibc returns its free heap pages to
    the system (``malloc_trim``), without which freed memory stays in the process."""
    before = _rss_mb()
    app.rest()
    gc.collect()
    _trim_heap()
    log.info("idle: freed the loaded models and indexes (%s MB -> %s MB resident)", before,
             _rss_mb())


def _trim_heap() -> None:
    with contextlib.suppress(OSError, AttributeError):  # not glibc: the allocator keeps it
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _rss_mb() -> int | None:
    """This process' resident memory in MB (Linux), for the log."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
    except (OSError, ValueError, IndexError):
        return None


def run_until_done(app: App, job_id: int, on_progress=None, poll_seconds: float = 0.5
                   ) -> queue.JobView:
    """Work the queue in this process until job ``job_id`` has finished; return it."""
    name = queue.worker_name()
    while True:
        job = queue.get(app.db, job_id)
        if on_progress:
            on_progress(job)
        if job.finished:
            return job
        claimed = queue.claim(app.db, name)
        if claimed is None:
            time.sleep(poll_seconds)  # another worker has it: wait for it
        else:
            run_job(app, claimed)


# ---- the background process ---------------------------------------------------
def worker_pid(settings) -> int | None:
    """The pid of a live background worker for ``settings.data_dir``, if any (see
    ``worker_pid_in``)."""
    return worker_pid_in(Path(settings.data_dir))


def worker_pid_in(data_dir: Path) -> int | None:
    """The pid of a live background worker for the data folder ``data_dir``, if any.

    Alive means: some process holds the lock on ``worker.pid`` (probed with a
    shared, non-blocking ``flock``); the pid is what that worker wrote in it.

    Example:
        >>> import tempfile
        >>> worker_pid_in(Path(tempfile.mkdtemp())) is None
        True
    """
    try:  # a link there is not a worker's pid file: it is not read
        handle = open_private_file(data_dir / PID_FILE, os.O_RDONLY, "rb")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # a worker holds it
            try:
                pid = int(handle.read().strip())
            except ValueError:
                return None
            return pid if pid_alive(pid) else None
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


WORKER_NICE = 10  # the worker's niceness above its starter's: searches come first


def ensure_worker(settings) -> int:
    """Start ``searchapp worker`` in the background unless one is alive; return its pid.

    The worker inherits the environment less the web app's secrets (``SECRET_VARIABLES``):
    it never serves a page, so it has no use for the password.
    """
    pid = worker_pid(settings)
    if pid:
        return pid
    log_path = Path(settings.data_dir) / LOG_FILE
    inherited = {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES}
    env = {**inherited, "SEARCHAPP_DATA_DIR": str(settings.data_dir),
           "SEARCHAPP_DATABASE_URL": settings.database_url, "SEARCHAPP_DEVICE": settings.device,
           "SEARCHAPP_MODEL": settings.model}
    try:
        with open_private_file(log_path) as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "searchapp", "worker"], stdout=out, stderr=out,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True,
            )
    except OSError as exc:  # a read-only or full data folder
        raise (os_error(exc, settings.data_dir) or exc) from exc
    return proc.pid


def hold_worker_lock(data_dir: Path, wait: float = LOCK_WAIT_SECONDS):
    """The open, exclusively locked ``worker.pid`` with this process' pid in it; None when
    another worker holds it (after ``wait`` seconds: a probe holds it for microseconds).

    Closing the returned file releases the lock.

    Example:
        >>> handle = hold_worker_lock(Path(tempfile.mkdtemp()))      # doctest: +SKIP
    """
    path = Path(data_dir) / PID_FILE
    try:  # never through a link: the pid is written, and emptied at exit, in our own file
        handle = open_private_file(path, os.O_RDWR | os.O_CREAT, "r+b")
    except OSError as exc:
        raise (os_error(exc, data_dir) or exc) from exc
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                handle.close()
                return None
            time.sleep(0.05)
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()).encode())
    handle.flush()
    return handle


def yield_to_searches(step: int = WORKER_NICE) -> int:
    """Lower this process' CPU priority by ``step`` (``os.nice``); the niceness it now has.

    The worker's jobs (an embed job's torch threads above all) want every core for
    minutes; a search wants one for milliseconds. At a niceness 10 above the server
    the kernel gives the server about nine tenths of a core both want, so a search
    during an embed job waits little (``benchmarks/api_load.py --embed-job``), and the
    job takes what searches leave. An unprivileged process may always lower its own
    priority; where it cannot, the worker runs as it is.

    Example:
        >>> yield_to_searches(0) == os.nice(0)
        True
    """
    try:
        return os.nice(step)
    except OSError as exc:  # pragma: no cover - a sandbox refusing setpriority
        log.warning("could not lower the worker's priority: %s", exc)
        return os.nice(0)


def serve(app: App, companions: Sequence[Callable[[threading.Event], None]] = (),
          start_afresh: bool = False) -> int:
    """Entry point of ``searchapp worker``: hold the worker lock, work until SIGTERM/SIGINT.

    On a signal the running job is put back in the queue at its next progress
    report, so stopping the app never waits for a long job to end. ``companions`` run
    in threads of their own beside the jobs (the CLI passes the watched folders'
    keeper) and are given the stop event.
    The worker runs at a lower CPU priority than the server (``yield_to_searches``).

    Idle for ``SEARCHAPP_WORKER_REST`` seconds, it gives back what its jobs loaded
    (``rest``). With ``start_afresh`` (the CLI's worker, a process of its own) and a job
    having loaded torch, whose libraries a process cannot unload (about 400 MB), it
    starts afresh instead (``_start_afresh``: the same pid, the lock kept), back to the
    memory of a worker that has run nothing.
    """
    inherited = os.environ.pop(LOCK_FD_VARIABLE, None)  # set by _start_afresh
    if inherited is None:
        yield_to_searches()  # once: a fresh start keeps its niceness
    lock = adopt_worker_lock(int(inherited)) if inherited else None
    lock = lock or hold_worker_lock(app.settings.data_dir)
    if lock is None:
        log.info("a worker (pid %s) already serves this data folder; running alongside it",
                 worker_pid(app.settings))
    stop = threading.Event()

    def on_signal(*_) -> None:
        stop.set()
        STOPPING.set()  # the running task stops at its next progress report

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    log.info("worker %s ready (data: %s)", queue.worker_name(), app.settings.data_dir)
    threads = [threading.Thread(target=run, args=(stop,), daemon=True) for run in companions]
    for thread in threads:
        thread.start()
    afresh = threading.Event()

    def rest_or_start_afresh(app: App) -> None:
        if start_afresh and lock is not None and HEAVY_MODULE in sys.modules:
            afresh.set()  # the loop ends, the companions stop, then the process starts again
            stop.set()
        else:
            rest(app)

    try:
        return work(app, stop=stop, rest_seconds=worker_rest(), on_rest=rest_or_start_afresh)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        if afresh.is_set() and not STOPPING.is_set():
            _start_afresh(app, lock)  # does not return
        if lock is not None:
            lock.truncate(0)  # no pid left behind to mistake for a worker
            lock.close()


HEAVY_MODULE = "torch"  # loaded by a job, it stays until the process ends
LOCK_FD_VARIABLE = "SEARCHAPP_WORKER_LOCK_FD"  # the worker lock's descriptor, across exec


def _start_afresh(app: App, lock) -> None:
    """Replace this process' image with a new ``searchapp worker`` (``execv``): the same
    pid, so the pid file and whoever stopped the worker by pid stay right; the lock's
    descriptor is handed over open (the lock lives on the open file, which survives
    exec), so no other worker can take the data folder in between."""
    log.info("idle: starting afresh to give back the memory of the libraries the jobs "
             "loaded (%s MB resident)", _rss_mb())
    app.db.dispose()
    logging.shutdown()  # flush the log
    sys.stdout.flush()
    sys.stderr.flush()
    os.set_inheritable(lock.fileno(), True)
    os.environ[LOCK_FD_VARIABLE] = str(lock.fileno())
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def adopt_worker_lock(fd: int):
    """The worker lock handed over by ``_start_afresh`` (its descriptor ``fd``), or None
    when ``fd`` is not a locked ``worker.pid`` of this process any more."""
    try:
        handle = os.fdopen(fd, "r+b")
        os.set_inheritable(fd, False)
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours already: succeeds at once
    except OSError:
        return None
    handle.seek(0)
    if handle.read().strip() != str(os.getpid()).encode():
        handle.close()
        return None
    return handle
