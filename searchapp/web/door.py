"""The door: settings, signing secret, session registry and throttle, once per process.

``serve.py`` calls ``install()`` and hands the Door to the middleware and the
login routes; the pages find the same one with ``installed()`` (to show
"Log out" with its token, and to refuse to run behind no door at all).
Without SEARCHAPP_PASSWORD or SEARCHAPP_PASSWORD_HASH the door is open
(``enabled`` is False) and lets everything through, as before, as long as the
server listens on the loopback interface only (``listen_on``): listening
elsewhere needs a password or an API key, else the server refuses to start.
The JSON API (``/api/v1/``) asks for a credential as soon as a password or any
API key exists (``api_locked``); a key opens the API only, a login both. With
a setting it cannot read (a malformed hash) the door answers every request
with the message (``error``), never the pages.

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
from searchapp.web.identity import (
    API_PREFIX,
    CredentialReader,
    Principal,
    Scope,
    bearer_token,
    header_values,
    identify,
)
from searchapp.web.sessions import BrowserSession, SessionLimits, SessionRegistry
from searchapp.web.throttle import LoginThrottle

if TYPE_CHECKING:
    from anyio import CapacityLimiter

log = logging.getLogger(__name__)

HASH_CONCURRENCY = 2  # password checks at once (scrypt: 32 MiB each)
LOGOUT_PATH = "/logout"
LOGIN_PATH = "/login"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "ip6-localhost")


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
        self.beyond_loopback = False  # listening on more than 127.0.0.1 (``listen_on``)
        self.db = None  # the keys' database; the process' App's when None
        self.readers: list[CredentialReader] = [self.cookie_reader, self.key_reader]

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

    def key_reader(self, scope: Scope) -> Principal | None:
        """The API key behind ``Authorization: Bearer KEY``, if it is live; it opens the
        API only (``paths``), read-only keys read only."""
        token = bearer_token(scope)
        if token is None or self.error is not None:
            return None
        from searchapp.access import keys

        row = keys.check(self.keys_db(), token)
        if row is None:
            return None
        return Principal("api-key", f"key {row.name}", paths=(API_PREFIX,),
                         read_only=row.read_only, key_id=row.id)

    @property
    def has_password(self) -> bool:
        """Whether a password is set (else the door may be closed to pages by keys alone)."""
        return bool(self.settings and self.settings.password_required)

    def keys_db(self):
        """The database the API keys live in: the process' one App's."""
        return self.db if self.db is not None else shared.app().db

    def api_locked(self) -> bool:
        """Whether an API request needs a credential: a password or a key exists, or the
        server listens beyond the loopback interface."""
        if self.enabled:
            return True
        from searchapp.access import keys

        return keys.any_keys(self.keys_db())

    def listen_on(self, address: str | None) -> str | None:
        """Note where the server listens; the reason to refuse to start, or None.

        Beyond the loopback interface (``0.0.0.0``, a LAN address; Streamlit's
        default when ``--server.address`` is not given) the pages and the API
        need a credential: with neither a password nor an API key the server
        must not start. With keys but no password, the pages stay closed there
        (nobody can log in) and the API takes keys.

        Example:
            >>> Door.from_env({}).listen_on("127.0.0.1") is None
            True
        """
        if is_loopback(address):
            return None
        if self.error is not None:
            return None  # every request gets the error already
        if not (self.settings and self.settings.password_required) and not self.api_locked():
            return (f"Refusing to listen on {address or 'every interface (0.0.0.0)'} without a "
                    "password or an API key: anyone on the network could use the app. Set "
                    "SEARCHAPP_PASSWORD (or SEARCHAPP_PASSWORD_HASH from `searchapp "
                    "hash-password`) for the pages and the API, or create an API key "
                    "(`searchapp keys create --name NAME`) for the API alone; or listen on "
                    "127.0.0.1 only (`make run`, --server.address 127.0.0.1).")
        self.beyond_loopback = True
        self.enabled = True
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


def is_loopback(address: str | None) -> bool:
    """Whether a listening address is the loopback interface only.

    Example:
        >>> [is_loopback(a) for a in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "", None)]
        [True, True, True, False, False, False]
    """
    if not address:
        return False  # Streamlit listens on every interface when no address is given
    address = address.strip().strip("[]").lower()
    return address in LOOPBACK_NAMES or address.startswith("127.")


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

