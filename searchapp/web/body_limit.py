"""A limit on every request body, enforced while it streams in: 413 naming the limit.

``Content-Length`` is checked first: a body announced larger than the limit
is refused before a byte of it is read. A body without one (chunked) is
counted as it arrives, and refused the moment it passes the limit: the
handler behind sees the client disconnect, and nothing it answers after
that is sent. Either way the server never holds more than one chunk (64 KiB
at a time from uvicorn) of a body it refuses.

The limit is SEARCHAPP_MAX_REQUEST_BYTES (64 MiB unless set) for every route;
Streamlit's uploads (``/_stcore/upload_file/``) and the API's documents
(``/api/v1/corpora/{name}/files``) get Streamlit's own
``server.maxUploadSize`` plus room for the multipart wrapping when that is
larger, so a file up to the upload limit still goes through.

Example:
    >>> limits = BodyLimits(default=1 << 20, uploads=200 << 20)
    >>> limits.for_path("/api/v1/corpora"), limits.for_path("/_stcore/upload_file/s/f")
    (1048576, 209715200)
    >>> too_large(limits.for_path("/api/v1/corpora"), 200 << 20)
    'This request has 200 MiB; the limit is 1 MiB (SEARCHAPP_MAX_REQUEST_BYTES).'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from searchapp.web.identity import Scope, header_values
from searchapp.web.sites import Refusal, answer

UPLOAD_PREFIX = "/_stcore/upload_file/"
API_CORPORA, FILES_SUFFIX = "/api/v1/corpora/", "/files"  # POST documents and archives
MULTIPART_ROOM = 1 << 20  # the multipart headers around an uploaded file


@dataclass(frozen=True)
class BodyLimits:
    """The largest body, in bytes, for uploads through the pages and for everything else."""

    default: int
    uploads: int

    @classmethod
    def for_server(cls, max_request_bytes: int, max_upload_mb: int) -> BodyLimits:
        """From SEARCHAPP_MAX_REQUEST_BYTES and Streamlit's ``server.maxUploadSize`` (MB)."""
        return cls(max_request_bytes, max(max_request_bytes,
                                          max_upload_mb * (1 << 20) + MULTIPART_ROOM))

    def for_path(self, path: str) -> int:
        """Uploads through the pages or the API's files route take the uploads' limit.

        Example:
            >>> BodyLimits(1, 2).for_path("/api/v1/corpora/docs/files")
            2
        """
        uploads = path.startswith(UPLOAD_PREFIX) or (
            path.startswith(API_CORPORA) and path.endswith(FILES_SUFFIX))
        return self.uploads if uploads else self.default


def mib(n: int) -> str:
    """Bytes in MiB for a message.

    Example:
        >>> mib(64 << 20), mib(1536 << 10)
        ('64 MiB', '1.5 MiB')
    """
    value = n / (1 << 20)
    return f"{value:.0f} MiB" if value.is_integer() else f"{value:.1f} MiB"


def too_large(limit: int, size: int | None = None) -> str:
    """The message of a 413: the size when known and the limit, with the setting's name."""
    sent = f"has {mib(size)}" if size is not None else "is larger than the limit"
    return f"This request {sent}; the limit is {mib(limit)} (SEARCHAPP_MAX_REQUEST_BYTES)."


class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: refuses a body over its route's limit (see the module)."""

    def __init__(self, app: Any, limits: BodyLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.for_path(scope.get("path", ""))
        declared = header_values(scope, b"content-length")
        if declared:
            try:
                size = int(declared[0])
            except ValueError:
                size = -1
            if size < 0 or len(declared) > 1:
                await answer(scope, receive, send, Refusal(400, "bad-request",
                                                           "Content-Length is not a size."))
                return
            if size > limit:
                await answer(scope, receive, send,
                             Refusal(413, "request-too-large", too_large(limit, size)))
                return
        state = {"received": 0, "refused": False, "started": False}

        async def counted_receive() -> dict:
            if state["refused"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    state["refused"] = True
                    if not state["started"]:
                        state["started"] = True
                        await answer(scope, receive, send,
                                     Refusal(413, "request-too-large", too_large(limit)))
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict) -> None:
            if state["refused"]:
                return  # the 413 went out; the handler's answer to a "disconnect" does not
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not state["refused"]:
                raise
