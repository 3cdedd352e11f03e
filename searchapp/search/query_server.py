"""Searches for other processes: the server side of ``DATA_DIR/run/query.sock``.

A process that keeps the App warm (``searchapp worker``, the app server) runs
``QueryServer.run`` in a thread, so ``searchapp search`` on the same data folder is
answered here in milliseconds instead of loading the model itself (``query_wire`` is the
client and says what travels). One process of the folder serves at a time: the one
holding the exclusive ``flock`` on ``DATA_DIR/run/query.lock``; the others try again
every few seconds and take over when it ends. The holder of the lock is the only process
that can be listening, so a socket file it finds is stale (a process killed) and is
replaced. The socket is made 0600 in the 0700 folder ``run`` of the 0700 data folder.

A request about another database than this process' own is answered ``elsewhere``;
a search's SearchAppError travels as its one-line message, any other exception as the
line ``reporting.describe`` makes of it (the traceback in ``DATA_DIR/searchapp.log``).

Example:
    >>> stop = threading.Event()
    >>> server = QueryServer(lambda: app, app.settings.data_dir)          # doctest: +SKIP
    >>> threading.Thread(target=server.run, args=(stop,), daemon=True).start()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from searchapp.base.private_files import open_private, private_dir
from searchapp.context import App
from searchapp.reporting import LOG_NAME, describe
from searchapp.search import query_wire
from searchapp.search.modes import DEFAULT_MODE
from searchapp.search.service import check_mode, hit_json, search

log = logging.getLogger(__name__)
LOCK_NAME = "query.lock"
RETRY_SECONDS = 3.0  # a process that does not serve checks this often whether it should
ACCEPT_SECONDS = 0.5  # how soon a stop is noticed
READ_SECONDS = 10.0  # a client sends its request at once


class QueryServer:
    """Answers the searches of ``searchapp search`` with this process' App."""

    def __init__(self, app: Callable[[], App], data_dir: Path,
                 respond: Callable[[App, dict], dict] | None = None):
        # respond: a request → its answer's dict (the front end's: hits and answers,
        # ``answers.service.answer_request``); default: the hits only
        self.app, self.data_dir = app, Path(data_dir)
        self.respond = respond or search_request
        self.path = query_wire.socket_path(self.data_dir)

    def run(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set (a worker's companion, or the server's thread)."""
        while not stop.is_set():
            try:
                lock = self._take_lock()
            except OSError as exc:  # a read-only or broken data folder: nobody is asked
                log.warning("not answering searches on %s: %s", self.path, exc)
                return
            if lock is None:
                stop.wait(RETRY_SECONDS)
                continue
            try:
                self._serve(stop)
            except OSError as exc:
                log.warning("not answering searches on %s: %s", self.path, exc)
                stop.wait(RETRY_SECONDS)
            finally:
                with contextlib.suppress(OSError):
                    self.path.unlink()
                os.close(lock)

    def _take_lock(self) -> int | None:
        private_dir(self.path.parent)
        fd = open_private(self.path.parent / LOCK_NAME, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def _serve(self, stop: threading.Event) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale file: its process died without removing it
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            with query_wire.short_name(self.path) as name:
                listener.bind(name)
            os.chmod(self.path, 0o600)
            listener.listen(16)
            listener.settimeout(ACCEPT_SECONDS)
            log.info("answering searches on %s", self.path)
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(READ_SECONDS)
                request = query_wire.read_message(conn)
                conn.settimeout(None)
                query_wire.send_message(conn, self.answer(request))
            except (OSError, ValueError) as exc:  # a client gone, or not one of ours
                log.info("a search request was dropped: %s", exc)

    def answer(self, request: object) -> dict:
        """The answer to one request (see ``query_wire``): hits, an error line, or
        ``elsewhere`` when it is about another database.

        Example:
            >>> QueryServer(lambda: app, Path("/d")).answer({"database": "other"})  # doctest: +SKIP
            {'elsewhere': 'this process serves another database'}
        """
        try:
            app = self.app()
            if not isinstance(request, dict) or request.get("database") != \
                    query_wire.database_key(app.settings.database_url):
                return {"elsewhere": "this process serves another database"}
            return self.respond(app, request)
        except Exception as exc:  # the boundary: one line back, a bug's traceback logged
            return {"error": describe(exc, self.data_dir / LOG_NAME, "search over the socket")}


def search_request(app: App, request: dict) -> dict:
    """A wire request searched: ``{"mode": ..., "hits": [hit_json, ...]}``."""
    mode = check_mode(request.get("mode") or DEFAULT_MODE)
    hits = search(app, request["corpus"], request["query"], k=request.get("k", 10),
                  min_score=request.get("min_score"), mode=mode,
                  where=request.get("where"), rerank=bool(request.get("rerank")))
    return {"mode": mode, "hits": [hit_json(h) for h in hits]}
