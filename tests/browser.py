"""Helpers for the browser tests: the app under ``streamlit run`` on a free loopback port,
Debian's Chromium through Playwright, and everything stopped by pid at the end.

Example:
    >>> sync_api = playwright_or_skip()                                   # doctest: +SKIP
    >>> with served_app(data_dir, tmp_path / "streamlit.log") as (app, url):  # doctest: +SKIP
    ...     with chromium(sync_api) as browser:
    ...         browser.new_page().goto(url)
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO / "artifacts"
ENTRY = "serve.py"  # what `make run` starts: the pages of app.py behind the login door
HEALTH_PATH = "/healthz"  # the door's public health check


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60.0,
                 path: str = HEALTH_PATH) -> None:
    """Poll a health endpoint until it answers "ok" (or the process dies): the door's public
    ``/healthz`` for ``serve.py``, ``/_stcore/health`` for a bare Streamlit script."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        with contextlib.suppress(OSError), \
                urllib.request.urlopen(f"{url}{path}", timeout=2) as r:
            if r.read().strip() == b"ok":
                return
        time.sleep(0.5)
    raise TimeoutError(f"the app did not answer at {url} within {timeout:.0f} s")


def stop(pid: int | None, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the process is still there after ``timeout``."""
    if not pid:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            os.kill(pid, 0)  # raises ProcessLookupError once it is gone
            time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)


def read_worker_pid(data_dir: Path) -> int | None:
    """The pid of the background worker the app started for ``data_dir``, if any."""
    try:
        return int((data_dir / "worker.pid").read_text())
    except (OSError, ValueError):
        return None


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # no script runs
FILE_CHIP = '[data-testid="stFileChipName"]'  # a file the uploader holds
# The text of each hit row (.st-key-hit-<rank>, rank order) once a run has drawn them all:
# no script runs and nothing is stale (greyed, kept from the run before); null until then.
SETTLED_HITS = """idle => {
  if (!document.querySelector(idle) || document.querySelector('[data-stale="true"]')) return null;
  const rows = [];
  for (let e; (e = document.querySelector(`.st-key-hit-${rows.length + 1}`)); )
    rows.push(e.innerText);
  return rows.length ? rows : null; }"""


def settled_hits(page, timeout: float = 60_000) -> list[str]:
    """The text of each hit row, read once the run that draws them has finished.

    Streamlit draws a run's elements one by one, so the rows present when the first one
    appears can be fewer than the run draws (CI of stop 57 read one of eight). Waiting for
    the app's "not running" state, with no stale element left, and reading every row in the
    same step gives the whole list.
    """
    return page.wait_for_function(SETTLED_HITS, arg=IDLE, timeout=timeout).json_value()


def pick_files(page, files: str | list[str], button: str, reopen=None,
               timeout: float = 60_000) -> None:
    """Choose ``files`` in the page's file input and wait until the script has them: the
    button that only a chosen file brings (``button``) is there.

    Now and then Streamlit's uploader takes no file at all: no upload request leaves the
    page, the uploader shows no file, and a second pick on it does nothing either; a reload
    mends it. Seen right after the Duplicates page's tab click (CI of stop 41; here 0 of
    150 to 1 of 12 picks under a load of 3 on 2 cores, and where a reload was tried, the
    pick after it took the file). So the test picks once more only then, after
    ``page.reload()`` and ``reopen(page)`` (what brings the uploader back, e.g. a tab
    click); a file the uploader holds that brings no button fails at once.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in (1, 2):
        page.wait_for_selector(IDLE, timeout=timeout)
        page.locator("input[type=file]").set_input_files(files)
        try:
            page.get_by_role("button", name=button).wait_for(
                timeout=timeout / 3 if attempt == 1 else timeout)
            return
        except PlaywrightTimeout:
            if attempt == 2 or page.locator(FILE_CHIP).count():
                raise
        page.reload()
        if reopen is not None:
            reopen(page)


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` ended within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


@contextlib.contextmanager
def served_app(data_dir: Path, log_path: Path, env: Mapping[str, str] | None = None
               ) -> Iterator[tuple[subprocess.Popen, str]]:
    """``streamlit run serve.py`` (as ``make run``) on 127.0.0.1 with its data in ``data_dir``:
    yields (process, url) once healthy; the app and the worker it started are stopped by pid
    on exit."""
    url = f"http://127.0.0.1:{free_port()}"
    app_env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO),
                                                           os.environ.get("PYTHONPATH")])),
               **(env or {})}
    with open(log_path, "wb") as log:
        app = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", ENTRY, "--server.address", "127.0.0.1",
             "--server.port", url.rsplit(":", 1)[1], "--server.headless", "true",
             "--browser.gatherUsageStats", "false"],
            cwd=REPO, env=app_env, stdout=log, stderr=subprocess.STDOUT,
            umask=0o022)  # the usual umask: the server's own must make its files private
        try:
            wait_healthy(url, app)
            yield app, url
        finally:
            worker_pid = read_worker_pid(data_dir)
            stop(app.pid)
            stop(worker_pid)


def playwright_or_skip():
    """Playwright's sync API; skips the test without Debian's Chromium or Playwright."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium is not installed (apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api")


@contextlib.contextmanager
def chromium(sync_api) -> Iterator:
    """A headless Chromium browser (closed on exit)."""
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def browser_page(browser, request) -> Iterator:
    """A new browser context (a new session) and its page; a screenshot in artifacts/ if the
    test using it fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    failed = request.session.testsfailed
    try:
        yield page
    finally:
        if request.session.testsfailed > failed:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
        context.close()


@contextlib.contextmanager
def served_without_worker(folder: Path, prepare, env: Mapping[str, str] | None = None
                          ) -> Iterator[tuple[str, object, object]]:
    """(url, Chromium, App) for a module of browser tests: a server on ``folder/data`` whose
    worker lock a stand-in process holds, so the app starts no worker of its own (the tests
    run the jobs they need themselves), and an App on the same folder, given to
    ``prepare(app)`` before the server starts. Everything is stopped by pid at the end."""
    from searchapp.config import Settings
    from searchapp.context import App

    sync_api = playwright_or_skip()
    data = folder / "data"
    data.mkdir()
    stand_in = subprocess.Popen([sys.executable, "-c", "import signal, sys; from searchapp.jobs."
                                 "worker import hold_worker_lock as h; lock = h(sys.argv[1]); "
                                 "print(flush=True); signal.pause()", str(data)],
                                stdout=subprocess.PIPE)
    stand_in.stdout.readline()  # the lock is held
    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data), "SEARCHAPP_DEVICE": "cpu"}))
    try:
        prepare(app)
        ARTIFACTS.mkdir(exist_ok=True)
        with served_app(data, folder / "streamlit.log", env) as (_proc, url), \
                chromium(sync_api) as browser:
            yield url, browser, app
    finally:
        stop(stand_in.pid)
        app.db.dispose()
