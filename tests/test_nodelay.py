"""Nagle's algorithm off on the server's listening socket, so every accepted connection has
TCP_NODELAY (Streamlit 1.67 binds with protocol 0, and asyncio then leaves Nagle on: about
40 ms per kept-alive response, measured in benchmarks/api_load.py)."""

from __future__ import annotations

import socket

from searchapp.web.nodelay import set_nodelay_on_listeners


def test_the_listener_streamlit_binds_gets_nodelay_and_its_connections_inherit_it():
    listener = socket.socket(family=socket.AF_INET)  # as Streamlit binds it: protocol 0
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    other = socket.socket(family=socket.AF_INET)  # a socket that is not a listener on it
    try:
        assert set_nodelay_on_listeners(port) == 1
        assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        with socket.create_connection(("127.0.0.1", port)):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        assert not other.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        listener.close()
        other.close()
