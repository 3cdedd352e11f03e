"""One server for people and programs: the pages and the API on one port, behind one door.

A real ``streamlit run serve.py`` on a free port of 127.0.0.1 (stopped by pid):
with a password, an API key opens the API and nothing else, a login cookie
opens both; binding beyond loopback without a password or key is refused at
start; the interactive docs load nothing from another host.
"""

from __future__ import annotations

import re
import subprocess
import sys

import httpx

from tests.browser import REPO, free_port, served_app
from tests.raw_clients import COOKIE, log_in

PASSWORD = "correct horse battery staple"


def make_key(data_dir, name: str, read_only: bool = False) -> str:
    from searchapp.access import keys
    from searchapp.config import Settings
    from searchapp.context import App

    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(data_dir)}))
    try:
        return keys.create(app.db, name, read_only=read_only).key
    finally:
        app.db.dispose()


def test_with_a_password_a_key_opens_the_api_only_and_a_login_opens_both(tmp_path):
    data = tmp_path / "data"
    key = make_key(data, "helpdesk")
    with served_app(data, tmp_path / "server.log", {"SEARCHAPP_PASSWORD": PASSWORD}) as (_p, url):
        with httpx.Client(base_url=url, timeout=60) as client:
            bearer = {"Authorization": f"Bearer {key}"}
            assert client.get("/api/v1/corpora", headers=bearer).json() == {"corpora": []}
            for path in ("/", "/_stcore/host-config", "/search"):
                assert client.get(path, headers=bearer).status_code == 401, path
            refused = client.get("/api/v1/corpora")
            assert refused.status_code == 401
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert refused.json()["type"] == "urn:searchapp:problem:unauthorized"
            cookie = log_in(client, PASSWORD)
        with httpx.Client(base_url=url, timeout=60, cookies={COOKIE: cookie}) as browser:
            assert browser.get("/api/v1/corpora").status_code == 200
            assert browser.get("/_stcore/host-config").status_code == 200


def test_docs_and_their_assets_come_from_this_server_only(tmp_path):
    with served_app(tmp_path / "data", tmp_path / "server.log") as (_p, url), \
            httpx.Client(base_url=url, timeout=60) as client:
        page = client.get("/api/v1/docs")
        assert page.status_code == 200
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sources and all(s.startswith("/api/v1/") for s in sources), sources
        assert "url: '/api/v1/openapi.json'" in page.text
        for source in sources:
            assert client.get(source).status_code == 200, source
        document = client.get("/api/v1/openapi.json").json()
        assert document["openapi"].startswith("3.1")
        assert document["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"


def test_listening_beyond_loopback_without_a_password_or_key_is_refused_at_start(tmp_path):
    import os

    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": str(REPO)}
    env.pop("SEARCHAPP_PASSWORD", None)
    env.pop("SEARCHAPP_PASSWORD_HASH", None)
    done = subprocess.run(
        [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.address", "0.0.0.0",
         "--server.port", str(free_port()), "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Refusing to listen on 0.0.0.0 without a password or an API key" in done.stderr
    assert "SEARCHAPP_PASSWORD" in done.stderr and "searchapp keys create" in done.stderr
