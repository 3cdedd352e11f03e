"""The webhook: a saved search's new hits POSTed as JSON to the address its owner gave.

``check_url`` accepts http and https addresses with a host only. ``deliver`` sends one
body with a timeout per try (``TIMEOUT`` seconds), up to ``TRIES`` tries with a growing
pause (``BACKOFF``) after a failure that may pass (no answer, a refused connection, a
5xx or 429), and follows a redirect only to the same scheme, host and port: a redirect
elsewhere is refused and said so, never followed (the hits would go to a host the owner
did not name). It runs on the sender's thread (``sender``), never on a job's.

Example:
    >>> check_url("https://hooks.example.org/searchapp")
    'https://hooks.example.org/searchapp'
    >>> same_origin("http://a:80/x", "http://a/y"), same_origin("http://a/x", "https://a/x")
    (True, False)
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from searchapp.errors import WebhookAddressError

TIMEOUT = 5.0  # seconds per try
TRIES = 3
BACKOFF = 1.0  # the pause after the first failed try; doubled after each next one
MAX_URL = 2000
USER_AGENT = "searchapp-saved-search/1"
_PORTS = {"http": 80, "https": 443}


def check_url(url: str) -> str:
    """``url`` stripped, if it is an http(s) address with a host; else WebhookAddressError."""
    url = (url or "").strip()
    if len(url) > MAX_URL:
        raise WebhookAddressError(url[:60] + "...", f"is longer than {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError as exc:
        raise WebhookAddressError(url, f"cannot be read ({exc})") from exc
    if parts.scheme not in _PORTS:
        raise WebhookAddressError(url, "is not an http or https address")
    if not parts.hostname:
        raise WebhookAddressError(url, "names no host")
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise WebhookAddressError(url, "holds spaces or control characters")
    return url


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an address, the default port filled in."""
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or _PORTS.get(parts.scheme, 0)


def same_origin(a: str, b: str) -> bool:
    return origin(a) == origin(b)


class RedirectRefused(urllib.error.URLError):
    """A redirect to another scheme, host or port: not followed."""


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within the first address' origin, re-sending the POST."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not same_origin(req.full_url, newurl):
            raise RedirectRefused(f"redirected ({code}) to another host, {newurl[:200]}; "
                                  "not followed")
        return urllib.request.Request(newurl, data=req.data, method="POST",
                                      headers=dict(req.header_items()))


_OPENER = urllib.request.build_opener(_SameOriginRedirects)


def deliver(url: str, body: dict) -> dict:
    """POST ``body`` as JSON to ``url``; the outcome: ``{"status": 200, "tries": 1}`` or
    ``{"error": "...", "tries": 3}`` (with ``status`` when the target answered)."""
    data = json.dumps(body).encode()
    outcome: dict = {}
    for attempt in range(1, TRIES + 1):
        outcome, again = _try(url, data)
        outcome["tries"] = attempt
        if not again or attempt == TRIES:
            break
        time.sleep(BACKOFF * 2 ** (attempt - 1))
    return outcome


def _try(url: str, data: bytes) -> tuple[dict, bool]:
    """One try: (outcome, whether another may succeed)."""
    request = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": USER_AGENT})
    try:
        with _OPENER.open(request, timeout=TIMEOUT) as answer:
            answer.read(4096)
            return {"status": answer.status}, False
    except RedirectRefused as exc:
        return {"error": str(exc.reason)}, False
    except urllib.error.HTTPError as exc:
        passing = exc.code >= 500 or exc.code == 429
        return {"status": exc.code, "error": f"answered {exc.code} {exc.reason}"}, passing
    except urllib.error.URLError as exc:
        return {"error": f"could not be reached: {exc.reason}"}, True
    except (TimeoutError, OSError) as exc:
        return {"error": f"did not answer in {TIMEOUT:g} s ({type(exc).__name__})"
                if isinstance(exc, TimeoutError) else f"failed: {exc}"}, True
