"""Errors as RFC 9457 problems: one table from ``SearchAppError`` classes to HTTP statuses.

A user's mistake is a 4xx with the same one-line message the CLI prints after
``error:``; a request the schema refuses is a 422 problem listing each wrong
field; an unexpected error is a 500 problem naming a reference whose traceback
is in ``DATA_DIR/app.log`` (never the traceback itself). The property tests
(``tests/test_api_fuzz.py``) require that none of those happens.

Example:
    >>> from searchapp.errors import CorpusNotFoundError
    >>> status_of(CorpusNotFoundError("faq", ["docs"]))
    (404, 'not-found')
"""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from searchapp.errors import (
    AlreadyExistsError,
    BackupError,
    ConfigError,
    ConflictError,
    CorpusChangedError,
    CorpusDeletedError,
    DatabaseBusyError,
    DiskFullError,
    EmptyCorpusError,
    IndexCorruptError,
    IngestError,
    InvalidParameterError,
    JobError,
    JudgementError,
    ModelError,
    NoRerankerError,
    NotFoundError,
    PermissionDeniedError,
    SearchAppError,
    StorageError,
)
from searchapp.reporting import log_exception
from searchapp.web.applog import install_app_log
from searchapp.web.problems import MEDIA_TYPE, problem

log = logging.getLogger("searchapp.api.errors")

# First match wins: a subclass comes before its bases.
STATUSES: list[tuple[type[SearchAppError], int, str]] = [
    (NotFoundError, 404, "not-found"),
    (PermissionDeniedError, 403, "read-only-key"),
    (AlreadyExistsError, 409, "conflict"),
    (ConflictError, 409, "conflict"),
    (EmptyCorpusError, 409, "not-embedded-yet"),
    (CorpusChangedError, 409, "corpus-changed"),
    (CorpusDeletedError, 409, "corpus-deleted"),
    (JobError, 409, "job-conflict"),
    (NoRerankerError, 409, "no-reranker"),
    (DatabaseBusyError, 503, "database-busy"),
    (IndexCorruptError, 503, "index-unavailable"),
    (DiskFullError, 507, "disk-full"),
    (StorageError, 503, "storage-unavailable"),
    (InvalidParameterError, 422, "invalid-parameter"),
    (IngestError, 422, "invalid-input"),
    (JudgementError, 422, "invalid-judgement"),
    (ModelError, 422, "model"),
    (BackupError, 422, "backup"),
    (ConfigError, 503, "misconfigured"),
    (SearchAppError, 400, "bad-request"),
]
RETRY_AFTER_BUSY = "5"


def status_of(exc: SearchAppError) -> tuple[int, str]:
    """(HTTP status, problem slug) of a core error.

    Example:
        >>> status_of(InvalidParameterError("k must be ..."))
        (422, 'invalid-parameter')
    """
    for cls, status, slug in STATUSES:
        if isinstance(exc, cls):
            return status, slug
    return 400, "bad-request"


def problem_response(status: int, slug: str, detail: str, headers: dict | None = None,
                     **extra) -> JSONResponse:
    """A problem as a response (``application/problem+json``)."""
    return JSONResponse(problem(status, slug, detail, **extra), status_code=status,
                        media_type=MEDIA_TYPE, headers=headers)


async def on_search_app_error(_request: Request, exc: SearchAppError) -> JSONResponse:
    status, slug = status_of(exc)
    headers = {"retry-after": RETRY_AFTER_BUSY} if status == 503 else None
    return problem_response(status, slug, str(exc), headers)


def _field(loc) -> str:
    parts = [str(p) for p in loc if p not in ("body",)] or ["body"]
    return ".".join(parts)


async def on_validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with the first wrong field in ``detail`` and all of them in ``errors``."""
    errors = [{"field": _field(e.get("loc", ())), "message": str(e.get("msg", ""))}
              for e in exc.errors()]
    first = errors[0] if errors else {"field": "body", "message": "invalid"}
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return problem_response(422, "invalid-request",
                            f"{first['field']}: {first['message']}{more}.", errors=errors)


async def on_http_error(_request: Request, exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (no such route, method not allowed) as problems."""
    slugs = {404: "not-found", 405: "method-not-allowed"}
    detail = exc.detail if isinstance(exc.detail, str) else "Request refused."
    if exc.status_code == 404 and detail == "Not Found":
        detail = "No such resource in the API; /api/v1/docs lists them."
    return problem_response(exc.status_code, slugs.get(exc.status_code, "http-error"), detail,
                            dict(exc.headers or {}))


async def on_unexpected(_request: Request, exc: Exception) -> JSONResponse:
    """A bug: its traceback to the app log under a reference, one line to the client."""
    reference, path = log_exception(exc, install_app_log(), "api")
    return problem_response(500, "internal-error",
                            f"Something went wrong (reference {reference}); the details are in "
                            f"{path.name} in the data folder.")


HANDLERS = {
    SearchAppError: on_search_app_error,
    RequestValidationError: on_validation_error,
    HTTPException: on_http_error,
}


class ProblemRoute(APIRoute):
    """A route whose unexpected errors become a 500 problem here, inside the API: a handler
    for ``Exception`` on the FastAPI app would run in Starlette's outermost error layer,
    which re-raises into the Streamlit server around it."""

    def get_route_handler(self):
        original = super().get_route_handler()

        async def handler(request: Request) -> Response:
            try:
                return await original(request)
            except (SearchAppError, RequestValidationError, HTTPException):
                raise
            except Exception as exc:
                return await on_unexpected(request, exc)

        return handler
