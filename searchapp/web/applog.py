"""The app log (``DATA_DIR/app.log``) and the references that name errors in it.

The pages (``boundary``) and the JSON API write an unexpected error's traceback
here under a reference (``searchapp.reporting.log_exception``, the boundary
every front end shares), and show the reference only. No streamlit import:
the API uses it too.

Example:
    >>> install_app_log()                                   # doctest: +SKIP
    PosixPath('/srv/searchapp/data/app.log')
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from searchapp.base.private_files import open_private_file
from searchapp.config import Settings
from searchapp.errors import SearchAppError

LOG_NAME = "app.log"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

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
        handler = PrivateFileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        root = logging.getLogger("searchapp")
        root.addHandler(handler)
        if root.level == logging.NOTSET or root.level > logging.INFO:
            root.setLevel(logging.INFO)
        _log_path = path
        return path


class PrivateFileHandler(logging.FileHandler):
    """A FileHandler that opens its file with ``open_private`` (never through a link): a
    link planted at ``app.log`` raises UnsafeFileError instead of being appended to.

    Example:
        >>> PrivateFileHandler(Path(tempfile.mkdtemp()) / "app.log").close()  # doctest: +SKIP
    """

    def _open(self):
        return open_private_file(Path(self.baseFilename), text_mode="a",
                                 encoding=self.encoding, errors=self.errors)


def _data_dir() -> Path:
    try:
        return Settings.from_env().data_dir
    except SearchAppError:
        return Path("data").resolve()
