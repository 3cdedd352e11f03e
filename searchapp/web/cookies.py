"""The login cookie: a session id and its absolute expiry, signed with the process' secret.

Value: ``SID.EXPIRES.MAC`` where SID is 32 random bytes (base64url), EXPIRES the
Unix time after which the cookie is void, and MAC the HMAC-SHA256 of
``SID.EXPIRES`` under a secret drawn at start and kept in memory only (never
in the environment or on disk; a restart voids every cookie, as it empties
the session registry). A forged or edited cookie fails the MAC before any
lookup; a valid one still has to name a live session in the registry
(``searchapp.web.sessions``), so logging out voids it at once.

The cookie is ``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no
request started by another site carries it: a cross-site form, link, image or
websocket arrives without it), ``Path=/`` and ``Secure`` when the request
came over HTTPS.

Example:
    >>> secret = bytes(32)
    >>> value = sign(secret, "abc", expires=2_000_000_000)
    >>> verify(secret, value, now=1_900_000_000)
    'abc'
    >>> verify(secret, value, now=2_000_000_001) is None        # expired
    True
    >>> verify(secret, value.replace("abc", "abd"), now=0) is None  # edited
    True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable

COOKIE_NAME = "searchapp_session"
SECRET_BYTES = 32


def new_secret() -> bytes:
    """A fresh signing secret for this process.

    Example:
        >>> len(new_secret())
        32
    """
    return secrets.token_bytes(SECRET_BYTES)


def new_session_id() -> str:
    """32 random bytes as base64url (43 characters, no padding).

    Example:
        >>> len(new_session_id())
        43
    """
    return secrets.token_urlsafe(32)


def mac(secret: bytes, message: str) -> str:
    """HMAC-SHA256 of ``message`` under ``secret``, base64url without padding.

    Example:
        >>> mac(bytes(32), "x")
        'TLyWCZpkZ84AJGHxBUm0iYJl6-YYi0XvrMRCk1FuYsQ'
    """
    digest = hmac.new(secret, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def sign(secret: bytes, session_id: str, expires: int) -> str:
    """The cookie value for ``session_id``, void after ``expires`` (Unix seconds).

    Example:
        >>> sign(bytes(32), "abc", 5).startswith("abc.5.")
        True
    """
    payload = f"{session_id}.{int(expires)}"
    return f"{payload}.{mac(secret, payload)}"


def verify(secret: bytes, value: str, now: float) -> str | None:
    """The session id in ``value`` if its MAC is right and it has not expired, else None.

    The MAC is compared in constant time.

    Example:
        >>> verify(bytes(32), "not.a.cookie", now=0) is None
        True
    """
    session_id, _, rest = value.partition(".")
    expires, _, signature = rest.partition(".")
    if not (session_id and expires.isdigit() and signature):
        return None
    expected = mac(secret, f"{session_id}.{expires}")
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        return None
    return session_id if now < int(expires) else None


def values_in(cookie_headers: Iterable[str], name: str = COOKIE_NAME) -> list[str]:
    """Every value of cookie ``name`` in raw ``Cookie`` header values, in order.

    A small parser of its own: ``http.cookies`` gives up on a whole header when
    another site's cookie on the same host has characters it dislikes. Several
    values can come back (another path, a cookie planted by a sibling host):
    the caller tries each.

    Example:
        >>> values_in(["a=1; searchapp_session=x.1.y", "searchapp_session=z"])
        ['x.1.y', 'z']
    """
    found = []
    for header in cookie_headers:
        for part in header.split(";"):
            key, sep, value = part.strip().partition("=")
            if sep and key == name:
                found.append(value.strip().strip('"'))
    return found


def set_cookie(value: str, max_age: int, secure: bool) -> str:
    """A ``Set-Cookie`` header value that stores the login cookie.

    Example:
        >>> set_cookie("v", 60, secure=False)
        'searchapp_session=v; Max-Age=60; Path=/; HttpOnly; SameSite=Strict'
    """
    flags = "; Secure" if secure else ""
    return f"{COOKIE_NAME}={value}; Max-Age={int(max_age)}; Path=/; HttpOnly; SameSite=Strict" \
           f"{flags}"


def clear_cookie(secure: bool) -> str:
    """A ``Set-Cookie`` header value that makes the browser drop the login cookie.

    Example:
        >>> clear_cookie(secure=True).startswith("searchapp_session=; Max-Age=0")
        True
    """
    return set_cookie("", 0, secure)
