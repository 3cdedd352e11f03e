"""The door's parts in-process: sessions, throttle, cookies, and the middleware in front of a
stand-in app (httpx's ASGI transport), with clocks the tests move.

The real server, real websockets and Streamlit behind the door are in
``test_door_http.py``; here each rule is pinned down fast and exactly.
"""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from searchapp.errors import ConfigError
from searchapp.web import cookies
from searchapp.web.door import Door
from searchapp.web.identity import Principal, header_values
from searchapp.web.middleware import DoorMiddleware
from searchapp.web.routes import door_routes
from searchapp.web.sessions import SessionLimits, SessionRegistry
from searchapp.web.throttle import LoginThrottle

PASSWORD = "correct horse"


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# ---- sessions ---------------------------------------------------------------------------
def test_a_session_ends_after_its_idle_time_unless_used_and_after_its_absolute_time_anyway():
    clock = Clock()
    registry = SessionRegistry(idle_seconds=60, max_seconds=300, clock=clock)
    session = registry.create()
    for _ in range(4):  # used every 50 s: stays, past the idle limit several times over
        clock.now += 50
        assert registry.get(session.id) is session
        registry.touch(session)
    clock.now += 50  # 250 s old, used 50 s ago
    assert registry.get(session.id) is session
    clock.now += 51  # 301 s: over the absolute limit, however busy
    registry.touch(session)
    assert registry.get(session.id) is None
    idle = registry.create()
    clock.now += 60
    assert registry.get(idle.id) is None


def test_ending_a_session_tells_its_listeners_once_and_forgets_it():
    registry = SessionRegistry()
    session, calls = registry.create(), []
    registry.listen(session, lambda: calls.append("a"))
    stop_b = registry.listen(session, lambda: calls.append("b"))
    stop_b()
    assert registry.end(session.id) and not registry.end(session.id)
    assert calls == ["a"] and registry.get(session.id) is None
    registry.listen(session, lambda: calls.append("late"))  # already ended: called at once
    assert calls == ["a", "late"]


def test_streamlit_ids_are_bound_to_the_login_that_made_them():
    registry = SessionRegistry()
    alice, mallory = registry.create(), registry.create()
    registry.bind(alice, "st-1")
    assert registry.owns(alice, "st-1") and not registry.owns(mallory, "st-1")


def test_session_limits_come_from_the_environment_and_bad_ones_say_what_to_write():
    assert SessionLimits.from_env({}) == SessionLimits(8 * 3600, 24 * 3600)
    with pytest.raises(ConfigError, match="SEARCHAPP_SESSION_MAX_SECONDS='1h' is not a whole"):
        SessionLimits.from_env({"SEARCHAPP_SESSION_MAX_SECONDS": "1h"})


# ---- throttle -----------------------------------------------------------------------------
def test_wrong_passwords_wait_twice_as_long_each_time_up_to_five_minutes():
    clock = Clock()
    throttle = LoginThrottle(clock=clock)
    waits = []
    for _ in range(12):
        assert throttle.begin("10.0.0.1")
        throttle.failed("10.0.0.1")
        waits.append(throttle.wait("10.0.0.1"))
        if waits[-1]:
            assert not throttle.begin("10.0.0.1")  # during the wait: not even checked
        clock.now += waits[-1]
    assert waits == [0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300]
    assert throttle.wait("10.0.0.2") == 0  # per client


def test_the_right_password_clears_the_record_and_an_hour_forgets_it():
    clock = Clock()
    throttle = LoginThrottle(clock=clock)
    for _ in range(5):
        throttle.failed("a")
        throttle.failed("b")
    throttle.succeeded("a")
    assert throttle.wait("a") == 0
    clock.now += 3601
    assert throttle.wait("b") == 0 and throttle.begin("b")


def test_one_check_at_a_time_per_client():
    throttle = LoginThrottle()
    assert throttle.begin("a") and not throttle.begin("a") and throttle.begin("b")
    throttle.abandoned("a")
    assert throttle.begin("a")


# ---- cookies ------------------------------------------------------------------------------
def test_a_cookie_is_void_when_edited_signed_by_another_process_or_expired():
    secret, other = cookies.new_secret(), cookies.new_secret()
    value = cookies.sign(secret, "sid", 2000)
    assert cookies.verify(secret, value, now=1999) == "sid"
    assert cookies.verify(other, value, now=1999) is None
    assert cookies.verify(secret, value, now=2000) is None
    assert cookies.verify(secret, value.replace(".2000.", ".2001."), now=1999) is None
    assert cookies.verify(secret, "", now=0) is None
    assert cookies.values_in(['x="1"; searchapp_session=v; y=={;']) == ["v"]


# ---- the middleware in front of a stand-in app ----------------------------------------------
def make_app(door: Door) -> tuple[Starlette, list[str]]:
    """The door's routes and middleware around a stand-in for Streamlit that records what
    reached it."""
    reached: list[str] = []

    async def anything(request):
        reached.append(request.url.path)
        return PlainTextResponse("streamlit")

    app = Starlette(routes=[*door_routes(door), Route("/{path:path}", anything,
                                                     methods=["GET", "POST", "PUT"])],
                    middleware=[Middleware(DoorMiddleware, door=door)])
    return app, reached


def client_for(app, host: str = "127.0.0.1") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(host, 1234)),
                             base_url="http://testserver")


def test_nothing_reaches_the_app_without_a_live_login_and_everything_with_one():
    door = Door.from_env({"SEARCHAPP_PASSWORD": PASSWORD})
    app, reached = make_app(door)

    async def scenario():
        async with client_for(app) as client:
            for path in ("/", "/_stcore/health", "/media/x.csv", "/static/a.js", "/api/v1/x"):
                assert (await client.get(path)).status_code == 401
            assert (await client.get("/healthz")).text == "ok"
            login = await client.post("/login", data={"password": PASSWORD})
            assert login.status_code == 303
            assert (await client.get("/media/x.csv")).text == "streamlit"
            door.sessions.end(door.sessions.get(cookies.verify(
                door.secret, login.cookies["searchapp_session"], time.time())).id)
            assert (await client.get("/media/x.csv")).status_code == 401

    asyncio.run(scenario())
    assert reached == ["/media/x.csv"]


def test_a_second_credential_kind_plugs_in_as_one_reader_and_opens_only_its_paths():
    door = Door.from_env({"SEARCHAPP_PASSWORD": PASSWORD})

    def api_key(scope):
        if header_values(scope, b"authorization") == ["Bearer key-1"]:
            return Principal("api-key", "key 1", paths=("/api/v1/",))
        return None

    door.readers.append(api_key)
    app, reached = make_app(door)

    async def scenario():
        async with client_for(app) as client:
            bearer = {"Authorization": "Bearer key-1"}
            assert (await client.get("/api/v1/search", headers=bearer)).text == "streamlit"
            assert (await client.get("/", headers=bearer)).status_code == 401
            assert (await client.get("/api/v1/search",
                                     headers={"Authorization": "Bearer nope"})).status_code == 401

    asyncio.run(scenario())
    assert reached == ["/api/v1/search"]


def test_without_a_password_the_door_is_open_and_a_bad_setting_closes_it_with_its_message():
    open_app, reached = make_app(Door.from_env({}))
    broken_app, _ = make_app(Door.from_env({"SEARCHAPP_PASSWORD_HASH": "plain"}))

    async def scenario():
        async with client_for(open_app) as client:
            response = await client.get("/search")
            assert response.text == "streamlit"
            assert response.headers["x-content-type-options"] == "nosniff"
        async with client_for(broken_app) as client:
            response = await client.get("/")
            assert response.status_code == 503
            assert "SEARCHAPP_PASSWORD_HASH is not a password hash" in response.text

    asyncio.run(scenario())
    assert reached == ["/search"]


def test_parallel_guesses_hash_at_most_two_at_a_time_and_one_per_client():
    door = Door.from_env({"SEARCHAPP_PASSWORD": PASSWORD})
    running, most, lock = [0], [0], threading.Lock()

    def slow_check(attempt: str) -> bool:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)  # stands in for scrypt's 0.1 s
        with lock:
            running[0] -= 1
        return attempt == PASSWORD

    door.check_password = slow_check
    app, _ = make_app(door)

    async def guess(host: str) -> int:
        async with client_for(app, host) as client:
            return (await client.post("/login", data={"password": "guess"})).status_code

    async def scenario():
        many = await asyncio.gather(*(guess(f"10.0.0.{i}") for i in range(12)))
        same = await asyncio.gather(*(guess("10.0.1.1") for _ in range(4)))
        return many, same

    many, same = asyncio.run(scenario())
    assert most[0] == 2
    assert set(many) <= {401, 429} and many.count(401) >= 2
    assert sorted(same) == [401, 429, 429, 429]  # one checked, the others not even hashed
