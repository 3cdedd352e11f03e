"""Turn Nagle's algorithm off on the server's listening socket (Streamlit 1.67 leaves it on).

Streamlit binds the port itself (``socket.socket(family)``, protocol 0) and hands
the socket to uvicorn. asyncio turns ``TCP_NODELAY`` on for the connections it
accepts only when the socket's protocol is ``IPPROTO_TCP`` (``_set_nodelay``), so
on Streamlit's socket every connection keeps Nagle's algorithm. uvicorn writes a
response's head and body as two segments; on a kept-alive connection the second
waits for the client's delayed acknowledgement: about 40 ms added to every
response after the first (measured: ``/healthz`` 44 ms with a kept-alive client,
5 ms on a new connection). Linux copies ``TCP_NODELAY`` from a listening socket
to the connections it accepts, so setting it on the listener once fixes them all.

The listener is not reachable through any API, so it is found among the live
socket objects (once, at start): a listening TCP socket on the server's port.

Example:
    >>> set_nodelay_on_listeners(8501)                          # doctest: +SKIP
    1
"""

from __future__ import annotations

import contextlib
import gc
import logging
import socket

log = logging.getLogger(__name__)


def set_nodelay_on_listeners(port: int) -> int:
    """Set ``TCP_NODELAY`` on this process' listening TCP sockets on ``port``; how many.

    Example:
        >>> set_nodelay_on_listeners(1)                            # no such listener here
        0
    """
    done = 0
    for obj in gc.get_objects():
        # type(), not isinstance(): a proxy object (torch has some) may warn when its
        # __class__ is read
        if not issubclass(type(obj), socket.socket) or obj.fileno() < 0:
            continue
        with contextlib.suppress(OSError):
            if obj.family not in (socket.AF_INET, socket.AF_INET6) or \
                    obj.type != socket.SOCK_STREAM or obj.getsockname()[1] != port or \
                    not obj.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                continue
            obj.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            done += 1
    log.info("TCP_NODELAY set on %d listening socket(s) of port %d", done, port)
    return done
