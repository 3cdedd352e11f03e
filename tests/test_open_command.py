"""``searchapp open``: the real server started on 127.0.0.1 and the address handed to the
browser, which here is a script named by ``BROWSER`` (Python's ``webbrowser`` runs it) that
writes the address it was given into a file."""

from __future__ import annotations

import re
import sys
import urllib.request

import pytest

from tests.browser import free_port, stop
from tests.helpers import run_cli


@pytest.mark.slow
def test_open_starts_the_app_once_and_hands_its_address_to_the_browser(tmp_path, monkeypatch):
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text("import sys\nwith open(sys.argv[1], 'a') as f:\n"
                       "    f.write(sys.argv[2] + '\\n')\n")
    monkeypatch.setenv("BROWSER", f"{sys.executable} {browser} {opened} %s")
    monkeypatch.delenv("SEARCHAPP_PASSWORD", raising=False)
    port = free_port()
    first = run_cli("open", "--port", str(port), timeout=240)
    pid = int(re.search(r"Started the app \(pid (\d+);", first.stdout).group(1))
    try:
        url = f"http://127.0.0.1:{port}"
        assert f"Opened {url} in the browser." in first.stdout
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            assert response.read() == b"ok"
        again = run_cli("open", "--port", str(port))
        assert f"The app is running at {url}." in again.stdout
        assert "Started" not in again.stdout, "a running app is not started twice"
        assert opened.read_text().split() == [url, url]
        assert (tmp_path / "data" / "server.log").is_file()
    finally:
        stop(pid)
