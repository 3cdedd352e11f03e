"""The site guard's rules on generated hosts, origins and headers (``searchapp/web/sites.py``).

The live servers of ``test_server_trust.py`` show the guard in place; these
properties show the rule itself holds for any spelling: only this scheme,
host and port is this origin, and only the loopback names (and those allowed)
are hosts the open server answers to.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchapp.config import ConfigError, allowed_hosts, max_request_bytes, trusted_proxies
from searchapp.web.body_limit import BodyLimits
from searchapp.web.sites import HostPolicy, origin_of, refusal

OWN = ("http", "127.0.0.1", 8501)
LOOPBACK = HostPolicy.for_server((), beyond_loopback=False)

names = st.from_regex(r"[a-z][a-z0-9-]{0,15}(\.[a-z0-9-]{1,10}){0,3}", fullmatch=True)
ports = st.integers(1, 65535)
schemes = st.sampled_from(["http", "https"])
methods = st.sampled_from(["POST", "PUT", "PATCH", "DELETE"])


def scope(method: str = "POST", host: str = "127.0.0.1:8501", scheme: str = "http",
          kind: str = "http", **headers: str) -> dict:
    pairs = [(b"host", host.encode())] + [
        (name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return {"type": kind, "method": method, "scheme": scheme, "path": "/api/v1/corpora",
            "headers": pairs}


@given(scheme=schemes, name=names, port=ports, method=methods)
def test_any_origin_but_this_one_is_refused(scheme, name, port, method):
    origin = f"{scheme}://{name}:{port}"
    result = refusal(scope(method, origin=origin, cookie="s=1"), LOOPBACK)
    if (scheme, name, port) == OWN:
        assert result is None
    else:
        assert result is not None and result.status == 403


@given(port=ports.filter(lambda p: p != 8501), method=methods)
def test_another_port_of_the_same_host_is_another_site_for_writes_and_websockets(port, method):
    other = f"http://127.0.0.1:{port}"
    assert refusal(scope(method, origin=other), LOOPBACK).status == 403
    assert refusal(scope("GET", kind="websocket", origin=other), LOOPBACK).status == 403
    assert refusal(scope(method, referer=other + "/x", cookie="s=1"), LOOPBACK).status == 403


@given(spelling=st.sampled_from(["http://127.0.0.1:8501", "HTTP://127.0.0.1:8501",
                                 "http://127.0.0.1:8501/", "http://127.0.0.1.:8501"]),
       method=methods)
def test_this_origin_in_any_spelling_passes(spelling, method):
    assert refusal(scope(method, origin=spelling, cookie="s=1"), LOOPBACK) is None


@given(name=names.filter(lambda n: n != "localhost" and not n.endswith(".localhost")),
       port=st.none() | ports)
def test_the_open_server_answers_only_to_loopback_names(name, port):
    host = name if port is None else f"{name}:{port}"
    result = refusal(scope("GET", host=host), LOOPBACK)
    assert result is not None and result.status == 421
    assert HostPolicy.for_server((name,), beyond_loopback=False).allows(host)
    for loopback in ("localhost", "127.0.0.1", "[::1]", "127.1.2.3"):
        assert LOOPBACK.allows(loopback if port is None else f"{loopback}:{port}")


@given(header=st.text(max_size=40))
def test_a_malformed_host_is_refused_never_an_error(header):
    try:
        encoded = header.encode("latin-1")
    except UnicodeEncodeError:
        return
    result = refusal({"type": "http", "method": "GET", "scheme": "http", "path": "/",
                      "headers": [(b"host", encoded)]}, LOOPBACK)
    assert result is None or result.status == 421


def test_no_origin_and_no_cookie_is_a_script_and_passes_but_cookies_need_an_origin():
    assert refusal(scope("DELETE", authorization="Bearer sa_x"), LOOPBACK) is None
    assert refusal(scope("DELETE", cookie="searchapp_session=x"), LOOPBACK).status == 403
    assert refusal(scope("GET", cookie="searchapp_session=x"), LOOPBACK) is None
    assert refusal(scope("POST", origin="null"), LOOPBACK).status == 403
    assert refusal(scope("POST", sec_fetch_site="same-site",
                         origin="http://127.0.0.1:8501"), LOOPBACK).status == 403


def test_behind_a_tls_proxy_the_https_origin_is_this_one():
    proxied = scope("POST", host="search.example.org", scheme="https",
                    origin="https://search.example.org")
    policy = HostPolicy.for_server(("search.example.org",), beyond_loopback=True)
    assert refusal(proxied, policy) is None
    assert refusal({**proxied, "scheme": "http"}, policy).status == 403  # proxy not trusted
    assert origin_of("https://search.example.org/x") == ("https", "search.example.org", 443)


def test_the_settings_are_read_and_checked():
    assert allowed_hosts({"SEARCHAPP_ALLOWED_HOSTS": "a.example, B.example:8501"}) == (
        "a.example", "b.example")
    with pytest.raises(ConfigError, match="not a host name"):
        allowed_hosts({"SEARCHAPP_ALLOWED_HOSTS": "http://a.example/"})
    with pytest.raises(ConfigError, match="not an IP address"):
        trusted_proxies({"SEARCHAPP_TRUSTED_PROXIES": "proxy.lan"})
    with pytest.raises(ConfigError, match="not a size"):
        max_request_bytes({"SEARCHAPP_MAX_REQUEST_BYTES": "lots"})
    limits = BodyLimits.for_server(max_request_bytes({}), 200)
    assert limits.for_path("/api/v1/x") == 64 << 20
    assert limits.for_path("/_stcore/upload_file/s/f") == (200 << 20) + (1 << 20)
