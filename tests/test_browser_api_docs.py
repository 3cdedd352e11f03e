"""The API docs open in Chromium for the people who may use the app: a logged-in user, and
the local user of an open server (no password) even once an API key exists.

Real ``streamlit run serve.py`` servers on 127.0.0.1 (stopped by pid), Debian's
Chromium through Playwright (skips without them). Swagger UI must render the
document (it fetches ``/api/v1/openapi.json`` from the page) and a call made from
the docs page must answer; a program without a key is still refused.
"""

from __future__ import annotations

import httpx
import pytest

from tests.browser import browser_page, chromium, playwright_or_skip, served_app
from tests.raw_clients import COOKIE, log_in
from tests.test_api_server import PASSWORD, make_key

WAIT = 60_000
CALL = "async () => (await fetch('/api/v1/corpora')).status"  # as "Try it out" sends it


def docs_work(page, url: str) -> None:
    """Open the docs, wait for Swagger UI to show the API's title, then call the API."""
    answer = page.goto(f"{url}/api/v1/docs")
    assert answer.status == 200, answer.status
    page.locator(".swagger-ui .info .title").wait_for(timeout=WAIT)
    assert "searchapp" in page.locator(".swagger-ui .info .title").inner_text()
    assert page.evaluate(CALL) == 200


@pytest.mark.browser
def test_an_open_server_with_a_key_shows_its_docs_to_the_local_browser(tmp_path, request):
    sync_api = playwright_or_skip()
    data = tmp_path / "data"
    make_key(data, "scripts")
    with served_app(data, tmp_path / "server.log") as (_p, url), \
            chromium(sync_api) as browser, browser_page(browser, request) as page:
        docs_work(page, url)
        with httpx.Client(base_url=url, timeout=60) as program:  # no key, no browser
            assert program.get("/api/v1/corpora").status_code == 401
            cross = program.get("/api/v1/corpora", headers={"Sec-Fetch-Site": "cross-site"})
            assert cross.status_code == 401


@pytest.mark.slow  # a second server; this already worked before the fix (a guard, not a repro)
@pytest.mark.browser
def test_a_logged_in_user_reads_and_tries_the_docs(tmp_path, request):
    sync_api = playwright_or_skip()
    data = tmp_path / "data"
    make_key(data, "scripts")
    with served_app(data, tmp_path / "server.log", {"SEARCHAPP_PASSWORD": PASSWORD}) \
            as (_p, url), chromium(sync_api) as browser, browser_page(browser, request) as page:
        refused = page.goto(f"{url}/api/v1/docs")  # before the login: no docs
        assert "/login" in page.url or refused.status == 401
        with httpx.Client(base_url=url, timeout=60) as client:
            cookie = log_in(client, PASSWORD)
        page.context.add_cookies([{"name": COOKIE, "value": cookie, "url": url}])
        docs_work(page, url)
