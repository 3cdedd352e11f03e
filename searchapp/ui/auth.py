"""The password gate: a login form before any page when a password is configured.

``app.py`` calls ``require_login()`` before it declares its pages. Until the
session has the password, the only page is a hidden login page: no sidebar
lists the others (after "Log out" too, which replaces the list the browser
had), and asking for a page by its URL lands on the login form. Streamlit runs
the script on the server for each session, so nothing past the gate reaches
the browser. Being logged in is kept in the session (a reload asks again).
Without SEARCHAPP_PASSWORD or SEARCHAPP_PASSWORD_HASH the gate does nothing.

Example (``app.py``):
    >>> require_login()                                   # doctest: +SKIP
    >>> logout_button()                                   # doctest: +SKIP
    >>> st.navigation(PAGES).run()                        # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.config import Settings
from searchapp.errors import SearchAppError

AUTH_KEY = "searchapp.authenticated"


def gate_settings() -> Settings:
    """The settings (read each run: it is cheap); a bad setting stops the app with its message."""
    try:
        return Settings.from_env()
    except SearchAppError as exc:
        st.error(f"The app cannot start: {exc}", icon=":material/error:")
        st.stop()


def require_login() -> None:
    """Return when no password is set or this session has logged in; else run the login
    page as the app's only (hidden) page and stop the script there."""
    if not gate_settings().password_required or st.session_state.get(AUTH_KEY):
        return
    st.navigation([st.Page(login_form, title="Log in", url_path="login", default=True)],
                  position="hidden").run()
    st.stop()


def login_form() -> None:
    """Password field and button; the right password reruns the script into the app."""
    settings = gate_settings()
    st.title("searchapp")
    with st.form("login", border=False):
        attempt = st.text_input("Password", type="password", key="login-password")
        submitted = st.form_submit_button("Log in", type="primary", icon=":material/login:")
    if submitted:
        if settings.check_password(attempt):
            st.session_state[AUTH_KEY] = True
            st.rerun()
        st.error("Wrong password. Try again.", icon=":material/lock:")


def logout_button() -> None:
    """A "Log out" button in the sidebar, only when a password is set."""
    if gate_settings().password_required:
        st.sidebar.button("Log out", icon=":material/logout:", key="logout",
                          on_click=lambda: st.session_state.pop(AUTH_KEY, None))
