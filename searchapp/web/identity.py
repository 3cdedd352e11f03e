"""Who a request is: one function, ``identify``, asks each credential reader in turn.

A reader looks at an ASGI scope (headers, path) and returns a ``Principal``
or None. Today there is one reader, the login cookie (``Door.cookie_reader``).
A second credential kind is one more reader: issue 24's API keys will read
``Authorization: Bearer KEY`` and return a Principal whose ``paths`` is
``("/api/v1/",)``, so a key opens the API and nothing else, while the
middleware, its refusals and its tests stay as they are.

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
CredentialReader = Callable[[Scope], "Principal | None"]


@dataclass(frozen=True)
class Principal:
    """Someone the door let in: the kind of credential, a name for logs, what it may reach.

    ``session`` is the login behind a browser cookie (None for other kinds);
    ``paths`` are the path prefixes this credential opens.
    """

    kind: str
    name: str
    session: BrowserSession | None = None
    paths: tuple[str, ...] = ("/",)

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
