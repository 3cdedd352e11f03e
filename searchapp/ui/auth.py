"""The pages' side of the password: a second lock behind the door, and "Log out".

The password is checked at the HTTP layer (``searchapp.web``, started by
``serve.py``): a request without a live login cookie never reaches Streamlit.
``require_login`` is the second lock: with a password set, the pages run only
for a session whose websocket carried a live login of this process' door.
Anything else (the pages served without the door by ``streamlit run app.py``,
a login that ended while a tab stayed open, AppTest) gets a message and no
page, no page list in the sidebar. Without SEARCHAPP_PASSWORD or
SEARCHAPP_PASSWORD_HASH nothing changes.

Example (``app.py``):
    >>> require_login()                                   # doctest: +SKIP
    >>> logout_button()                                   # doctest: +SKIP
    >>> st.navigation(PAGES).run()                        # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from searchapp.config import Settings
from searchapp.errors import SearchAppError
from searchapp.reporting import md_escape
from searchapp.web.door import LOGIN_PATH, installed
from searchapp.web.sessions import BrowserSession

NO_DOOR = ("The pages are served without their login door, so they stay closed. Start the "
           "app with `make run` (`streamlit run serve.py`).")


def gate_settings() -> Settings:
    """The settings (read each run: it is cheap); a bad setting stops the app with its message."""
    try:
        return Settings.from_env()
    except SearchAppError as exc:
        st.error(f"The app cannot start: {md_escape(exc)}", icon=":material/error:")
        st.stop()


def request_cookies() -> Mapping[str, str]:
    """The cookies this session's websocket was opened with (none under AppTest)."""
    try:
        return st.context.cookies
    except Exception:  # no client (a bare script run): no cookies
        return {}


def current_login() -> BrowserSession | None:
    """The door's live login behind this session, or None."""
    door = installed()
    return door.session_in(request_cookies()) if door is not None else None


def require_login() -> None:
    """Return when no password is set or this session came through the door with a live
    login; otherwise say why and stop the script (no page, no page list)."""
    if not gate_settings().password_required or current_login() is not None:
        return
    st.title("searchapp")
    if installed() is None:
        st.error(NO_DOOR, icon=":material/lock:")
    else:
        st.warning(f"Your login has ended. [Log in again]({LOGIN_PATH}).",
                   icon=":material/lock:")
    st.stop()


def logout_button() -> None:
    """A "Log out" button in the sidebar when a password is set: it sends the browser to
    the door's ``/logout`` with this login's token, which ends the login server-side."""
    if not gate_settings().password_required:
        return
    door, login = installed(), current_login()
    if door is None or login is None:
        return
    if st.sidebar.button("Log out", icon=":material/logout:", key="logout"):
        _send_browser_to(door.logout_url(login))


def _send_browser_to(url: str) -> None:
    """Navigate this tab to ``url`` (a path on this site), as ``st.logout`` does."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return
    msg = ForwardMsg()
    msg.auth_redirect.url = url
    ctx.enqueue(msg)
