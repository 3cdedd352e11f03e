"""Which hosts the server answers to, and which pages may change something: the site guard.

Two checks, before the door and before Streamlit or the API read anything:

- **Host.** Every request and websocket must name a host the server answers
  to (``Host``). A server listening on the loopback interface answers to the
  loopback names (``localhost``, ``127.0.0.1``, ``[::1]``) and those of
  ``SEARCHAPP_ALLOWED_HOSTS``; one listening beyond it (which needs a password
  or a key) to any name unless ``SEARCHAPP_ALLOWED_HOSTS`` lists them. Another
  name is refused with 421: that is a DNS-rebinding page (``evil.example``
  resolving to 127.0.0.1), which the browser takes for a site of its own.
- **Origin.** Every request that changes something (any method but GET, HEAD
  and OPTIONS) and every websocket must come from this very origin: scheme,
  host *and port* (a page on another port of the same host is another site,
  though it gets the same cookies). ``Origin`` decides; without it, a
  request's ``Referer``; without either, a request carrying cookies is refused
  (a browser always sends one of them with a form or a fetch that writes) and
  one without cookies (``curl`` with an API key) passes. ``Sec-Fetch-Site``
  other than ``same-origin`` is refused too. A refusal is 403.

The scheme is the connection's, or the ``X-Forwarded-Proto`` of a trusted
proxy (``SEARCHAPP_TRUSTED_PROXIES``; uvicorn applies it before this runs).

Example:
    >>> policy = HostPolicy.for_server((), beyond_loopback=False)
    >>> policy.allows("127.0.0.1:8501"), policy.allows("evil.example:8501")
    (True, False)
    >>> scope = {"type": "http", "method": "POST", "scheme": "http",
    ...          "headers": [(b"host", b"127.0.0.1:8501"), (b"origin", b"http://127.0.0.1:9999")]}
    >>> refusal(scope, policy).status
    403
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from searchapp.web.identity import Scope, header_values, is_api
from searchapp.web.problems import MEDIA_TYPE, problem_bytes

log = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "::1"})
DEFAULT_PORTS = {"http": 80, "https": 443}
POLICY_VIOLATION = 1008
Origin = tuple[str, str, int]  # (scheme, host, port)


@dataclass(frozen=True)
class HostPolicy:
    """The host names a server answers to: the loopback names, ``names``, or any.

    Example:
        >>> HostPolicy.for_server(("search.example.org",), beyond_loopback=True).allows(
        ...     "Search.Example.org")
        True
        >>> HostPolicy.for_server((), beyond_loopback=True).allows("10.0.0.5:8501")
        True
    """

    names: frozenset[str] = frozenset()
    any_host: bool = False

    @classmethod
    def for_server(cls, allowed: tuple[str, ...], beyond_loopback: bool) -> HostPolicy:
        """``allowed`` from SEARCHAPP_ALLOWED_HOSTS; a loopback server without it answers to
        the loopback names only, one beyond loopback (locked by a password or key) to any."""
        return cls(frozenset(allowed), "*" in allowed or (beyond_loopback and not allowed))

    def allows(self, host_header: str | None) -> bool:
        """Whether a ``Host`` header names this server."""
        parsed = split_host(host_header)
        if parsed is None:
            return False
        name = parsed[0]
        return self.any_host or is_loopback_name(name) or name in self.names


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: the status, a problem slug (API) and the message."""

    status: int
    slug: str
    detail: str


def split_host(value: str | None) -> tuple[str, int | None] | None:
    """A ``Host`` header (or an origin's netloc) as (lower-case name, port or None); None when
    it is not one.

    Example:
        >>> split_host("LocalHost:8501"), split_host("[::1]:80"), split_host("a b"), split_host("")
        (('localhost', 8501), ('::1', 80), None, None)
    """
    if not value or any(c in value for c in " /\\@?#\t\r\n") or value != value.strip():
        return None
    try:
        parts = urlsplit(f"//{value}")
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name:
        return None
    return name.rstrip("."), port


def is_loopback_name(name: str) -> bool:
    """Whether a host name is this machine's loopback: ``localhost``, 127.0.0.0/8, ``::1``.

    Example:
        >>> [is_loopback_name(n) for n in ("localhost", "127.8.0.1", "::1", "127.0.0.1.evil.io")]
        [True, True, True, False]
    """
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def own_origin(scope: Scope) -> Origin | None:
    """This request's own origin: its scheme and the host and port it names.

    Example:
        >>> own_origin({"scheme": "wss", "headers": [(b"host", b"search.example.org")]})
        ('https', 'search.example.org', 443)
    """
    scheme = {"ws": "http", "wss": "https"}.get(scope.get("scheme", "http"),
                                                scope.get("scheme", "http"))
    hosts = header_values(scope, b"host")
    parsed = split_host(hosts[0]) if len(hosts) == 1 else None
    if parsed is None or scheme not in DEFAULT_PORTS:
        return None
    name, port = parsed
    return scheme, name, port or DEFAULT_PORTS[scheme]


def origin_of(url: str) -> Origin | None:
    """The origin (scheme, host, port) of an ``Origin`` or ``Referer`` value; None if none.

    Example:
        >>> origin_of("http://127.0.0.1:8501/search?q=1"), origin_of("null")
        (('http', '127.0.0.1', 8501), None)
    """
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        parsed = split_host(parts.netloc)
    except ValueError:
        return None
    if parsed is None or scheme not in DEFAULT_PORTS:
        return None
    return scheme, parsed[0], parsed[1] or DEFAULT_PORTS[scheme]


def changes_something(scope: Scope) -> bool:
    """Whether a request may change something: a websocket or a method other than GET/HEAD.

    Example:
        >>> changes_something({"type": "http", "method": "DELETE"})
        True
        >>> changes_something({"type": "http", "method": "GET"})
        False
    """
    return scope["type"] == "websocket" or scope.get("method", "GET") not in SAFE_METHODS


def refusal(scope: Scope, hosts: HostPolicy) -> Refusal | None:
    """Why this request must be refused (a foreign host or origin), or None to let it pass."""
    host = header_values(scope, b"host")
    if len(host) != 1 or not hosts.allows(host[0]):
        named = host[0] if host else "none"
        return Refusal(421, "unknown-host",
                       f"This server does not answer to the host {named[:100]!r}. Open it as "
                       "http://127.0.0.1:PORT (or localhost), or add the name to "
                       "SEARCHAPP_ALLOWED_HOSTS.")
    if not changes_something(scope):
        return None
    return cross_site(scope)


def cross_site(scope: Scope) -> Refusal | None:
    """A refusal for a write or websocket not sent from this origin (see the module)."""
    fetch_site = header_values(scope, b"sec-fetch-site")
    if fetch_site and fetch_site[0] not in ("same-origin", "none"):
        return _foreign(f"Sec-Fetch-Site: {fetch_site[0]}")
    own = own_origin(scope)
    origins = header_values(scope, b"origin")
    if origins:
        if own is None or origin_of(origins[0]) != own:
            return _foreign(f"Origin: {origins[0][:100]}")
        return None
    if scope["type"] == "websocket":
        return None  # a browser always sends Origin with a websocket: this is not one
    referers = header_values(scope, b"referer")
    if referers:
        if own is None or origin_of(referers[0]) != own:
            return _foreign("Referer from another site")
        return None
    if header_values(scope, b"cookie"):
        return _foreign("cookies without Origin or Referer")
    return None  # no browser sent this (curl, a script with an API key)


def _foreign(what: str) -> Refusal:
    return Refusal(403, "cross-site",
                   f"Refused a request that changes something from another site ({what}): "
                   "only this app's own pages (same scheme, host and port) may send it.")


class SiteGuard:
    """ASGI middleware: answers ``refusal`` before anything else sees the request.

    Example (``serve.py``):
        >>> Middleware(SiteGuard, hosts=HostPolicy.for_server((), False))  # doctest: +SKIP
    """

    def __init__(self, app: Any, hosts: HostPolicy) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            refused = refusal(scope, self.hosts)
            if refused is not None:
                log.warning("refused %s %s: %s", scope.get("method", "websocket"),
                            scope.get("path"), refused.detail)
                await answer(scope, receive, send, refused)
                return
            if scope["type"] == "websocket":
                scope = with_own_origin(scope)
        await self.app(scope, receive, send)


def with_own_origin(scope: Scope) -> Scope:
    """A checked websocket's scope with ``Origin`` spelled as its ``Host`` (same origin, which
    the guard just checked), so Streamlit's own check never needs to look an address up.

    Example:
        >>> with_own_origin({"scheme": "ws", "headers": [(b"host", b"LOCALHOST:1"),
        ...                  (b"origin", b"http://localhost:1")]})["headers"][1]
        (b'origin', b'http://LOCALHOST:1')
    """
    if not header_values(scope, b"origin"):
        return scope
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    host = header_values(scope, b"host")[0]
    headers = [(k, f"{scheme}://{host}".encode("latin-1") if k == b"origin" else v)
               for k, v in scope["headers"]]
    return {**scope, "headers": headers}


async def answer(scope: Scope, receive: Any, send: Any, refused: Refusal) -> None:
    """Send a refusal: a problem for the API, plain text elsewhere, a refused websocket."""
    if scope["type"] == "websocket":
        message = await receive()
        if message["type"] == "websocket.connect":
            await send({"type": "websocket.close", "code": POLICY_VIOLATION})
        return
    if is_api(scope):
        body, media = problem_bytes(refused.status, refused.slug, refused.detail), MEDIA_TYPE
    else:
        body, media = f"{refused.detail}\n".encode(), "text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": refused.status, "headers": [
        (b"content-type", media.encode()), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
