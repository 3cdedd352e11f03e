"""What the server trusts, against real servers on 127.0.0.1 (issue 33, classes 2, 3 and 8).

Two servers as ``make run`` starts them (``streamlit run serve.py``), each on a
free port of 127.0.0.1 and stopped by pid:

- the open one (no password, no key), with a small body limit
  (SEARCHAPP_MAX_REQUEST_BYTES=4M) and an audit hook that logs any outgoing
  call to a non-loopback address (``tests/outbound_watch.py``, which also
  watches the process' sockets in /proc);
- one with a password, for logins, cookies and the throttle.

Hosts and origins: a DNS-rebinding request (``Host: evil.example``) is
refused with 421, a write or websocket from another origin (another port of
127.0.0.1 included) with 403, a cookie-carrying write without Origin too.
Throttle: ``X-Forwarded-For`` from 127.0.0.1 does not make a new client.
Limits: a 200 MB body is refused with 413 naming the limit, announced or
chunked, without the server's memory growing by it. Outbound: none of this
(a foreign websocket included) makes the server call anything outside.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.browser import served_app
from tests.outbound_watch import ProcWatch, audit_env, outside_calls
from tests.raw_clients import COOKIE, log_in, rerun, stream

PASSWORD = "correct horse battery staple"
SMALL_LIMIT = 4 << 20


@dataclass
class Server:
    url: str
    pid: int
    folder: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def client(self, cookie: str | None = None) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60,
                            cookies={COOKIE: cookie} if cookie else None)


@pytest.fixture(scope="module")
def open_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("open")
    env = {**audit_env(tmp / "hook"), "SEARCHAPP_MAX_REQUEST_BYTES": "4M"}
    with served_app(tmp / "data", tmp / "server.log", env) as (proc, url):
        yield Server(url, proc.pid, tmp)


@pytest.fixture(scope="module")
def locked_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("locked")
    with served_app(tmp / "data", tmp / "server.log", {"SEARCHAPP_PASSWORD": PASSWORD}) \
            as (proc, url):
        yield Server(url, proc.pid, tmp)


# ---- class 2: hosts ----------------------------------------------------------------------
def test_a_dns_rebinding_host_is_refused_on_the_open_server(open_server):
    with open_server.client() as client:
        assert client.post("/api/v1/corpora", json={"name": "mine"}).status_code == 201
        for method, path in [("GET", "/api/v1/corpora"), ("GET", "/api/v1/corpora/mine"),
                             ("DELETE", "/api/v1/corpora/mine"), ("GET", "/"),
                             ("POST", "/api/v1/snapshots")]:
            response = client.request(method, path, headers={"Host": "evil.example"})
            assert response.status_code == 421, (method, path, response.text)
        problem = client.get("/api/v1/corpora", headers={"Host": "evil.example:8501"}).json()
        assert problem["type"] == "urn:searchapp:problem:unknown-host"
        assert "SEARCHAPP_ALLOWED_HOSTS" in problem["detail"]
        # the corpus is still there; the loopback names all answer
        for host in ("127.0.0.1", "localhost", f"localhost:{open_server.port}"):
            assert client.get("/api/v1/corpora/mine", headers={"Host": host}).status_code == 200
    with pytest.raises(websockets.exceptions.InvalidStatus), websockets.sync.client.connect(
            open_server.url.replace("http", "ws") + "/_stcore/stream",
            additional_headers={"Host": "evil.example"}, open_timeout=30):
        pass


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host=st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,6}){1,2}(:[0-9]{1,5})?",
                          fullmatch=True).filter(lambda h: "localhost" not in h))
def test_no_foreign_host_reaches_the_open_server(open_server, host):
    with open_server.client() as client:
        assert client.get("/api/v1/corpora", headers={"Host": host}).status_code == 421


# ---- class 2: origins --------------------------------------------------------------------
def test_writes_from_another_origin_are_refused_and_from_this_one_pass(open_server):
    own = open_server.url
    foreign = [f"http://127.0.0.1:{open_server.port + 1}", "http://evil.example",
               f"https://127.0.0.1:{open_server.port}", "null", f"http://localhost:{open_server.port}"]
    with open_server.client() as client:
        for origin in foreign:
            response = client.post("/api/v1/corpora", json={"name": "x"},
                                   headers={"Origin": origin})
            assert response.status_code == 403, origin
            assert response.json()["type"] == "urn:searchapp:problem:cross-site"
        # another site's plain form POST (no preflight) cannot queue a backup
        form = client.post("/api/v1/snapshots", content=b"a=1", headers={
            "Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"})
        assert form.status_code == 403
        assert client.post("/api/v1/corpora", json={"name": "x"}, headers={
            "Referer": "http://evil.example/page"}).status_code == 403
        assert client.post("/api/v1/corpora", json={"name": "ok1"},
                           headers={"Origin": own}).status_code == 201
        assert client.post("/api/v1/corpora", json={"name": "ok2"},
                           headers={"Referer": own + "/upload"}).status_code == 201
        assert client.post("/api/v1/corpora", json={"name": "ok3"}).status_code == 201  # curl
        assert client.get("/api/v1/corpora", headers={"Origin": "http://evil.example"}
                          ).status_code == 200  # reading is not a write (CORS keeps it unread)


def test_a_websocket_from_another_port_of_the_same_host_is_refused(locked_server):
    with locked_server.client() as client:
        cookie = log_in(client, PASSWORD)
    for origin in (f"http://127.0.0.1:{locked_server.port + 1}", "http://evil.example", "null"):
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused, \
                stream(locked_server.url, cookie, origin=origin):
            pass
        assert refused.value.response.status_code == 403, origin
    with stream(locked_server.url, cookie, origin=locked_server.url) as ws:
        assert rerun(ws).session_id


def test_cookie_authenticated_api_writes_need_this_origin(locked_server):
    with locked_server.client() as client:
        cookie = log_in(client, PASSWORD)
    with locked_server.client(cookie) as client:
        assert client.get("/api/v1/corpora").status_code == 200
        no_origin = client.post("/api/v1/corpora", json={"name": "csrf"})
        assert no_origin.status_code == 403, no_origin.text
        assert "cookies without Origin" in no_origin.json()["detail"]
        other_port = client.post("/api/v1/corpora", json={"name": "csrf"}, headers={
            "Origin": f"http://127.0.0.1:{locked_server.port + 1}"})
        assert other_port.status_code == 403
        assert client.post("/api/v1/corpora", json={"name": "mine"},
                           headers={"Origin": locked_server.url}).status_code == 201


# ---- class 3: the throttle keys on the real peer ------------------------------------------
def test_x_forwarded_for_from_an_untrusted_peer_does_not_dodge_the_throttle(locked_server):
    statuses = []
    with locked_server.client() as client:
        for i in range(8):
            response = client.post("/login", data={"password": f"guess {i}"},
                                   headers={"X-Forwarded-For": f"198.51.100.{i + 1}"})
            statuses.append(response.status_code)
    assert 429 in statuses, statuses
    assert statuses[:3] == [401, 401, 401]


# ---- class 3: request bodies --------------------------------------------------------------
def _rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def _raw(server: Server, head: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head.encode())
    return sock


def _response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 60:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_a_200_mb_body_announced_is_refused_before_it_is_read(open_server):
    _, peak_before = _rss_kb(open_server.pid)
    start = time.monotonic()
    with _raw(open_server, f"PUT /api/v1/corpora/x/documents HTTP/1.1\r\nHost: 127.0.0.1:"
              f"{open_server.port}\r\nContent-Type: application/json\r\nContent-Length: "
              f"{200 << 20}\r\n\r\n") as sock:
        sock.sendall(b"{" * 65536)
        answer = _response(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"the limit is 4 MiB (SEARCHAPP_MAX_REQUEST_BYTES)" in answer
    assert time.monotonic() - start < 5
    assert _rss_kb(open_server.pid)[1] - peak_before < 50_000


def test_a_chunked_body_is_refused_once_it_passes_the_limit(open_server):
    _, peak_before = _rss_kb(open_server.pid)
    sent = 0
    with _raw(open_server, f"POST /api/v1/corpora HTTP/1.1\r\nHost: 127.0.0.1:"
              f"{open_server.port}\r\nContent-Type: application/json\r\n"
              "Transfer-Encoding: chunked\r\n\r\n") as sock:
        piece = b"x" * (1 << 20)
        try:
            while sent < 200 << 20:
                sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
                sent += len(piece)
        except OSError:
            pass  # the server answered and closed: the rest of the body is not read
        answer = _response(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"the limit is 4 MiB" in answer
    assert sent < 100 << 20, f"sent {sent >> 20} MiB before the refusal"
    assert _rss_kb(open_server.pid)[1] - peak_before < 50_000


def test_uploads_through_the_pages_keep_streamlits_own_limit(open_server):
    with open_server.client() as client:
        upload = client.put("/_stcore/upload_file/some-session/file-1",
                            content=b"x" * (SMALL_LIMIT + 1), headers={"Origin": open_server.url})
        api = client.post("/api/v1/corpora", content=b"x" * (SMALL_LIMIT + 1))
    assert upload.status_code != 413  # Streamlit's answer (no such session), not the limit's
    assert api.status_code == 413 and "4 MiB" in api.json()["detail"]


# ---- class 8: nothing leaves the machine ------------------------------------------------
def test_probes_and_foreign_websockets_make_no_outside_connection(open_server):
    ws_url = open_server.url.replace("http", "ws") + "/_stcore/stream"
    opened = []
    with ProcWatch(open_server.pid) as watch:
        for origin in ("http://evil.example", f"http://127.0.0.1:{open_server.port + 1}",
                       "http://10.1.2.3:8501", "http://[::1]:1"):
            try:
                with websockets.sync.client.connect(
                        ws_url, additional_headers={"Origin": origin}, open_timeout=30,
                        subprotocols=["streamlit"]):
                    opened.append(origin)
            except websockets.exceptions.InvalidStatus:
                pass
        with stream(open_server.url, None, origin=open_server.url) as ws:
            assert rerun(ws).session_id  # the app's own page: a whole run
        with open_server.client() as client:
            for path in ("/", "/_stcore/health", "/_stcore/host-config", "/api/v1/corpora",
                         "/api/v1/docs", "/healthz"):
                client.get(path)
    assert watch.polls > 0
    assert outside_calls(open_server.folder / "hook") == []
    assert watch.remote == []
    assert opened == []
