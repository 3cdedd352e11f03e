"""Risky parses in worker processes, each with a timeout and a memory cap.

A damaged or hostile PDF can hang a reader or make it eat all memory; a C
library can crash. ``ExtractionPool`` runs ``func(*args)`` for a stream of tasks
in up to ``workers`` processes started fresh (``spawn``; never ``fork``: the
parent holds torch threads), each process under an address-space cap
(``RLIMIT_AS``, ``SEARCHAPP_EXTRACT_MEMORY``, default 2 GiB), each task under a
timeout (``SEARCHAPP_EXTRACT_TIMEOUT``, default 120 s) that counts from the task's
start or its last ``report_progress`` call: a 500-page scan read by OCR page by
page is alive for as long as pages keep coming, a reader stuck on one page is
not. ``on_progress(key, done, total)`` hears those reports in the parent (the
job's "page 45 of 300"). A task's outcome is its
result or an exception object, never raised: the reader's own error, ``TaskTimedOut``
or ``TaskCrashed`` (segfault, ``os._exit``, out of memory). A hung or dead worker
is killed and replaced; the other tasks go on. At most one task per worker is in
flight, so the task stream is read lazily (100,000 files cost no more memory
than 2). ``inline=True`` runs the tasks in this process (tests, small jobs).

Cost, measured on a busy 2-core box: a new worker (started, ``RLIMIT_AS`` set, this
module imported) takes about 0.23 s with ``spawn`` and 0.14-0.17 s with
``start_method="forkserver"``; a task on a running worker about 0.2 ms. A reader's
own imports (pypdfium2, lxml) come on top, once per worker. ``spawn`` is the
default because the fork server is shared by the whole process: modules another
part preloads into it (tests preload torch) would count against the memory cap.

Example:
    >>> with ExtractionPool(workers=2, timeout=5) as pool:       # doctest: +SKIP
    ...     sorted(pool.map_unordered(math.sqrt, [("a", (4,)), ("b", (-1,))]), key=str)
    [('a', 2.0), ('b', ValueError('math domain error'))]
    >>> with ExtractionPool(inline=True) as pool:
    ...     list(pool.map_unordered(int, [("a", ("7",)), ("b", ("x",))]))
    [('a', 7), ('b', ValueError("invalid literal for int() with base 10: 'x'"))]
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from multiprocessing.connection import Connection, wait
from typing import Any

from searchapp.intake.formats.document import DocumentError
from searchapp.intake.formats.registry import reader_modules
from searchapp.reporting import printable

DEFAULT_WORKERS = 2
DEFAULT_TIMEOUT = 120.0  # seconds per task
DEFAULT_MEMORY = 2 << 30  # bytes of address space per worker
STARTUP_SECONDS = 60.0  # a new worker's start, before the first task's timeout counts
STOP_GRACE = 2.0  # seconds a worker gets to exit on its own when the pool closes


_REPORT: Callable[[int, int], None] | None = None  # set while a task runs (see report_progress)


def report_progress(done: int, total: int) -> None:
    """Tell the pool how far the running task is (``done`` of ``total`` steps, e.g. OCR'd
    pages); it restarts the task's timeout and reaches the parent's ``on_progress``.
    Outside a pool task it does nothing.

    Example:
        >>> report_progress(3, 10)  # no task running here: nothing happens
    """
    if _REPORT is not None:
        _REPORT(done, total)


class TaskTimedOut(DocumentError):
    """A task ran past the timeout; its worker was killed."""

    def __init__(self, key: object, seconds: float):
        super().__init__(
            f"{printable(key)} took longer than {seconds:g} s to read; it may be damaged or "
            "very large. Check that it opens elsewhere, or allow more time with "
            "SEARCHAPP_EXTRACT_TIMEOUT=SECONDS.")


class TaskCrashed(DocumentError):
    """A task's worker died (a crash, ``os._exit``) or ran out of memory."""

    def __init__(self, key: object, memory: int):
        super().__init__(
            f"{printable(key)}: the reader crashed or ran out of memory reading it (each "
            f"reader may use {memory / (1 << 30):.3g} GiB); the file may be damaged. Check "
            "that it opens elsewhere, or allow more memory with SEARCHAPP_EXTRACT_MEMORY=SIZE.")


def limits_from_env(env: Mapping[str, str] | None = None) -> tuple[float, int]:
    """(timeout in seconds, memory in bytes) from ``SEARCHAPP_EXTRACT_TIMEOUT`` and
    ``SEARCHAPP_EXTRACT_MEMORY`` (bytes, or with K, M, G).

    Example:
        >>> limits_from_env({"SEARCHAPP_EXTRACT_TIMEOUT": "30", "SEARCHAPP_EXTRACT_MEMORY": "1G"})
        (30.0, 1073741824)
    """
    from searchapp.config import parse_size
    from searchapp.errors import ConfigError

    env = os.environ if env is None else env
    raw_time = (env.get("SEARCHAPP_EXTRACT_TIMEOUT") or "").strip() or str(DEFAULT_TIMEOUT)
    raw_memory = (env.get("SEARCHAPP_EXTRACT_MEMORY") or "").strip() or str(DEFAULT_MEMORY)
    try:
        timeout = float(raw_time)
        if not 0 < timeout <= 86_400:
            raise ValueError(raw_time)
    except ValueError:
        raise ConfigError(f"SEARCHAPP_EXTRACT_TIMEOUT={raw_time!r} is not a number of seconds "
                          "between 0 and 86400; e.g. 120.") from None
    try:
        memory = parse_size(raw_memory)
    except ValueError:
        raise ConfigError(f"SEARCHAPP_EXTRACT_MEMORY={raw_memory!r} is not a size; e.g. 2G or "
                          "500M.") from None
    return timeout, memory


def _serve(conn: Connection, memory: int, format_modules: tuple[str, ...] = ()) -> None:
    """A worker: cap the address space, register the parent's formats (the modules that
    register them, imported here as they were there), then run tasks until told to stop."""
    import importlib
    import resource

    for module in format_modules:
        importlib.import_module(module)
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    cap = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    global _REPORT
    _REPORT = lambda done, total: conn.send(("progress", (int(done), int(total))))  # noqa: E731
    conn.send(("ready", None))  # a task's time starts now, not while Python starts
    while (task := conn.recv()) is not None:
        func, args = task
        try:
            outcome: tuple[str, Any] = ("ok", func(*args))
        except MemoryError:
            conn.send(("oom", None))
            return  # a heap that ran out is not trusted with the next task
        except Exception as e:
            outcome = ("error", e)
        conn.send(_sendable(outcome))


def _sendable(outcome: tuple[str, Any]) -> tuple[str, Any]:
    """``outcome`` if it survives pickling, else the error saying why it could not."""
    try:
        pickle.loads(pickle.dumps(outcome))
        return outcome
    except Exception as e:
        what = "error" if outcome[0] == "error" else "result"
        return ("error", RuntimeError(f"the reader's {what} could not be sent back ({e!r}): "
                                      f"{printable(outcome[1])[:300]}"))


@contextlib.contextmanager
def _bare_main() -> Iterator[None]:
    """While a worker starts, ``__main__`` is an empty module: a spawned process imports
    the parent's main module first, and a worker needs nothing from it (under pytest it
    may be a Streamlit page a test ran; in the app, the whole CLI)."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


class _Worker:
    """One worker process, its pipe and the task it runs (key, started)."""

    def __init__(self, ctx: multiprocessing.context.BaseContext, memory: int):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, memory, reader_modules()),
                                   daemon=True)
        with _bare_main():
            self.process.start()
        child.close()
        self.key: object = None
        self.started: float | None = None
        self.ready = False

    def run(self, key: object, func: Callable, args: tuple) -> None:
        if not self.ready:  # a new process: its start (seconds on a busy machine) is not the task's
            self.ready = self.conn.poll(STARTUP_SECONDS) and self.conn.recv()[0] == "ready"
        self.conn.send((func, args))  # a task that cannot be pickled raises here, unsent
        self.key, self.started = key, time.monotonic()

    def finish(self) -> object:
        key, self.key, self.started = self.key, None, None
        return key

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


class ExtractionPool:
    """Runs ``func(*args)`` per task in worker processes; see the module docstring."""

    def __init__(self, workers: int = DEFAULT_WORKERS, timeout: float | None = None,
                 memory: int | None = None, inline: bool = False, start_method: str = "spawn",
                 on_progress: Callable[[Any, int, int], None] | None = None):
        default_timeout, default_memory = limits_from_env()
        self.workers = max(1, workers)
        self.timeout = timeout if timeout is not None else default_timeout
        self.memory = memory if memory is not None else default_memory
        self.inline = inline
        self.on_progress = on_progress
        self._ctx = multiprocessing.get_context(start_method)
        self._pool: list[_Worker] = []
        self._cancelled = False

    def __enter__(self) -> ExtractionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def map_unordered(self, func: Callable, items: Iterable[tuple[Any, tuple]]
                      ) -> Iterator[tuple[Any, Any]]:
        """(key, result or exception) for each (key, args) of ``items``, as they finish."""
        if self.inline:
            yield from self._inline(func, items)
            return
        tasks = iter(items)
        while not self._cancelled:
            self._start_tasks(func, tasks)
            busy = [w for w in self._pool if w.started is not None]
            if not busy:
                return
            yield from self._collect(busy)

    def _inline(self, func: Callable, items: Iterable[tuple[Any, tuple]]
                ) -> Iterator[tuple[Any, Any]]:
        global _REPORT
        for key, args in items:
            if self._cancelled:
                return
            _REPORT = lambda done, total, key=key: self._heard(key, done, total)  # noqa: E731
            try:
                outcome = func(*args)
            except Exception as e:
                outcome = e
            finally:
                _REPORT = None
            yield key, outcome

    def _heard(self, key: object, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(key, done, total)

    def _start_tasks(self, func: Callable, tasks: Iterator[tuple[Any, tuple]]) -> None:
        """Give each idle worker (starting workers up to ``workers``) the next task."""
        while not self._cancelled:
            idle = next((w for w in self._pool if w.started is None), None)
            if idle is None and len(self._pool) < self.workers:
                idle = _Worker(self._ctx, self.memory)
                self._pool.append(idle)
            if idle is None:
                return
            task = next(tasks, None)
            if task is None:
                return
            idle.run(task[0], func, tuple(task[1]))

    def _collect(self, busy: list[_Worker]) -> Iterator[tuple[Any, Any]]:
        """Wait for the first result, death or deadline among ``busy``; yield what ended."""
        deadline = min(w.started for w in busy) + self.timeout
        ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy],
                     timeout=max(0.0, deadline - time.monotonic()))
        now = time.monotonic()
        for worker in busy:
            if self._cancelled:
                return
            if worker.conn in ready or worker.process.sentinel in ready:
                if (ended := self._outcome(worker)) is not None:
                    yield ended
            elif now - worker.started >= self.timeout:
                self._replace(worker)
                key = worker.finish()
                yield key, TaskTimedOut(key, self.timeout)

    def _outcome(self, worker: _Worker) -> tuple[Any, Any] | None:
        """The task's end (key, result or exception), or None after a progress report."""
        try:
            status, value = worker.conn.recv() if worker.conn.poll() else ("dead", None)
        except (EOFError, OSError):
            status, value = "dead", None
        if status == "progress":
            worker.started = time.monotonic()  # alive: its timeout starts again
            self._heard(worker.key, *value)
            return None
        if status in ("ok", "error"):
            return worker.finish(), value
        self._replace(worker)
        key = worker.finish()
        return key, TaskCrashed(key, self.memory)

    def _replace(self, worker: _Worker) -> None:
        """Kill ``worker``; a new one starts when the next task needs it."""
        worker.kill()
        self._pool.remove(worker)

    def cancel(self) -> None:
        """Stop now: no new task starts, every worker is killed (safe from another thread)."""
        self._cancelled = True
        for worker in list(self._pool):
            if worker.process.is_alive():
                worker.process.kill()

    def close(self) -> None:
        """Tell idle workers to stop, wait a moment, kill what is left."""
        for worker in self._pool:
            try:
                if worker.started is None and worker.process.is_alive():
                    worker.conn.send(None)
            except OSError:
                pass
        for worker in self._pool:
            worker.process.join(STOP_GRACE if worker.started is None else 0)
            worker.kill()
        self._pool.clear()
