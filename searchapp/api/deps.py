"""What every endpoint needs: the process' App, who is asking, and the write check.

The door (``searchapp.web.middleware``) decides who a request is before the API
sees it and leaves the Principal in the ASGI scope: a login, an API key, or the
local user of an open server. A request that arrives without one did not come
through the door and is refused. Read-only keys may read and search; an
endpoint that changes something depends on ``writer``.

Example:
    >>> Services(app=lambda: None, start_worker=lambda app: 0).app() is None
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPBearer

from searchapp.context import App
from searchapp.errors import PermissionDeniedError
from searchapp.web.identity import PRINCIPAL_KEY, Principal

# For the OpenAPI document (the "Authorize" button, schemathesis' auth); the door checks.
bearer = HTTPBearer(auto_error=False, scheme_name="apiKey",
                    description="An API key from `searchapp keys create --name NAME`.")


@dataclass(frozen=True)
class Services:
    """The App of the process and the way to make sure a worker runs queued jobs."""

    app: Callable[[], App]
    start_worker: Callable[[App], object]


class NotThroughTheDoor(PermissionDeniedError):
    """A request reached the API without passing the door (a wiring mistake): refused."""


def services(request: Request) -> Services:
    return request.app.state.services


def get_app(request: Request) -> App:
    """The process' one App (shared with the pages)."""
    return services(request).app()


def principal(request: Request,
              _token: Annotated[object, Depends(bearer)] = None) -> Principal:
    """Who is asking, as the door decided."""
    found = request.scope.get(PRINCIPAL_KEY)
    if not isinstance(found, Principal):
        raise NotThroughTheDoor("This request did not come through the server's door.")
    return found


def writer(who: Annotated[Principal, Depends(principal)]) -> Principal:
    """Refuses read-only keys: the endpoint changes something."""
    if who.read_only:
        raise PermissionDeniedError(f"This API key ({who.name.removeprefix('key ')}) is "
                                    "read-only: it may read and search, not change anything. "
                                    "Use a read-write key (searchapp keys create --name NAME).")
    return who


AppDep = Annotated[App, Depends(get_app)]


def queued(request: Request, app: App, job_id: int | None) -> None:
    """With a job queued: make sure a worker runs it (as the pages do on every view)."""
    if job_id is not None:
        services(request).start_worker(app)
