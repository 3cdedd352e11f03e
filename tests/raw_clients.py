"""Raw clients for the door tests: httpx for HTTP, websockets for Streamlit's stream.

They speak to a real server (``tests.browser.served_app``) on 127.0.0.1 the
way a browser's code does, without a browser: log in with the form's POST,
open ``/_stcore/stream`` with the ``Sec-WebSocket-Protocol`` entries
Streamlit's frontend sends, ask for a script run and read Streamlit's
protobuf messages until the run ends.

Example:
    >>> with httpx.Client(base_url=url) as client:                    # doctest: +SKIP
    ...     cookie = log_in(client, "pw")
    ...     with stream(url, cookie) as ws:
    ...         run = rerun(ws)
    ...         print(run.session_id, run.texts()[:1])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import ClientConnection, connect

COOKIE = "searchapp_session"
RUN_TIMEOUT = 120.0  # seconds for one script run (the first loads the App)


def log_in(client: httpx.Client, password: str, headers: dict | None = None) -> str:
    """POST the login form as the login page does (from its own origin); returns the login
    cookie's value (asserts the login worked)."""
    origin = str(client.base_url).rstrip("/")
    response = client.post("/login", data={"password": password, "next": "/"},
                           headers={"Origin": origin, **(headers or {})})
    assert response.status_code == 303, (response.status_code, response.text)
    return response.cookies[COOKIE]


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://", 1) + "/_stcore/stream"


@contextlib.contextmanager
def stream(url: str, cookie: str | None, resume: str | None = None,
           origin: str | None = None) -> Iterator[ClientConnection]:
    """A websocket on ``/_stcore/stream`` with the login cookie (or none), asking to resume
    Streamlit session ``resume`` if given, sent from ``origin`` (a page's) if given."""
    protocols = ["streamlit", "PLACEHOLDER_AUTH_TOKEN", *([resume] if resume else [])]
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
    if origin:
        headers["Origin"] = origin
    with connect(ws_url(url), subprotocols=protocols, additional_headers=headers,
                 open_timeout=30, max_size=None) as ws:
        yield ws


@dataclass
class Run:
    """What one script run sent: the Streamlit session id and the messages."""

    session_id: str | None = None
    messages: list[ForwardMsg] = field(default_factory=list)

    def elements(self) -> list:
        return [m.delta.new_element for m in self.messages
                if m.WhichOneof("type") == "delta" and m.delta.WhichOneof("type") == "new_element"]

    def texts(self) -> list[str]:
        """Headings, alerts, markdown and button labels, in order."""
        found = []
        for element in self.elements():
            kind = element.WhichOneof("type")
            if kind in ("heading", "markdown", "alert"):
                found.append(getattr(element, kind).body)
            elif kind == "button":
                found.append(element.button.label)
            elif kind == "exception":
                found.append(f"EXCEPTION {element.exception.message}")
        return found


def send(ws: ClientConnection, **fields) -> None:
    """Send a BackMsg with one field set, e.g. ``send(ws, clear_cache=True)``."""
    msg = BackMsg()
    for name, value in fields.items():
        setattr(msg, name, value)
    ws.send(msg.SerializeToString())


def rerun(ws: ClientConnection, page_name: str = "") -> Run:
    """Ask for a script run (as the browser does on load) and read it to its end."""
    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_name = page_name
    ws.send(msg.SerializeToString())
    return read_run(ws)


def read_run(ws: ClientConnection, timeout: float = RUN_TIMEOUT) -> Run:
    """Read messages until Streamlit says the script finished."""
    run = Run()
    while True:
        msg = ForwardMsg.FromString(ws.recv(timeout=timeout))
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            run.session_id = msg.new_session.initialize.session_id
        run.messages.append(msg)
        if kind == "script_finished":
            return run
