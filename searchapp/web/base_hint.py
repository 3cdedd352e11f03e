"""Tell Streamlit's front end where its server is, so that it stops asking the page's own path.

On a page such as ``/search``, Streamlit's front end does not know whether ``/search`` is a
page or the prefix the app is served under. It tries the page's path as the base first:
``/search/_stcore/health`` and ``/search/_stcore/host-config``. Both answer 404 (two errors
in the browser's console on every page load), and only then does it try the root.

The front end reads ``window.__streamlit.BACKEND_BASE_URL`` before it connects, so
``BaseHint`` adds one script to the head of Streamlit's own HTML that names the base: the
page's origin plus Streamlit's ``server.baseUrlPath``. A page load (a navigation) is asked
for without compression, so that its HTML can be read (Streamlit gzips it otherwise; it is
about 6 KB). Other HTML (the door's login page, whose policy allows no script), compressed
bodies and every other request pass unchanged.

Example:
    >>> hint_script("")
    b'<script>window.__streamlit={BACKEND_BASE_URL:location.origin+"/"}</script>'
    >>> page = b"<html><head><script>window.prerenderReady = false</script>"
    >>> add_hint(page, "app") == page.replace(b"<head>", b"<head>" + hint_script("app"))
    True
"""

from __future__ import annotations

import json
from typing import Any

from searchapp.web.middleware import is_navigation

STREAMLIT_MARK = b"window.prerenderReady"  # in Streamlit's index.html, in no page of ours
HEAD = b"<head>"


def hint_script(base_path: str) -> bytes:
    """The script that names the server's base: the origin, then ``/base_path/``."""
    path = "/" + "/".join(part for part in base_path.split("/") if part)
    path = path if path.endswith("/") else path + "/"
    return (f"<script>window.__streamlit={{BACKEND_BASE_URL:location.origin+"
            f"{json.dumps(path)}}}</script>").encode()


def add_hint(html: bytes, base_path: str) -> bytes:
    """``html`` with the script right after ``<head>``; unchanged unless it is Streamlit's
    page (it holds ``STREAMLIT_MARK``) and has a ``<head>``."""
    at = html.find(HEAD)
    if STREAMLIT_MARK not in html or at < 0:
        return html
    at += len(HEAD)
    return html[:at] + hint_script(base_path) + html[at:]


class BaseHint:
    """ASGI middleware: Streamlit's HTML pages get the base hint (``add_hint``).

    Only GET responses of type text/html without a content encoding are read whole
    (Streamlit's page is about 6 KB); every other response streams through untouched.
    """

    def __init__(self, app: Any, base_path: str = "") -> None:
        self.app = app
        self.base_path = base_path

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET" or not is_navigation(scope):
            await self.app(scope, receive, send)
            return
        scope = {**scope, "headers": [(k, v) for k, v in scope.get("headers", [])
                                      if k.lower() != b"accept-encoding"]}
        start: dict | None = None
        chunks: list[bytes] = []

        async def hinted(message: dict) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and _plain_html(message):
                start = message  # held until the whole body is here
            elif message["type"] == "http.response.body" and start is not None:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    body = add_hint(b"".join(chunks), self.base_path)
                    headers = [(k, v) for k, v in start.get("headers", [])
                               if k.lower() != b"content-length"]
                    headers.append((b"content-length", str(len(body)).encode()))
                    await send({**start, "headers": headers})
                    await send({"type": "http.response.body", "body": body})
            else:
                await send(message)

        await self.app(scope, receive, hinted)


def _plain_html(start: dict) -> bool:
    """A response start of HTML that is not compressed (and has a body: not a 304)."""
    headers = {k.lower(): v for k, v in start.get("headers", [])}
    return (start.get("status") == 200
            and headers.get(b"content-type", b"").startswith(b"text/html")
            and not headers.get(b"content-encoding"))
