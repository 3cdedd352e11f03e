"""The door's check in front of every request: pure ASGI, outermost, before Streamlit.

For each HTTP request and websocket upgrade (pages, ``/_stcore/*`` with the
stream and uploads, ``/media/*``, ``/static/*``, component routes, anything a
later version mounts) the middleware asks ``Door.identify`` who it is. Nobody:
an HTML navigation is redirected to ``/login?next=PATH``, any other request
gets 401, a websocket upgrade is refused (403) before Streamlit sees it. Only
``/login`` (GET and POST), ``/logout`` (which checks its own token) and
``/healthz`` are public, and a saved search's feed (``/feeds/saved/<token>.atom``,
``feeds``: its token is its credential).

For a login it also:

- notes activity (the idle expiry moves; websocket heartbeats do not count);
- binds Streamlit's session ids to the login (``streamlit_sessions``): a
  websocket may only resume a Streamlit session created under the same
  login, an upload may only target one;
- closes the login's websockets when it ends (logout, idle or absolute
  expiry), so an open tab or a copied cookie loses the app at once.

The JSON API (``/api/v1/``) is asked the same question, with API keys
(``Authorization: Bearer KEY``) as a second credential: a refusal there is a
401 problem (``application/problem+json``, ``WWW-Authenticate: Bearer``), a
key presented but not known is refused even on an open server, and the
Principal (login, key, or the open server's local user) travels on in
``scope["searchapp.principal"]`` so the API can tell a read-only key. On an open
server (no password, loopback only) whose API has keys, the local user's browser
still reads and tries the API from this server's own pages (the docs at
``/api/v1/docs``; ``Sec-Fetch-Site`` same-origin or none): whoever can open the
pages there can already do everything the API does, and a browser cannot send a key.

Every HTTP answer gets security headers (``nosniff``, no framing by other
sites, same-origin referrers). Without a password the door is open: requests
pass untouched except for those headers (the API still asks for a key once
any exists).

Example (``serve.py``):
    >>> Middleware(DoorMiddleware, door=install())           # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any
from urllib.parse import quote

from searchapp.web import streamlit_sessions as st_ids
from searchapp.web.door import LOGIN_PATH, LOGOUT_PATH, Door
from searchapp.web.feeds import is_feed
from searchapp.web.identity import (
    LOCAL,
    PRINCIPAL_KEY,
    Principal,
    Scope,
    bearer_token,
    from_a_browser_here,
    header_values,
    is_api,
)
from searchapp.web.problems import MEDIA_TYPE, problem_bytes
from searchapp.web.sessions import BrowserSession

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
# The door's own routes, answered before any login (``routes.py``); other methods on these
# paths, and websockets, need a login like everything else.
PUBLIC = {LOGIN_PATH: {"GET", "HEAD", "POST"}, LOGOUT_PATH: {"GET", "HEAD", "POST"},
          HEALTH_PATH: {"GET", "HEAD"}}
WEBSOCKET_CHECK_SECONDS = 30.0  # an open websocket re-checks its login at least this often
POLICY_VIOLATION = 1008

SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)

Receive = Any
Send = Any


class DoorMiddleware:
    """Refuses every request without a valid credential; see the module docstring."""

    def __init__(self, app: Any, door: Door) -> None:
        self.app = app
        self.door = door

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if kind == "http":
            send = _with_security_headers(send)
        if self.door.error is not None:
            await _refuse(scope, receive, send, 503, self.door.error)
            return
        if is_api(scope):
            await self._api(scope, receive, send)
            return
        if not self.door.enabled or is_public(scope):
            await self.app(scope, receive, send)
            return
        principal = self.door.identify(scope)
        if principal is None or not principal.allows(scope["path"]):
            await _refuse_anonymous(scope, receive, send)
            return
        session = principal.session
        if session is None:  # another credential kind: no Streamlit session to bind
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            await self._websocket(scope, receive, send, principal, session)
            return
        if scope["path"].startswith(st_ids.UPLOAD_PREFIX):
            target = st_ids.upload_session_id(scope["path"])
            if target is None or not self.door.sessions.owns(session, target):
                log.warning("refused an upload to a Streamlit session of another login (%s)",
                            principal.name)
                await _refuse(scope, receive, send, 403,
                              "This upload belongs to another session.")
                return
        self.door.sessions.touch(session)
        await self.app(scope, receive, send)

    async def _api(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The JSON API: a login cookie or a live API key, or nobody on an open server."""
        if scope["type"] != "http":
            await _refuse(scope, receive, send, 403, "The API speaks HTTP only.")
            return
        principal = self.door.identify(scope)
        if principal is None or not principal.allows(scope["path"]):
            if bearer_token(scope) is not None:
                await _problem(send, 401, "unauthorized",
                               "This API key is not valid: it was revoked or mistyped. "
                               "`searchapp keys list` shows the live keys.")
                return
            if self.door.api_locked() and not self._local_browser(scope):
                await _problem(send, 401, "unauthorized",
                               "Send an API key: Authorization: Bearer KEY (create one with "
                               "`searchapp keys create --name NAME` or on the Settings page).")
                return
            principal = LOCAL
        if principal.session is not None:
            self.door.sessions.touch(principal.session)
        scope[PRINCIPAL_KEY] = principal
        await self.app(scope, receive, send)

    def _local_browser(self, scope: Scope) -> bool:
        """The local user's browser on an open server (the pages are open to it too)."""
        return not self.door.enabled and from_a_browser_here(scope)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send,
                         principal: Principal, session: BrowserSession) -> None:
        """Pass a logged-in websocket on, bound to its login and closed when the login ends."""
        registry = self.door.sessions
        if scope["path"] == st_ids.STREAM_PATH:
            wanted = st_ids.requested_session_id(scope)
            if wanted is not None and not registry.owns(session, wanted):
                log.warning("a websocket of %s asked for a Streamlit session of another login; "
                            "it gets a new one", principal.name)
                scope = st_ids.without_session_id(scope)
        registry.touch(session)
        ended = asyncio.Event()
        loop = asyncio.get_running_loop()
        stop_listening = registry.listen(session, lambda: loop.call_soon_threadsafe(ended.set))
        guard = _SocketGuard(self.door, session, ended, receive, send)
        try:
            await self.app(scope, guard.receive, guard.send)
        finally:
            stop_listening()
            await guard.finish()


class _SocketGuard:
    """Wraps one websocket's receive/send: learns the Streamlit session id, counts activity,
    and turns the end of the login into a disconnect for Streamlit and a close for the browser."""

    def __init__(self, door: Door, session: BrowserSession, ended: asyncio.Event,
                 receive: Receive, send: Send) -> None:
        self.door, self.session, self.ended = door, session, ended
        self._receive, self._send = receive, send
        self._pending: asyncio.Task | None = None
        self.closed_by_door = False
        self.bound = False

    def _login_live(self) -> bool:
        return not self.ended.is_set() and self.door.sessions.get(self.session.id) is not None

    async def receive(self) -> dict:
        while True:
            if self.closed_by_door:
                return {"type": "websocket.disconnect", "code": POLICY_VIOLATION}
            if self._pending is None:
                self._pending = asyncio.ensure_future(self._receive())
            ended = asyncio.ensure_future(self.ended.wait())
            try:
                await asyncio.wait({self._pending, ended}, timeout=WEBSOCKET_CHECK_SECONDS,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                ended.cancel()
            if not self._login_live():
                self.closed_by_door = True
                log.info("closed a websocket: its login ended")
                continue
            if not self._pending.done():
                continue  # the periodic check passed; keep waiting for the same message
            message, self._pending = self._pending.result(), None
            payload = message.get("bytes")
            if payload is not None and not st_ids.is_heartbeat(payload):
                self.door.sessions.touch(self.session)
            return message

    async def send(self, message: dict) -> None:
        if self.closed_by_door:
            if message["type"] == "websocket.send":
                return  # the browser no longer gets the app
        elif not self.bound and message["type"] == "websocket.send" and message.get("bytes"):
            created = st_ids.created_session_id(message["bytes"])
            if created is not None:
                self.door.sessions.bind(self.session, created)
                self.bound = True
        await self._send(message)

    async def finish(self) -> None:
        """After Streamlit's handler returned: drop a pending read, close for the door."""
        if self._pending is not None:
            self._pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pending
        if self.closed_by_door:
            with contextlib.suppress(Exception):  # already closed by the other side
                await self._send({"type": "websocket.close", "code": POLICY_VIOLATION,
                                  "reason": "logged out"})


def _with_security_headers(send: Send) -> Send:
    async def wrapped(message: dict) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {key.lower() for key, _ in headers}
            headers += [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


def is_public(scope: Scope) -> bool:
    """Whether a request is for one of the door's own public routes.

    Example:
        >>> is_public({"type": "http", "path": "/login", "method": "POST"})
        True
        >>> is_public({"type": "http", "path": "/login", "method": "PUT"})
        False
        >>> is_public({"type": "websocket", "path": "/healthz"})
        False
    """
    methods = PUBLIC.get(scope["path"])
    if is_feed(scope):  # a saved search's feed: its token is the credential (``feeds``)
        return True
    return scope["type"] == "http" and methods is not None and scope.get("method") in methods


def is_navigation(scope: Scope) -> bool:
    """Whether an HTTP request is a browser loading a page (then: redirect to the login).

    Example:
        >>> is_navigation({"method": "GET", "headers": [(b"sec-fetch-mode", b"navigate")]})
        True
        >>> is_navigation({"method": "GET", "headers": [(b"accept", b"application/json")]})
        False
    """
    if scope.get("method") not in ("GET", "HEAD"):
        return False
    mode = header_values(scope, b"sec-fetch-mode")
    if mode:
        return mode[0] == "navigate"
    return any("text/html" in accept for accept in header_values(scope, b"accept"))


def login_redirect(scope: Scope) -> str:
    """``/login?next=...`` back to the page that was asked for.

    Example:
        >>> login_redirect({"path": "/search", "query_string": b"q=1"})
        '/login?next=/search%3Fq%3D1'
    """
    target = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}"
                              if scope.get("query_string") else "")
    return f"{LOGIN_PATH}?next={quote(target, safe='/')}"


async def _refuse_anonymous(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "http" and is_navigation(scope):
        await _answer(send, 303, b"", [(b"location", login_redirect(scope).encode())])
        return
    await _refuse(scope, receive, send, 401, f"Log in first: {LOGIN_PATH}")


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, text: str) -> None:
    """An HTTP error answer, or a refused websocket upgrade (the server answers 403)."""
    if scope["type"] == "websocket":
        message = await receive()  # websocket.connect
        if message["type"] == "websocket.connect":
            await send({"type": "websocket.close", "code": POLICY_VIOLATION})
        return
    await _answer(send, status, f"{text}\n".encode())


async def _problem(send: Send, status: int, slug: str, detail: str) -> None:
    """An RFC 9457 problem from the door, for the API's clients."""
    await _answer(send, status, problem_bytes(status, slug, detail),
                  [(b"www-authenticate", b'Bearer realm="searchapp"')], MEDIA_TYPE)


async def _answer(send: Send, status: int, body: bytes,
                  headers: list[tuple[bytes, bytes]] | None = None,
                  media_type: str = "text/plain; charset=utf-8") -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", media_type.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *(headers or []),
    ]})
    await send({"type": "http.response.body", "body": body})
