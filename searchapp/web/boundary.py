"""The app log, and the one line a page shows instead of a stack trace.

``st.App(on_script_error=on_script_error)`` calls the handler for an exception
that escaped a page or a widget callback. A ``SearchAppError`` (its message
says what to fix, and the pages normally show it themselves) is shown as it
is. Anything else is a bug: the traceback goes to ``DATA_DIR/app.log`` under
a short reference, and the browser gets one line naming it, never the
traceback or a server path from it. ``client.showErrorDetails = "none"`` in
``.streamlit/config.toml`` covers what slips past this.

The reference and the log entry are ``searchapp.reporting``'s, the boundary
every front end shares (the CLI's ``error:`` lines name theirs the same way).

Example:
    >>> install_app_log()                                   # doctest: +SKIP
    PosixPath('/srv/searchapp/data/app.log')
"""

from __future__ import annotations

from searchapp.errors import SearchAppError
from searchapp.reporting import log_exception, md_escape
from searchapp.web.applog import (  # noqa: F401 - re-exported: the pages' and serve.py's import
    LOG_NAME,
    install_app_log,
)


def on_script_error(exc: Exception) -> bool:
    """Show ``exc`` as one line in the page and log its traceback; True: Streamlit shows
    nothing more.

    Example (what a page shows for a bug):
        >>> on_script_error(RuntimeError("boom"))               # doctest: +SKIP
        Something went wrong (reference 3f9a2c); the details are in /srv/data/app.log.
    """
    import streamlit as st

    if isinstance(exc, SearchAppError):
        st.error(md_escape(exc), icon=":material/error:")
        return True
    reference, path = log_exception(exc, install_app_log(), "page")
    st.error(f"Something went wrong (reference {reference}); the details are in "
             f"{md_escape(path)}.",
             icon=":material/error:")
    return True
