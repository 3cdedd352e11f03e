"""The door: settings, signing secret, session registry and throttle, once per process.

``serve.py`` calls ``install()`` and hands the Door to the middleware and the
login routes; the pages find the same one with ``installed()`` (to show
"Log out" with its token, and to refuse to run behind no door at all).
Without SEARCHAPP_PASSWORD or SEARCHAPP_PASSWORD_HASH the door is open
(``enabled`` is False) and lets everything through, as before. With a setting
it cannot read (a malformed hash) it answers every request with the message
(``error``), never the pages.

Example:
    >>> door = Door.from_env({"SEARCHAPP_PASSWORD": "pw"})
    >>> session = door.sessions.create()
    >>> value = door.cookie_value(session)
    >>> door.session_for_cookie(value) is session
    True
    >>> door.sessions.end(session.id) and door.session_for_cookie(value) is None
    True
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from searchapp.config import Settings
from searchapp.errors import SearchAppError
from searchapp.web import cookies, shared
from searchapp.web.identity import CredentialReader, Principal, Scope, header_values, identify
from searchapp.web.sessions import BrowserSession, SessionLimits, SessionRegistry
from searchapp.web.throttle import LoginThrottle

if TYPE_CHECKING:
    from anyio import CapacityLimiter

log = logging.getLogger(__name__)

HASH_CONCURRENCY = 2  # password checks at once (scrypt: 32 MiB each)
LOGOUT_PATH = "/logout"
LOGIN_PATH = "/login"


class Door:
    """Everything the login needs, for one server process."""

    def __init__(self, settings: Settings | None, *, error: str | None = None,
                 limits: SessionLimits | None = None, secret: bytes | None = None,
                 sessions: SessionRegistry | None = None,
                 throttle: LoginThrottle | None = None,
                 hash_concurrency: int = HASH_CONCURRENCY) -> None:
        limits = limits or SessionLimits()
        self.settings = settings
        self.error = error
        self.enabled = bool(settings and settings.password_required)
        self.secret = secret or cookies.new_secret()
        self.sessions = sessions or SessionRegistry(limits.idle_seconds, limits.max_seconds)
        self.throttle = throttle or LoginThrottle()
        self.hash_concurrency = hash_concurrency
        self._hash_limiter: CapacityLimiter | None = None
        self.readers: list[CredentialReader] = [self.cookie_reader]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Door:
        """A door from SEARCHAPP_* settings; one it cannot read gives a door that only says so.

        Example:
            >>> Door.from_env({}).enabled, Door.from_env({"SEARCHAPP_PASSWORD": "x"}).enabled
            (False, True)
            >>> Door.from_env({"SEARCHAPP_PASSWORD_HASH": "oops"}).error
            'The app cannot start: SEARCHAPP_PASSWORD_HASH is not a password hash; use ...'
        """
        env = os.environ if env is None else env
        try:
            return cls(Settings.from_env(env), limits=SessionLimits.from_env(env))
        except SearchAppError as exc:
            return cls(None, error=f"The app cannot start: {exc}")

    # ---- who is this ---------------------------------------------------------------
    def identify(self, scope: Scope) -> Principal | None:
        """Who sent this request (the first credential reader that knows), or None."""
        return identify(scope, self.readers)

    def cookie_reader(self, scope: Scope) -> Principal | None:
        """The browser login behind the request's cookie, if it is valid and live."""
        for value in cookies.values_in(header_values(scope, b"cookie")):
            session = self.session_for_cookie(value)
            if session is not None:
                return Principal("browser", f"session {public_name(session)}", session)
        return None

    def session_for_cookie(self, value: str) -> BrowserSession | None:
        """The live session a cookie value names, or None (forged, expired, logged out)."""
        session_id = cookies.verify(self.secret, value, self.sessions.clock())
        return self.sessions.get(session_id) if session_id else None

    def session_in(self, cookie_values: Mapping[str, str]) -> BrowserSession | None:
        """The live session named by the login cookie in a name -> value mapping
        (``st.context.cookies`` in a page), or None."""
        value = cookie_values.get(cookies.COOKIE_NAME)
        return self.session_for_cookie(value) if value else None

    # ---- cookies and logout --------------------------------------------------------
    def cookie_value(self, session: BrowserSession) -> str:
        """The signed cookie value for ``session`` (void at its absolute expiry)."""
        return cookies.sign(self.secret, session.id, int(session.expires))

    def set_cookie(self, session: BrowserSession, secure: bool) -> str:
        """The ``Set-Cookie`` header value that logs the browser in."""
        max_age = max(int(session.expires - self.sessions.clock()), 1)
        return cookies.set_cookie(self.cookie_value(session), max_age, secure)

    def logout_token(self, session: BrowserSession) -> str:
        """A token only this login's pages know: ``GET /logout?t=TOKEN`` ends the login,
        a forged link without it (even from a sibling site on another port) does not."""
        return cookies.mac(self.secret, f"logout:{session.id}")

    def logout_url(self, session: BrowserSession) -> str:
        """Where the "Log out" button sends the browser."""
        return f"{LOGOUT_PATH}?t={self.logout_token(session)}"

    def logout_token_ok(self, session: BrowserSession, token: str) -> bool:
        """Whether ``token`` is this login's logout token (constant-time)."""
        return hmac.compare_digest(self.logout_token(session).encode(), token.encode())

    # ---- checking a password -------------------------------------------------------
    @property
    def hash_limiter(self) -> CapacityLimiter:
        """At most ``hash_concurrency`` password checks at once (made in the event loop)."""
        if self._hash_limiter is None:
            from anyio import CapacityLimiter

            self._hash_limiter = CapacityLimiter(self.hash_concurrency)
        return self._hash_limiter

    def check_password(self, attempt: str) -> bool:
        """The settings' constant-time check (slow on purpose with a hash)."""
        return bool(self.settings and self.settings.check_password(attempt))


def public_name(session: BrowserSession) -> str:
    """A short name for a session in logs that does not reveal its id.

    Example:
        >>> len(public_name(SessionRegistry().create()))
        8
    """
    return hashlib.sha256(session.id.encode()).hexdigest()[:8]


def install(env: Mapping[str, str] | None = None) -> Door:
    """This process' door (made from the environment on first call), for ``serve.py``.

    Example:
        >>> install() is install()                            # doctest: +SKIP
        True
    """
    return shared.once("door", lambda: Door.from_env(env))


def installed() -> Door | None:
    """The door ``serve.py`` installed in this process, or None (the pages run without one:
    ``streamlit run app.py``, or AppTest).

    Example:
        >>> installed() is None                               # doctest: +SKIP
        True
    """
    return shared.peek("door")

