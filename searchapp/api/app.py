"""The FastAPI application of the JSON API, as ``serve.py`` mounts it at ``/api/v1``.

``build_api()`` takes where the App comes from and how a worker is started
(the process-wide ones by default: ``searchapp.web.shared``), so the pages and
the API share one App (one copy of each model and index in memory) and the
tests can watch worker starts. The OpenAPI document is at
``/api/v1/openapi.json``, the docs at ``/api/v1/docs`` (``docs``).

Example:
    >>> api = build_api()
    >>> api.openapi()["info"]["title"], api.openapi_url
    ('searchapp', '/openapi.json')
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from searchapp import __version__
from searchapp.api import (
    corpora,
    docs,
    files,
    folders,
    jobs,
    judgements,
    saved,
    search,
    suggestions,
)
from searchapp.api.deps import Services
from searchapp.api.problems import HANDLERS
from searchapp.api.schemas import Problem
from searchapp.context import App
from searchapp.web import shared
from searchapp.web.problems import MEDIA_TYPE

MOUNT = "/api/v1"
DESCRIPTION = """The searchapp JSON API: corpora, documents by id, search, duplicate checks,
jobs, models and backups. Send `Authorization: Bearer KEY` with a key from
`searchapp keys create --name NAME` (read-only keys may read and search). Errors are
RFC 9457 problems (`application/problem+json`) with the CLI's one-line message."""
# Every operation may answer these; each is a problem document.
PROBLEMS = {
    "4XX": {"model": Problem, "description": "a problem with the request (RFC 9457)",
            "content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}},
    503: {"model": Problem, "description": "the database is busy; retry after Retry-After",
          "content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}},
}


class ApiDispatch:
    """ASGI middleware (after the door) that hands every ``/api/v1/...`` request to the API.

    Not a Starlette ``Mount``: a mount's pattern does not match a path with a newline
    in it (``%0A``, which a client may send in a document id), and such a request would
    fall through to Streamlit's plain-text 404 instead of the API's problem document.

    Example:
        >>> Middleware(ApiDispatch, api=build_api())            # doctest: +SKIP
    """

    def __init__(self, app, api: FastAPI, prefix: str = MOUNT) -> None:
        self.app, self.api, self.prefix = app, api, prefix

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "") if scope["type"] in ("http", "websocket") else ""
        if path == self.prefix or path.startswith(self.prefix + "/"):
            root = scope.get("root_path", "")
            await self.api({**scope, "root_path": root + self.prefix}, receive, send)
            return
        await self.app(scope, receive, send)


def build_api(app: Callable[[], App] = shared.app,
              start_worker: Callable[[App], object] = shared.ensure_background_worker
              ) -> FastAPI:
    """The API application (mount it behind the door: it trusts the door's Principal)."""
    api = FastAPI(title="searchapp", version=__version__, description=DESCRIPTION,
                  openapi_url="/openapi.json", docs_url=None, redoc_url=None,
                  responses=PROBLEMS, exception_handlers=HANDLERS)
    api.state.services = Services(app, start_worker)
    for module in (corpora, files, folders, search, suggestions, saved, jobs, judgements,
                   docs):
        api.include_router(module.router)
    return api
