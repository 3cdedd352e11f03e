"""The interactive API docs (Swagger UI), served from installed files: nothing from a CDN.

FastAPI's default docs page loads Swagger UI from a CDN, which a self-hosted
app behind a firewall cannot reach. Here ``/api/v1/docs`` is FastAPI's page
pointed at ``/api/v1/docs/assets/...``, which this server reads from the
``fastapi-swagger`` package (Swagger UI 5.34.0, MIT; its plug-in code is not
used). ``swagger-ui-bundle`` 1.1.0 was tried first: it ships Swagger UI 4.15.5,
which refuses OpenAPI 3.1 documents (FastAPI writes 3.1.0) with "Unable to
render this definition".

Example:
    >>> sorted(ASSETS)
    ['favicon-32x32.png', 'swagger-ui-bundle.js', 'swagger-ui.css']
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

from searchapp.api.problems import ProblemRoute
from searchapp.errors import NotFoundError

ASSETS = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
          "swagger-ui.css": "text/css; charset=utf-8", "favicon-32x32.png": "image/png"}
router = APIRouter(route_class=ProblemRoute, include_in_schema=False)


def asset(name: str) -> bytes:
    """One of the Swagger UI files, read from the installed package.

    Example:
        >>> asset("swagger-ui.css")[:2] == b".s"                     # doctest: +SKIP
        True
    """
    if name not in ASSETS:
        raise NotFoundError(f"No docs asset named {name!r}.")
    return resources.files("fastapi_swagger").joinpath("resources", name).read_bytes()


@router.get("/docs")
def docs_page(request: Request) -> HTMLResponse:
    base = request.scope.get("root_path", "").rstrip("/")
    return get_swagger_ui_html(
        openapi_url=f"{base}{request.app.openapi_url}", title="searchapp API",
        swagger_js_url=f"{base}/docs/assets/swagger-ui-bundle.js",
        swagger_css_url=f"{base}/docs/assets/swagger-ui.css",
        swagger_favicon_url=f"{base}/docs/assets/favicon-32x32.png",
        swagger_ui_parameters={"persistAuthorization": False})


@router.get("/docs/assets/{name}")
def docs_asset(name: str) -> Response:
    return Response(asset(name), media_type=ASSETS.get(name),
                    headers={"cache-control": "max-age=86400"})
