"""Where Streamlit's own session ids travel, so the door can bind them to a login.

Streamlit re-attaches a websocket to any session whose id the client names,
and that id is not secret (it is in every upload URL). The door therefore
records which Streamlit sessions were created under which login and:

- websocket ``/_stcore/stream``: the client names the session to resume in
  the third entry of ``Sec-WebSocket-Protocol`` (``streamlit, XSRF-TOKEN,
  SESSION-ID``). An id not created under this login is removed from the
  header, so Streamlit starts a fresh session instead of handing over another's.
- the id of the session Streamlit created is read from the first
  ``new_session`` message it sends (``NewSession.initialize.session_id``).
- uploads ``/_stcore/upload_file/SESSION-ID/FILE-ID``: refused unless the id
  was created under this login.

Example:
    >>> scope = {"headers": [(b"sec-websocket-protocol", b"streamlit, tok, st-1")],
    ...          "subprotocols": ["streamlit", "tok", "st-1"]}
    >>> requested_session_id(scope)
    'st-1'
    >>> requested_session_id(without_session_id(scope)) is None
    True
    >>> upload_session_id("/_stcore/upload_file/st-1/file-9")
    'st-1'
"""

from __future__ import annotations

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from searchapp.web.identity import Scope

STREAM_PATH = "/_stcore/stream"
UPLOAD_PREFIX = "/_stcore/upload_file/"
PROTOCOL_HEADER = b"sec-websocket-protocol"


def requested_session_id(scope: Scope) -> str | None:
    """The Streamlit session id a websocket asks to resume, or None for a new session."""
    for key, value in scope.get("headers", ()):
        if key == PROTOCOL_HEADER:
            entries = [entry.strip() for entry in value.decode("latin-1").split(",")]
            return entries[2] if len(entries) >= 3 and entries[2] else None
    return None


def without_session_id(scope: Scope) -> Scope:
    """A copy of a websocket scope that asks for a new Streamlit session (keeps the
    subprotocol and the XSRF token, drops the session id)."""
    headers = []
    for key, value in scope.get("headers", ()):
        if key == PROTOCOL_HEADER:
            entries = [entry.strip() for entry in value.decode("latin-1").split(",")][:2]
            value = ", ".join(entries).encode("latin-1")
        headers.append((key, value))
    return {**scope, "headers": headers, "subprotocols": list(scope.get("subprotocols", []))[:2]}


def created_session_id(payload: bytes) -> str | None:
    """The session id in a ``new_session`` ForwardMsg from Streamlit, else None.

    Example:
        >>> msg = ForwardMsg()
        >>> msg.new_session.initialize.session_id = "st-7"
        >>> created_session_id(msg.SerializeToString()), created_session_id(b"")
        ('st-7', None)
    """
    msg = ForwardMsg()
    try:
        msg.ParseFromString(payload)
    except Exception:  # not ours to judge: Streamlit sent it
        return None
    if msg.WhichOneof("type") != "new_session":
        return None
    return msg.new_session.initialize.session_id or None


def is_heartbeat(payload: bytes) -> bool:
    """Whether a message from the browser is only the websocket's heartbeat (not activity).

    Example:
        >>> msg = BackMsg(); msg.app_heartbeat = True
        >>> is_heartbeat(msg.SerializeToString()), is_heartbeat(b"garbage")
        (True, False)
    """
    msg = BackMsg()
    try:
        msg.ParseFromString(payload)
    except Exception:  # Streamlit closes the socket for a bad frame; it is activity here
        return False
    return msg.WhichOneof("type") == "app_heartbeat"


def upload_session_id(path: str) -> str | None:
    """The Streamlit session id in an upload URL, or None for any other path."""
    if not path.startswith(UPLOAD_PREFIX):
        return None
    return path[len(UPLOAD_PREFIX):].split("/", 1)[0] or None
