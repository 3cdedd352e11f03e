"""The door against a real server, with raw clients: nothing reaches Streamlit without a login.

One app server (``streamlit run serve.py`` as ``make run`` starts it, with
SEARCHAPP_PASSWORD set, on a free port of 127.0.0.1, stopped by pid) serves
most tests; httpx speaks HTTP, ``websockets`` speaks Streamlit's stream
protocol (``tests/raw_clients.py``). Two more servers: one whose logins
expire after 2 seconds, one on a broken database for the error boundary.

Throttle tests send ``X-Forwarded-For`` so each has a client address of its own: the
module's server trusts that header from 127.0.0.1, as from a reverse proxy there
(SEARCHAPP_TRUSTED_PROXIES; without it the header is ignored, ``test_server_trust.py``).
Writes (uploads) send the ``Origin`` a browser sends with every fetch that writes.
"""

from __future__ import annotations

import os
import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import websockets

from tests.browser import REPO, served_app
from tests.markup import shown
from tests.raw_clients import COOKIE, log_in, read_run, rerun, send, stream

PASSWORD = "correct horse battery staple"
LOGIN_FIRST = "Log in first: /login\n"
# Every family of routes Streamlit serves, asked for by code (fetch, XHR, upload): 401.
FETCHES = [
    ("GET", "/_stcore/health"), ("GET", "/_stcore/host-config"), ("GET", "/_stcore/metrics"),
    ("PUT", "/_stcore/upload_file/0f8e-session/file-1"),
    ("DELETE", "/_stcore/upload_file/0f8e-session/file-1"),
    ("GET", "/_stcore/bidi-components/x/index.js"), ("POST", "/_stcore/agent/sessions"),
    ("GET", "/media/3a1f0b2c.csv"), ("GET", "/static/js/index.js"),
    ("GET", "/component/some.component/index.html"), ("GET", "/app/static/logo.png"),
    ("GET", "/favicon.png"), ("GET", "/search"),
    ("PUT", "/login"), ("DELETE", "/healthz"),  # the public paths are public for their routes
]
# What a browser navigates to: redirected to the login page, with the way back.
NAVIGATIONS = ["/", "/search", "/jobs?corpus=faq", "/media/3a1f0b2c.csv"]


@dataclass
class Server:
    url: str
    data: Path
    log: Path

    def client(self, cookie: str | None = None, **kw) -> httpx.Client:
        cookies = {COOKIE: cookie} if cookie else None
        return httpx.Client(base_url=self.url, cookies=cookies, timeout=60, **kw)

    def app_log(self) -> str:
        path = self.data / "app.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("door")
    with served_app(tmp / "data", tmp / "streamlit.log", {
            "SEARCHAPP_PASSWORD": PASSWORD, "SEARCHAPP_TRUSTED_PROXIES": "127.0.0.1"}) \
            as (_proc, url):
        yield Server(url, tmp / "data", tmp / "streamlit.log")


@pytest.fixture(scope="module")
def first_run(server):
    """A login whose page ran once: the App exists, the worker was started. (cookie, Run)"""
    with server.client() as client:
        cookie = log_in(client, PASSWORD)
    with stream(server.url, cookie) as ws:
        return cookie, rerun(ws)


def assert_refused(server: Server, cookie: str | None) -> None:
    """Every route family: fetches 401 with the door's text, navigations 303 to the login."""
    with server.client(cookie) as client:
        for method, path in FETCHES:
            response = client.request(method, path, headers={"Accept": "*/*",
                                                             "Origin": server.url})
            assert (response.status_code, response.text) == (401, LOGIN_FIRST), (method, path)
        for path in NAVIGATIONS:
            response = client.get(path, headers={"Sec-Fetch-Mode": "navigate",
                                                 "Accept": "text/html"})
            assert response.status_code == 303, path
            assert response.headers["location"] == "/login?next=" + path.replace(
                "?", "%3F").replace("=", "%3D"), path
    for bad in ([cookie] if cookie else [None]):
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused, \
                stream(server.url, bad):
            pass
        assert refused.value.response.status_code == 403


# ---- without a login, nothing -------------------------------------------------------
def test_every_route_family_without_a_cookie_is_refused_before_streamlit(server):
    assert_refused(server, None)
    with server.client() as client:
        assert client.get("/healthz").text == "ok"  # the one public page besides the login
        login = client.get("/login")
        assert login.status_code == 200 and 'name="password"' in login.text


def test_forged_and_edited_cookies_are_refused(server):
    with server.client() as client:
        real = log_in(client, PASSWORD)
    session_id, expires, mac = real.split(".")
    forged = [
        "x" * 43 + f".{expires}." + "y" * 43,                       # made up
        f"{session_id}.{expires}.{mac[:-2]}AA",                      # signature edited
        f"{session_id}.{int(expires) + 86400}.{mac}",                # expiry pushed back
        f"{session_id[:-1]}{'A' if session_id[-1] != 'A' else 'B'}.{expires}.{mac}",
    ]
    for cookie in forged:
        assert_refused(server, cookie)


def test_a_login_opens_every_route_family_to_streamlit(server):
    with server.client() as client:
        cookie = log_in(client, PASSWORD)
    with server.client(cookie) as client:
        assert client.get("/_stcore/health").text == "ok"  # Streamlit's own answer
        index = client.get("/", headers={"Sec-Fetch-Mode": "navigate"})
        assert index.status_code == 200 and "<noscript>" in index.text
        assert client.get("/media/3a1f0b2c.csv").status_code == 404  # Streamlit: no such file
        # A valid cookie is still no key to someone else's Streamlit session:
        upload = client.put("/_stcore/upload_file/0f8e-session/file-1", content=b"x",
                            headers={"Origin": server.url})
        assert (upload.status_code, upload.text) == (
            403, "This upload belongs to another session.\n")


def test_the_cookie_is_http_only_strict_and_expires_and_pages_carry_security_headers(server):
    with server.client() as client:
        form = client.get("/login")
        login = client.post("/login", data={"password": PASSWORD})
        set_cookie = login.headers["set-cookie"]
        assert client.get("/login").headers["location"] == "/"  # logged in: straight on
    assert re.fullmatch(rf"{COOKIE}=[\w-]{{43}}\.\d+\.[\w-]{{43}}; Max-Age=86\d{{3}}; Path=/; "
                        r"HttpOnly; SameSite=Strict", set_cookie), set_cookie
    assert form.headers["content-security-policy"].startswith("default-src 'none'; style-src")
    assert "frame-ancestors 'none'" in form.headers["content-security-policy"]
    assert form.headers["cache-control"] == "no-store"
    assert "<script" not in form.text and not re.search(r"\b(src|href)=", form.text)
    with server.client(login.cookies[COOKIE]) as client:
        index = client.get("/")
    for response in (form, index):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "SAMEORIGIN"
        assert response.headers["referrer-policy"] == "same-origin"


def test_a_login_form_sent_from_another_site_is_refused_and_next_stays_on_this_site(server):
    cross_site = [{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                  {"Origin": "null"}, {"Referer": "http://evil.example/page"}]
    with server.client() as client:
        for headers in cross_site:
            response = client.post("/login", data={"password": PASSWORD}, headers=headers)
            assert response.status_code == 403 and COOKIE not in response.headers.get(
                "set-cookie", ""), headers
        same = client.post("/login", headers={"Origin": server.url,
                                              "Sec-Fetch-Site": "same-origin"},
                           data={"password": PASSWORD, "next": "//evil.example/x"})
    assert same.status_code == 303 and same.headers["location"] == "/"


# ---- logout ----------------------------------------------------------------------------
def test_logout_ends_the_login_server_side_and_closes_its_websocket(server):
    with server.client() as client:
        cookie = log_in(client, PASSWORD)
    with server.client(cookie) as client, stream(server.url, cookie) as ws:
        rerun(ws)
        # A link without this login's token (another site's <img src=/logout>) does nothing:
        assert client.get("/logout").headers["location"] == "/"
        assert client.post("/logout", headers={"Origin": "http://evil.example"}
                           ).status_code == 403  # the site guard: another site's form
        assert client.get("/_stcore/health").text == "ok"
        out = client.post("/logout", headers={"Origin": server.url})
        assert (out.status_code, out.headers["location"]) == (303, "/login?logged_out=1")
        assert out.headers["set-cookie"].startswith(f"{COOKIE}=; Max-Age=0")
        closed = wait_closed(ws, timeout=5)  # at once, not at the door's 30 s re-check
        assert closed.rcvd is not None and closed.rcvd.code == 1008
    assert_refused(server, cookie)  # the old cookie, copied anywhere, opens nothing


def test_the_log_out_button_sends_the_browser_to_logout_with_its_token(server):
    with server.client() as client:
        cookie = log_in(client, PASSWORD)
    with stream(server.url, cookie) as ws:
        run = rerun(ws)
        [button] = [e.button for e in run.elements() if e.WhichOneof("type") == "button"
                    and e.button.label == "Log out"]
        click = _click(button.id)
        ws.send(click.SerializeToString())
        redirects = [m.auth_redirect.url for m in read_run(ws).messages
                     if m.WhichOneof("type") == "auth_redirect"]
    assert len(redirects) == 1 and redirects[0].startswith("/logout?t=")
    with server.client(cookie) as client:
        assert client.get(redirects[0]).headers["location"] == "/login?logged_out=1"
    assert_refused(server, cookie)


def wait_closed(ws, timeout: float) -> websockets.exceptions.ConnectionClosed:
    """Read what was already on its way until the server closes the websocket (TimeoutError
    if it stays open ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            ws.recv(timeout=max(deadline - time.monotonic(), 0.01))
        except websockets.exceptions.ConnectionClosed as closed:
            return closed


def _click(widget_id: str):
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    msg.rerun_script.query_string = ""
    state = msg.rerun_script.widget_states.widgets.add()
    state.id = widget_id
    state.trigger_value = True
    return msg


# ---- Streamlit's session ids belong to the login that made them ----------------------
def test_another_login_cannot_resume_or_upload_into_a_streamlit_session(server):
    with server.client() as client:
        alice, mallory = log_in(client, PASSWORD), log_in(client, PASSWORD)
    with stream(server.url, alice) as ws:
        theirs = rerun(ws).session_id
    assert theirs
    with stream(server.url, mallory, resume=theirs) as ws:
        mine = rerun(ws).session_id
    assert mine and mine != theirs  # a fresh session, not Alice's
    with stream(server.url, alice, resume=theirs) as ws:
        assert rerun(ws).session_id == theirs  # Alice herself resumes hers
    with server.client(mallory) as client:
        upload = client.put(f"/_stcore/upload_file/{theirs}/file-1", content=b"x",
                            headers={"Origin": server.url})
    assert (upload.status_code, upload.text) == (403, "This upload belongs to another session.\n")
    with server.client(alice) as client:
        upload = client.put(f"/_stcore/upload_file/{theirs}/file-1", content=b"x",
                            headers={"Origin": server.url})
    assert "another session" not in upload.text  # past the door (Streamlit's XSRF check then)


# ---- clear cache: undeliverable before a login, harmless after --------------------------
def test_clear_cache_cannot_be_sent_before_login_and_does_not_load_a_second_app(server,
                                                                                first_run):
    with pytest.raises(websockets.exceptions.InvalidStatus), stream(server.url, None):
        pass  # no websocket without a login, so no "clear cache" message can be delivered
    cookie, _run = first_run
    assert _count(server, "warm-up started") == 1
    with stream(server.url, cookie) as ws:
        rerun(ws)
        send(ws, clear_cache=True)
        after = rerun(ws)
    assert "Upload" in after.texts()
    assert _count(server, "created the process-wide App") == 1
    assert _count(server, "warm-up started") == 1  # no second App, no second model load
    apps = set(re.findall(r"warm-up started: loading the models \(App (\w+)\)", server.app_log()))
    assert len(apps) == 1


def _count(server: Server, text: str) -> int:
    return server.app_log().count(text)


# ---- the worker and the files ------------------------------------------------------------
def test_the_spawned_worker_has_no_password_in_its_environment(server, first_run):
    pid = int((server.data / "worker.pid").read_text())
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    names = {entry.split(b"=", 1)[0].decode() for entry in environ if entry}
    assert "SEARCHAPP_DATA_DIR" in names  # it is the worker, with its settings
    assert not names & {"SEARCHAPP_PASSWORD", "SEARCHAPP_PASSWORD_HASH"}
    assert PASSWORD.encode() not in b"".join(environ)


def test_the_data_folder_and_every_file_in_it_are_private(server, first_run):
    assert os.stat(server.data).st_mode & 0o777 == 0o700
    names = set()
    for path in server.data.rglob("*"):
        mode = path.stat().st_mode & 0o777
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
        names.add(path.name)
    assert {"searchapp.db", "searchapp.db-wal", "searchapp.db-shm", "app.log", "worker.log",
            "worker.pid"} <= names


# ---- wrong passwords slow down --------------------------------------------------------------
def test_wrong_passwords_slow_down_per_client_and_the_right_one_works_after_the_wait(server):
    me, other = ({"X-Forwarded-For": f"198.51.100.{n}", "Origin": server.url} for n in (7, 8))
    with server.client() as client:
        for attempt in (1, 2):
            wrong = client.post("/login", data={"password": "guess"}, headers=me)
            assert wrong.status_code == 401 and "retry-after" not in wrong.headers, attempt
        third = client.post("/login", data={"password": "guess"}, headers=me)
        assert third.status_code == 401 and third.headers["retry-after"] == "1"
        assert "Wait 1 s before the next try." in third.text
        started = time.monotonic()
        early = client.post("/login", data={"password": PASSWORD}, headers=me)
        assert early.status_code == 429 and early.headers["retry-after"] == "1"
        assert COOKIE not in early.headers.get("set-cookie", "")  # not even checked
        assert client.post("/login", data={"password": PASSWORD},
                           headers=other).status_code == 303  # another client: no wait
        while True:  # a polite client waits what Retry-After says
            response = client.post("/login", data={"password": PASSWORD}, headers=me)
            if response.status_code != 429:
                break
            time.sleep(float(response.headers["retry-after"]))
        assert response.status_code == 303 and COOKIE in response.headers["set-cookie"]
        assert time.monotonic() - started >= 0.5


# ---- logins end by themselves -----------------------------------------------------------------
def test_an_expired_login_cookie_opens_nothing_and_its_websocket_is_closed(tmp_path):
    with served_app(tmp_path / "data", tmp_path / "streamlit.log",
                    {"SEARCHAPP_PASSWORD": PASSWORD, "SEARCHAPP_SESSION_MAX_SECONDS": "3"}) \
            as (_proc, url):
        server = Server(url, tmp_path / "data", tmp_path / "streamlit.log")
        with server.client() as client:
            cookie = log_in(client, PASSWORD)
        logged_in = time.monotonic()
        with stream(url, cookie) as ws, server.client(cookie) as client:
            assert client.get("/_stcore/health").text == "ok"
            while client.get("/_stcore/health").status_code == 200:
                assert time.monotonic() - logged_in < 30
                time.sleep(0.2)
            assert time.monotonic() - logged_in >= 1.9  # the cookie says whole seconds
            with pytest.raises(websockets.exceptions.ConnectionClosed):
                rerun(ws)  # opened before the expiry: the next message finds the login gone
        assert_refused(server, cookie)


# ---- a page's unexpected error: one line in the page, the traceback in the log ----------
def test_an_unexpected_error_shows_one_line_with_a_reference_and_logs_the_traceback(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    planted = tmp_path / "planted"  # a bug planted in the server process only, by sitecustomize
    planted.mkdir()
    (planted / "sitecustomize.py").write_text(
        "import searchapp.store.repo as repo\n"
        "def summaries(*args, **kwargs):\n"
        "    raise RuntimeError('a bug planted by the test: file is not a database')\n"
        "repo.summaries = summaries\n")
    path = os.pathsep.join(p for p in (str(planted), os.environ.get("PYTHONPATH", "")) if p)
    with served_app(data, tmp_path / "streamlit.log", env={"PYTHONPATH": path}) as (_proc, url), \
            stream(url, None) as ws:
        run = rerun(ws)
    texts = run.texts()
    [line] = [shown(t) for t in texts if t.startswith("Something went wrong")]
    reference = re.fullmatch(r"Something went wrong \(reference ([0-9a-f]{6})\); the details "
                             rf"are in {re.escape(str(data / 'app.log'))}\.", line).group(1)
    assert not [t for t in texts if t.startswith("EXCEPTION")]
    everything = b"".join(m.SerializeToString() for m in run.messages)
    for leak in (b"Traceback", b"not a database", b"sqlalchemy", b'File "'):
        assert leak not in everything, leak
    log = (data / "app.log").read_text()
    assert f"[ref {reference}]" in log and "Traceback" in log
    assert "file is not a database" in log
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"  # what slips past: no details either
