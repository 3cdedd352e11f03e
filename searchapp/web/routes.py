"""The door's own routes: the login form and its POST, logout, and a health check.

- ``GET /login``: the form (``login_page``); already logged in, straight on to ``next``.
- ``POST /login``: refused unless sent from this very site (``Sec-Fetch-Site``,
  then ``Origin`` or ``Referer`` against ``Host``; a request with none of them
  is not from a browser and passes), throttled per client
  (``throttle``), the password checked in a thread under the door's limiter.
  Right: a new session, the cookie, ``303`` to ``next``. Wrong: 401 and the form
  again, saying how long to wait when the next try must wait.
- ``GET /logout?t=TOKEN`` (the "Log out" button) or a same-site ``POST /logout``:
  ends the session server-side, drops the cookie, back to the login form.
- ``GET /healthz``: ``ok``, public (the only page that is).

Example (``serve.py``):
    >>> st.App("app.py", routes=door_routes(install()))    # doctest: +SKIP
"""

from __future__ import annotations

import logging
import math
from urllib.parse import parse_qs, urlsplit

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from searchapp.web import cookies, login_page
from searchapp.web.door import LOGIN_PATH, LOGOUT_PATH, Door, public_name
from searchapp.web.middleware import HEALTH_PATH

log = logging.getLogger(__name__)

MAX_FORM_BYTES = 4096
MAX_WAITING_CHECKS = 8  # password checks queued behind the limiter before "busy"
NO_STORE = {"cache-control": "no-store"}
NO_PASSWORD = ("This server takes API keys only: no password is set, so the pages stay closed. "
               "Set SEARCHAPP_PASSWORD (or SEARCHAPP_PASSWORD_HASH) to open them.")


def door_routes(door: Door) -> list[Route]:
    """The routes to hand to ``st.App(routes=...)`` for ``door``."""

    async def login_form(request: Request) -> Response:
        if not door.enabled:
            return RedirectResponse("/", 303)
        next_path = safe_next(request.query_params.get("next"))
        if door.cookie_reader(request.scope) is not None:
            return RedirectResponse(next_path, 303, headers=NO_STORE)
        note = "You are logged out." if "logged_out" in request.query_params else None
        if not door.has_password:
            note = NO_PASSWORD
        return page(200, next_path=next_path, note=note)

    async def login(request: Request) -> Response:
        if not door.enabled:
            return RedirectResponse("/", 303)
        if not door.has_password:
            return page(403, message=NO_PASSWORD)
        if not same_site(request):
            log.warning("refused a login form sent from another site (%s)", client_of(request))
            return PlainTextResponse("Log in from this site's own login page.\n", 403,
                                     headers=NO_STORE)
        client = client_of(request)
        if not door.throttle.begin(client):
            return throttled(door.throttle.wait(client))
        try:
            form = await read_form(request)
            if form is None:
                door.throttle.abandoned(client)
                return PlainTextResponse("The login form is too large.\n", 413, headers=NO_STORE)
            next_path = safe_next(form.get("next"))
            if door.hash_limiter.statistics().tasks_waiting >= MAX_WAITING_CHECKS:
                door.throttle.abandoned(client)
                return throttled(1.0, "The server is busy checking passwords.")
            right = await anyio.to_thread.run_sync(door.check_password,
                                                    form.get("password", ""),
                                                    limiter=door.hash_limiter)
        except BaseException:
            door.throttle.abandoned(client)
            raise
        if not right:
            door.throttle.failed(client)
            wait = door.throttle.wait(client)
            log.warning("wrong password from %s", client)
            message = "Wrong password. Try again."
            headers = {}
            if wait > 0:
                message += f" Wait {math.ceil(wait)} s before the next try."
                headers["retry-after"] = str(math.ceil(wait))
            return page(401, message=message, next_path=next_path, headers=headers)
        door.throttle.succeeded(client)
        session = door.sessions.create()
        log.info("login from %s (session %s)", client, public_name(session))
        response = RedirectResponse(next_path, 303, headers=NO_STORE)
        response.headers.append("set-cookie", door.set_cookie(session, is_https(request)))
        return response

    async def logout(request: Request) -> Response:
        if not door.enabled:
            return RedirectResponse("/", 303)
        principal = door.cookie_reader(request.scope)
        session = principal.session if principal else None
        if request.method == "POST":
            allowed = same_site(request)
        else:
            allowed = session is not None and door.logout_token_ok(
                session, request.query_params.get("t", ""))
        if session is not None and not allowed:
            return RedirectResponse("/", 303, headers=NO_STORE)  # a stale or forged link
        if session is not None:
            door.sessions.end(session.id)
            log.info("logout (session %s)", public_name(session))
        response = RedirectResponse(f"{LOGIN_PATH}?logged_out=1", 303, headers=NO_STORE)
        response.headers.append("set-cookie", cookies.clear_cookie(is_https(request)))
        return response

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    return [
        Route(LOGIN_PATH, login_form, methods=["GET"]),
        Route(LOGIN_PATH, login, methods=["POST"]),
        Route(LOGOUT_PATH, logout, methods=["GET", "POST"]),
        Route(HEALTH_PATH, health, methods=["GET"]),
    ]


def page(status: int, message: str | None = None, next_path: str = "/",
         note: str | None = None, headers: dict[str, str] | None = None) -> HTMLResponse:
    """The login page with its strict Content-Security-Policy, never cached."""
    return HTMLResponse(login_page.render(message, next_path, note), status, headers={
        "content-security-policy": login_page.CONTENT_SECURITY_POLICY, **NO_STORE,
        **(headers or {})})


def throttled(wait: float, reason: str = "Too many wrong passwords.") -> HTMLResponse:
    """429 with Retry-After: the password was not even checked."""
    seconds = max(math.ceil(wait), 1)
    return page(429, message=f"{reason} Try again in {seconds} s.",
                headers={"retry-after": str(seconds)})


def safe_next(path: str | None) -> str:
    """Where to go after logging in: a path on this site, else ``/`` (no open redirect).

    Example:
        >>> [safe_next(p) for p in ("/search?q=1", "//evil.example", "https://x", "/\\\\x", None)]
        ['/search?q=1', '/', '/', '/', '/']
    """
    if not path or not path.startswith("/") or path.startswith(("//", "/\\")):
        return "/"
    if any(ord(c) < 32 for c in path) or urlsplit(path).path in (LOGIN_PATH, LOGOUT_PATH):
        return "/"
    return path


def same_site(request: Request) -> bool:
    """Whether a form POST comes from a page of this site (not forged by another site)."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return False
    host = (request.headers.get("host") or "").lower()
    origin = request.headers.get("origin")
    if origin is not None:
        return origin != "null" and urlsplit(origin).netloc.lower() == host
    referer = request.headers.get("referer")
    if referer is not None:
        return urlsplit(referer).netloc.lower() == host
    return True  # no browser sent this (a browser sends Origin with every POST)


def client_of(request: Request) -> str:
    """The client's address, the key of the throttle: the connection's peer, or the address
    a proxy of SEARCHAPP_TRUSTED_PROXIES forwards (``web/outbound.py``), never a header
    anyone else sends."""
    return request.client.host if request.client else "unknown"


def is_https(request: Request) -> bool:
    """Whether the browser reached us over HTTPS (the cookie then gets ``Secure``)."""
    return request.url.scheme == "https"


async def read_form(request: Request) -> dict[str, str] | None:
    """The fields of a small urlencoded form (first value each); None when too large."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return None
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}
