"""``searchapp open``: the app on this machine, started if it is not running, opened in the
default browser.

The server is ``make run``'s: ``streamlit run serve.py`` on 127.0.0.1 (loopback: no
password is needed where the user is the only one on the machine), detached from this
command, its output in ``DATA_DIR/server.log``. It is running when ``/healthz`` answers.
The browser is Python's ``webbrowser``, which honours ``BROWSER`` (``BROWSER="firefox
%s"``); where none can be started the address is printed to open by hand. On this
desktop the page may add watched folders under the home folder (``SEARCHAPP_WATCH_ROOTS``
defaults to it for the server started here).

Example:
    $ searchapp open
    Started the app (pid 4242; log in ~/.local/share/searchapp/server.log).
    Opened http://127.0.0.1:8501 in the browser.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request
import webbrowser
from pathlib import Path

from searchapp.cli import common
from searchapp.errors import ConfigError, os_error

START_TIMEOUT = 180.0  # seconds for a cold start (the pages import the model stack)
LOG_FILE = "server.log"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``open`` to the command parser."""
    c = sub.add_parser("open", help="start the app on this machine if needed and open it in "
                       "the browser")
    c.add_argument("--port", type=common.positive_int, default=8501)
    c.add_argument("--no-browser", action="store_true", help="start it, print the address")
    c.set_defaults(func=open_app_in_browser)


def open_app_in_browser(args: argparse.Namespace) -> int:
    url = f"http://127.0.0.1:{args.port}"
    if healthy(url):
        print(f"The app is running at {url}.")
    else:
        pid, log = start_server(args.port)
        print(f"Started the app (pid {pid}; log in {log}).")
        wait_healthy(url, pid, log)
    if args.no_browser or not webbrowser.open(url):
        print(f"Open {url} in a browser.")
    else:
        print(f"Opened {url} in the browser.")
    return 0


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether our server answers ``/healthz`` at ``url``."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=timeout) as response:
            return response.status == 200 and response.read().strip() == b"ok"
    except OSError:
        return False


def serve_script() -> Path:
    """``serve.py`` of this checkout (the server's entry file beside the package)."""
    script = Path(__file__).resolve().parents[2] / "serve.py"
    if not script.is_file():
        raise ConfigError(f"No serve.py at {script}: `searchapp open` starts the server of a "
                          "checkout; run it from one (make run starts it too).")
    return script


def start_server(port: int) -> tuple[int, Path]:
    """``streamlit run serve.py`` on 127.0.0.1:``port``, detached; (pid, its log file)."""
    from searchapp.config import Settings

    settings = Settings.from_env()
    log = Path(settings.data_dir) / LOG_FILE
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    env.setdefault("SEARCHAPP_WATCH_ROOTS", str(Path.home()))
    command = [sys.executable, "-m", "streamlit", "run", str(serve_script()),
               "--server.address", "127.0.0.1", "--server.port", str(port),
               "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    try:
        with open(log, "ab") as out:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True,
                                    cwd=serve_script().parent)
    except OSError as exc:
        raise (os_error(exc, settings.data_dir) or exc) from exc
    return proc.pid, log


def wait_healthy(url: str, pid: int, log: Path, timeout: float = START_TIMEOUT) -> None:
    """Wait for ``/healthz``; a server that exits or never answers is an error naming its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if healthy(url, timeout=1.0):
            return
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                raise ConfigError(f"The app stopped while starting; the reason is at the end "
                                  f"of {log}.")
        except ChildProcessError:
            pass
        time.sleep(0.2)
    raise ConfigError(f"The app did not answer at {url} within {timeout:g} s; see {log}.")
