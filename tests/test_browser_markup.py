"""Address parameters shown as text in Chromium, not as Markdown: no link, no image, no
request to another address.

The app runs as ``make run`` runs it (``serve.py``) on a free loopback port; a small HTTP
server of the test, on another free port, counts every request it gets. The Guide page is
opened with ``?topic=`` holding a Markdown link to an outside-looking login page, an
image and an HTML image on the counting server, a ``:red[...]`` directive and an
autolink; then the Search page with the same text as ``?corpus=``. Each page must show
the text literally, with no <a> or <img> made from it, and the counting server must get
no request. Needs /usr/bin/chromium; skips without it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import pytest

from searchapp.reporting import WORD_JOINER
from tests.browser import (
    ARTIFACTS,
    IDLE,
    browser_page,
    chromium,
    free_port,
    playwright_or_skip,
    served_app,
)

pytestmark = pytest.mark.browser


class Counter(BaseHTTPRequestHandler):
    """Answers 200 with nothing and counts every request (the server's ``hits``)."""

    def do_GET(self) -> None:  # the name http.server calls
        self.server.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def counting_server() -> Iterator[ThreadingHTTPServer]:
    """An HTTP server on a free loopback port that records the paths asked of it."""
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Counter)
    server.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def hostile(port: int) -> str:
    return (f"[Log in again](http://evil.example/login) ![pixel](http://127.0.0.1:{port}/md.png)"
            f" <img src=http://127.0.0.1:{port}/html.png> :red[alarm] http://evil.example/x")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app with one corpus ("faq"), a counting server, and Chromium: (url, browser,
    counter)."""
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.corpora.service import create_corpus

    sync_api = playwright_or_skip()
    tmp = tmp_path_factory.mktemp("browser-markup")
    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(tmp / "data"),
                                 "SEARCHAPP_DEVICE": "cpu"}))
    create_corpus(app, "faq")
    app.db.dispose()
    ARTIFACTS.mkdir(exist_ok=True)
    with counting_server() as counter, \
            served_app(tmp / "data", tmp / "streamlit.log") as (_proc, url), \
            chromium(sync_api) as browser:
        yield url, browser, counter


@pytest.fixture
def page(served, request):
    _url, browser, _counter = served
    with browser_page(browser, request) as page:
        yield page


def assert_shown_as_text(page, text: str, port: int, counter) -> None:
    """``text`` is on the page letter for letter; nothing of it became a link or an image,
    and the counting server was never asked."""
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="evil.example").first
    alert.wait_for(timeout=60_000)
    page.wait_for_selector(IDLE, timeout=60_000)
    assert text in " ".join(alert.inner_text().replace(WORD_JOINER, "").split()), \
        alert.inner_text()
    links = page.locator('a[href*="evil.example"]')
    assert links.count() == 0, [links.nth(i).evaluate("e => e.outerHTML")
                                for i in range(links.count())]
    assert page.locator(f'img[src*="127.0.0.1:{port}"]').count() == 0
    assert page.locator('[data-testid="stMain"] .stMarkdownColoredText, '
                        '[data-testid="stMain"] span[style*="color"]').filter(
        has_text="alarm").count() == 0
    page.wait_for_load_state("networkidle")
    assert counter.hits == [], counter.hits


@pytest.mark.parametrize("address", ["guide?topic=", "search?corpus="])
def test_a_hostile_address_parameter_is_shown_as_text(served, page, address):
    """The Guide page's topic and a page's corpus, as the issue found them."""
    url, _browser, counter = served
    port = counter.server_address[1]
    text = hostile(port)
    page.goto(f"{url}/{address}{quote(text)}")
    assert_shown_as_text(page, text, port, counter)
