"""Who a request is: one function, ``identify``, asks each credential reader in turn.

A reader looks at an ASGI scope (headers, path) and returns a ``Principal``
or None. There are two readers: the login cookie (``Door.cookie_reader``) and
the JSON API's keys (``Door.key_reader``), which reads ``Authorization: Bearer
KEY`` and returns a Principal whose ``paths`` is ``("/api/v1/",)``: a key opens
the API and nothing else, while a login cookie opens the pages and the API.

Example:
    >>> browser = Principal(kind="browser", name="session 1a2b")
    >>> identify({"path": "/"}, [lambda scope: None, lambda scope: browser]) is browser
    True
    >>> browser.allows("/media/x.csv"), Principal("api-key", "k", paths=("/api/v1/",)).allows("/")
    (True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from searchapp.web.sessions import BrowserSession

Scope = dict[str, Any]
API_PREFIX = "/api/v1/"  # the JSON API (searchapp.api), mounted on the same server
PRINCIPAL_KEY = "searchapp.principal"  # where the door leaves who is asking, for the API
CredentialReader = Callable[[Scope], "Principal | None"]


@dataclass(frozen=True)
class Principal:
    """Someone the door let in: the kind of credential, a name for logs, what it may reach.

    ``session`` is the login behind a browser cookie (None for other kinds);
    ``paths`` are the path prefixes this credential opens; ``read_only`` credentials
    (a read-only API key) may search and read but change nothing; ``key_id`` is an API
    key's id (its own search history is kept under it).
    """

    kind: str
    name: str
    session: BrowserSession | None = None
    paths: tuple[str, ...] = ("/",)
    read_only: bool = False
    key_id: int | None = None

    def allows(self, path: str) -> bool:
        """Whether this credential opens ``path``.

        Example:
            >>> Principal("browser", "s").allows("/_stcore/stream")
            True
        """
        return any(path.startswith(prefix) for prefix in self.paths)


def identify(scope: Scope, readers: Iterable[CredentialReader]) -> Principal | None:
    """The first Principal a reader finds in the request, or None (nobody: refuse).

    Example:
        >>> identify({"path": "/"}, []) is None
        True
    """
    for read in readers:
        principal = read(scope)
        if principal is not None:
            return principal
    return None


def header_values(scope: Scope, name: bytes) -> list[str]:
    """Every value of header ``name`` (lower case) in an ASGI scope, decoded as latin-1.

    Example:
        >>> header_values({"headers": [(b"cookie", b"a=1"), (b"host", b"x")]}, b"cookie")
        ['a=1']
    """
    return [value.decode("latin-1") for key, value in scope.get("headers", ()) if key == name]


def bearer_token(scope: Scope) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, or None when there is none.

    Example:
        >>> bearer_token({"headers": [(b"authorization", b"Bearer sa_abc")]})
        'sa_abc'
        >>> bearer_token({"headers": [(b"authorization", b"Basic eDp5")]}) is None
        True
    """
    for value in header_values(scope, b"authorization"):
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return None


def is_api(scope: Scope) -> bool:
    """Whether a request is for the JSON API.

    Example:
        >>> is_api({"path": "/api/v1/corpora"}), is_api({"path": "/search"})
        (True, False)
    """
    return scope.get("path", "").startswith(API_PREFIX)


def from_a_browser_here(scope: Scope) -> bool:
    """Whether a browser says the request comes from this server's own pages (or from the
    address bar): ``Sec-Fetch-Site`` is ``same-origin`` or ``none``. Another site's page
    sends ``cross-site`` or ``same-site``; programs (curl, scripts) send no such header.

    Example:
        >>> from_a_browser_here({"headers": [(b"sec-fetch-site", b"same-origin")]})
        True
        >>> from_a_browser_here({"headers": [(b"sec-fetch-site", b"cross-site")]})
        False
        >>> from_a_browser_here({"headers": []})
        False
    """
    return header_values(scope, b"sec-fetch-site")[:1] in (["same-origin"], ["none"])


# Who uses the API of an open server (no password, no key, loopback only): everyone local.
LOCAL = Principal("local", "local user (open server)")
