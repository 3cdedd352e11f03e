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

import logging
import re
import threading
from pathlib import Path

from searchapp.config import Settings
from searchapp.errors import SearchAppError
from searchapp.reporting import log_exception

LOG_NAME = "app.log"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_MARKDOWN = re.compile(r"([\\`*_\[\]<>~$|#])")
log = logging.getLogger("searchapp.web.errors")

_lock = threading.Lock()
_log_path: Path | None = None


def install_app_log(data_dir: Path | None = None) -> Path:
    """Send the ``searchapp`` loggers of this process (INFO and up) to ``DATA_DIR/app.log``;
    idempotent. The file is created under the process' umask (0600 with ``serve.py``).

    Example:
        >>> install_app_log()                                   # doctest: +SKIP
        PosixPath('/srv/searchapp/data/app.log')
    """
    global _log_path
    with _lock:
        if _log_path is not None:
            return _log_path
        folder = Path(data_dir) if data_dir is not None else _data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / LOG_NAME
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        root = logging.getLogger("searchapp")
        root.addHandler(handler)
        if root.level == logging.NOTSET or root.level > logging.INFO:
            root.setLevel(logging.INFO)
        _log_path = path
        return path


def _data_dir() -> Path:
    try:
        return Settings.from_env().data_dir
    except SearchAppError:
        return Path("data").resolve()


def on_script_error(exc: Exception) -> bool:
    """Show ``exc`` as one line in the page and log its traceback; True: Streamlit shows
    nothing more.

    Example (what a page shows for a bug):
        >>> on_script_error(RuntimeError("boom"))               # doctest: +SKIP
        Something went wrong (reference 3f9a2c); the details are in /srv/data/app.log.
    """
    import streamlit as st

    if isinstance(exc, SearchAppError):
        st.error(_MARKDOWN.sub(r"\\\1", str(exc)), icon=":material/error:")
        return True
    reference, path = log_exception(exc, install_app_log(), "page")
    st.error(f"Something went wrong (reference {reference}); the details are in `{path}`.",
             icon=":material/error:")
    return True
