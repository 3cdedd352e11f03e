"""Logged-in browser sessions, kept in the server process: idle and absolute expiry, logout.

A session starts at a successful login and ends at logout, after
``idle_seconds`` without a request or a websocket message from it (the
websocket's heartbeats do not count), or ``max_seconds`` after the login,
whichever comes first. The registry lives in memory: restarting the server
logs everyone out. Ending a session tells its listeners (the door closes that
session's open websockets), so a copied cookie stops working at once.

Each session also records the Streamlit session ids created under it
(``bind``), so a websocket or an upload under another login cannot use them.

Example:
    >>> clock = [1000.0]
    >>> registry = SessionRegistry(idle_seconds=60, max_seconds=3600, clock=lambda: clock[0])
    >>> s = registry.create()
    >>> registry.get(s.id) is s
    True
    >>> clock[0] += 61                        # a minute and a second without a request
    >>> registry.get(s.id) is None
    True
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from searchapp.errors import ConfigError
from searchapp.web.cookies import new_session_id

log = logging.getLogger(__name__)

DEFAULT_IDLE_SECONDS = 8 * 3600   # a working day without a click ends the session
DEFAULT_MAX_SECONDS = 24 * 3600   # and every login lasts a day at most
MAX_SESSIONS = 10_000             # the oldest goes first beyond this
MAX_STREAMLIT_IDS = 64            # per login: tabs and reconnects; the oldest goes first


@dataclass
class BrowserSession:
    """One login: its id (the secret the cookie carries), times, and Streamlit sessions."""

    id: str
    created: float
    last_seen: float
    expires: float
    streamlit_ids: dict[str, None] = field(default_factory=dict)  # an ordered set
    listeners: list[Callable[[], None]] = field(default_factory=list, repr=False)


@dataclass(frozen=True)
class SessionLimits:
    """How long a login lasts: idle and absolute, in seconds."""

    idle_seconds: int = DEFAULT_IDLE_SECONDS
    max_seconds: int = DEFAULT_MAX_SECONDS

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SessionLimits:
        """SEARCHAPP_SESSION_IDLE_SECONDS and SEARCHAPP_SESSION_MAX_SECONDS, validated.

        Example:
            >>> SessionLimits.from_env({"SEARCHAPP_SESSION_IDLE_SECONDS": "600"})
            SessionLimits(idle_seconds=600, max_seconds=86400)
        """
        return cls(_seconds(env, "SEARCHAPP_SESSION_IDLE_SECONDS", DEFAULT_IDLE_SECONDS),
                   _seconds(env, "SEARCHAPP_SESSION_MAX_SECONDS", DEFAULT_MAX_SECONDS))


def _seconds(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{name}={raw!r} is not a whole number of seconds above 0; "
                          f"e.g. {default}.")
    return int(raw)


class SessionRegistry:
    """The live logins of this process; thread-safe (the server's event loop and the
    page scripts' threads both ask)."""

    def __init__(self, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 max_seconds: float = DEFAULT_MAX_SECONDS,
                 clock: Callable[[], float] = time.time) -> None:
        self.idle_seconds = idle_seconds
        self.max_seconds = max_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, BrowserSession] = {}

    def create(self) -> BrowserSession:
        """A new session, valid from now; expired ones are swept out first.

        Example:
            >>> SessionRegistry().create().expires - SessionRegistry().clock() > 3600
            True
        """
        now = self.clock()
        expires = float(int(now + self.max_seconds))  # whole seconds, as the cookie says
        session = BrowserSession(new_session_id(), now, now, expires)
        ended = self._sweep(now)
        with self._lock:
            while len(self._sessions) >= MAX_SESSIONS:
                ended.append(self._sessions.pop(next(iter(self._sessions))))
            self._sessions[session.id] = session
        _notify(ended)
        return session

    def get(self, session_id: str) -> BrowserSession | None:
        """The live session with this id, or None (unknown, logged out or expired).

        Example:
            >>> SessionRegistry().get("nobody") is None
            True
        """
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or self._alive(session, self.clock()):
                return session
            del self._sessions[session_id]
        _notify([session])
        return None

    def touch(self, session: BrowserSession) -> None:
        """Note activity now (pushes the idle expiry back, never the absolute one).

        Example:
            >>> r = SessionRegistry(); s = r.create(); r.touch(s)
        """
        with self._lock:
            session.last_seen = max(session.last_seen, self.clock())

    def end(self, session_id: str) -> bool:
        """End a session now (logout); returns whether it was live. Its listeners run.

        Example:
            >>> r = SessionRegistry(); s = r.create()
            >>> r.end(s.id), r.get(s.id), r.end(s.id)
            (True, None, False)
        """
        with self._lock:
            session = self._sessions.pop(session_id, None)
        _notify([session] if session else [])
        return session is not None

    def listen(self, session: BrowserSession, callback: Callable[[], None]
               ) -> Callable[[], None]:
        """Call ``callback`` (from any thread) when ``session`` ends; returns a function
        that stops listening. An already ended session calls it at once.

        Example:
            >>> r = SessionRegistry(); s = r.create(); calls = []
            >>> stop = r.listen(s, lambda: calls.append("ended"))
            >>> r.end(s.id) and calls
            ['ended']
        """
        with self._lock:
            live = self._sessions.get(session.id) is session
            if live:
                session.listeners.append(callback)
        if not live:
            callback()

        def stop() -> None:
            with self._lock:
                if callback in session.listeners:
                    session.listeners.remove(callback)

        return stop

    def bind(self, session: BrowserSession, streamlit_id: str) -> None:
        """Record that Streamlit session ``streamlit_id`` was created under ``session``.

        Example:
            >>> r = SessionRegistry(); s = r.create(); r.bind(s, "st-1")
            >>> r.owns(s, "st-1"), r.owns(r.create(), "st-1")
            (True, False)
        """
        with self._lock:
            ids = session.streamlit_ids
            ids.pop(streamlit_id, None)
            ids[streamlit_id] = None
            while len(ids) > MAX_STREAMLIT_IDS:
                ids.pop(next(iter(ids)))

    def owns(self, session: BrowserSession, streamlit_id: str) -> bool:
        """Whether Streamlit session ``streamlit_id`` was created under ``session``."""
        with self._lock:
            return streamlit_id in session.streamlit_ids

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def _alive(self, session: BrowserSession, now: float) -> bool:
        return now < session.expires and now - session.last_seen < self.idle_seconds

    def _sweep(self, now: float) -> list[BrowserSession]:
        with self._lock:
            dead = [s for s in self._sessions.values() if not self._alive(s, now)]
            for session in dead:
                del self._sessions[session.id]
        return dead


def _notify(ended: list[BrowserSession]) -> None:
    """Run the listeners of sessions that just ended (outside the lock)."""
    for session in ended:
        for callback in list(session.listeners):
            try:
                callback()
            except Exception:  # one broken listener must not keep the others open
                log.exception("a listener of an ended session failed")
