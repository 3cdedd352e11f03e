"""The saved searches' Atom feeds: ``GET /feeds/saved/<token>.atom``, answered before the
login door (a feed reader sends no login; the token in the address is the credential,
compared in constant time by ``saved.feed``). A wrong or malformed token is a plain 404,
the same as any unknown page, and a feed is never cached by a shared cache.

Example (``serve.py``):
    >>> st.App("app.py", routes=feed_routes() + ...)            # doctest: +SKIP
"""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

FEEDS_PATH = "/feeds/saved/"
MEDIA_TYPE = "application/atom+xml; charset=utf-8"


def is_feed(scope: dict) -> bool:
    """Whether a request is a GET or HEAD of a saved search's feed (public: the door lets
    it through to ``feed_routes``, which checks the token).

    Example:
        >>> is_feed({"type": "http", "method": "GET", "path": "/feeds/saved/abc.atom"})
        True
        >>> is_feed({"type": "http", "method": "POST", "path": "/feeds/saved/abc.atom"})
        False
    """
    path = scope.get("path", "")
    return (scope["type"] == "http" and scope.get("method") in ("GET", "HEAD")
            and path.startswith(FEEDS_PATH) and path.endswith(".atom")
            and "/" not in path[len(FEEDS_PATH):])


def feed_routes() -> list[Route]:
    """The feed's route."""
    from searchapp.saved.feed import feed_for_token
    from searchapp.web import shared

    async def feed(request: Request) -> Response:
        token = request.path_params["token"]
        base = str(request.base_url).rstrip("/")
        body = await anyio.to_thread.run_sync(feed_for_token, shared.app(), token, base)
        if body is None:
            return PlainTextResponse("Not Found", 404)
        return Response(body, media_type=MEDIA_TYPE,
                        headers={"Cache-Control": "private, no-store",
                                 "Referrer-Policy": "no-referrer"})

    return [Route(FEEDS_PATH + "{token}.atom", feed, methods=["GET"])]
