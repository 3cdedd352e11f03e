"""Asking a running app or worker to search: the client side of ``DATA_DIR/run/query.sock``.

``searchapp search`` loads the model every time it runs in a process of its own (seconds);
an app server or ``searchapp worker`` on the same data folder has it loaded already. Such a
process listens on a Unix socket in the data folder (``query_server``): 0600 in a 0700
folder, the privacy of the database itself, so no password is asked. One JSON request per
connection (the search's arguments, sent, then the writing side shut) gets one JSON answer:

- ``{"hits": [hit_json, ...], "mode": "hybrid", "answers": [...], "answer": {...}}``: the
  search's hits (``service.hit_json``) and its answers (``answers.service.result_json``);
- ``{"error": "one line"}``: a SearchAppError's message (or a bug's line with its log
  reference), which ``ask`` raises as a SearchAppError: the CLI prints the same line as when
  it searches itself;
- ``{"elsewhere": "why"}``: the process serves another database; the caller searches itself.

``ask`` returns None when nothing answers (no socket file, a stale one left by a process
that died, a refused or timed-out connection): the caller then searches in its own process.
This module is the light side: the standard library only, no model, no numpy, no
SQLAlchemy, so a CLI answered over the socket starts in a fraction of a second.

Example:
    >>> ask(Path("/nonexistent"), {"corpus": "faq", "query": "x"}) is None
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from searchapp.errors import SearchAppError

RUN_DIR = "run"
SOCKET_NAME = "query.sock"
MAX_PATH = 100  # sun_path holds 108 bytes; longer paths are reached through the folder's fd
MAX_MESSAGE = 64 * 1024 * 1024  # an answer of 1,000 hits with long texts fits
CONNECT_SECONDS = 0.5
ANSWER_SECONDS = 120.0  # the process may have to load the corpus' model first
FIELDS = ("corpus", "query", "k", "mode", "where", "min_score", "rerank", "answer", "as_typed",
          "remember")  # remember: the user whose history keeps the query, once it ran


def socket_path(data_dir: Path) -> Path:
    """``DATA_DIR/run/query.sock``.

    Example:
        >>> socket_path(Path("/srv/data"))
        PosixPath('/srv/data/run/query.sock')
    """
    return Path(data_dir) / RUN_DIR / SOCKET_NAME


def database_key(database_url: str) -> str:
    """A fingerprint of the database a process works on (its URL may hold a password, which
    never travels): a server answers only requests about its own database.

    Example:
        >>> len(database_key("sqlite:///d/searchapp.db"))
        16
    """
    return hashlib.sha256(database_url.encode()).hexdigest()[:16]


def ask(data_dir: Path, request: dict, answer_seconds: float = ANSWER_SECONDS) -> dict | None:
    """The answer of the process serving ``data_dir`` to ``request``, or None when none does.

    Raises SearchAppError with the server's one-line message when the search failed there.

    Example:
        >>> ask(Path("/srv/data"), {"corpus": "faq", "query": "reset"})    # doctest: +SKIP
        {'hits': [...], 'mode': 'hybrid'}
    """
    path = socket_path(data_dir)
    if not path.parent.is_dir():
        return None
    try:
        with connect(path) as conn:
            conn.settimeout(answer_seconds)
            send_message(conn, request)
            conn.shutdown(socket.SHUT_WR)
            answer = read_message(conn)
    except (OSError, ValueError):  # nothing listening, a stale file, a process gone midway
        return None
    if not isinstance(answer, dict) or "elsewhere" in answer:
        return None
    if "error" in answer:
        raise SearchAppError(str(answer["error"]))
    return answer


def connect(path: Path) -> socket.socket:
    """A connected Unix socket to ``path`` (ConnectionRefusedError for a stale file)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(CONNECT_SECONDS)
    try:
        with short_name(path) as name:
            conn.connect(name)
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def short_name(path: Path) -> Iterator[str]:
    """The path to give ``bind``/``connect``: itself, or ``/proc/self/fd/N/query.sock``
    through its folder's descriptor when it is longer than a socket address holds (a deep
    data folder).

    Example:
        >>> with short_name(Path("/srv/run/query.sock")) as name:
        ...     name
        '/srv/run/query.sock'
    """
    if len(os.fsencode(path)) <= MAX_PATH:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def send_message(conn: socket.socket, message: dict) -> None:
    """``message`` as UTF-8 JSON (dates in a hit's metadata as strings, as ``--json`` prints
    them)."""
    conn.sendall(json.dumps(message, ensure_ascii=False, default=str).encode())


def read_message(conn: socket.socket) -> object:
    """The JSON the other side sent before it shut its writing side; ValueError when it is
    not JSON or larger than ``MAX_MESSAGE``."""
    chunks, size = [], 0
    while chunk := conn.recv(1 << 16):
        size += len(chunk)
        if size > MAX_MESSAGE:
            raise ValueError("message too large")
        chunks.append(chunk)
    if not chunks:
        raise ValueError("no answer")
    return json.loads(b"".join(chunks))

