"""The base hint on Streamlit's page (``searchapp.web.base_hint``), through a real ASGI call."""

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from searchapp.web.base_hint import STREAMLIT_MARK, BaseHint, add_hint, hint_script

PAGE = (b"<!DOCTYPE html><html><head><meta charset='UTF-8'/>"
        b"<script>window.prerenderReady = false</script></head><body></body></html>")


def respond(body_parts: list[bytes], content_type: bytes = b"text/html",
            extra: tuple = (), status: int = 200, method: str = "GET",
            base_path: str = "") -> tuple[dict, bytes]:
    """(the response start, the whole body) of BaseHint around an app sending ``body_parts``."""
    async def app(scope, receive, send):
        asked.extend(k for k, _ in scope["headers"])
        length = sum(map(len, body_parts))
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type),
                                (b"content-length", str(length).encode()), *extra]})
        for i, part in enumerate(body_parts):
            await send({"type": "http.response.body", "body": part,
                        "more_body": i < len(body_parts) - 1})

    sent: list[dict] = []
    asked: list[bytes] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": method, "path": "/search",
             "headers": [(b"accept", b"text/html,*/*"), (b"accept-encoding", b"gzip")]}
    asyncio.run(BaseHint(app, base_path)(scope, receive, send))
    assert b"accept-encoding" not in asked or method != "GET"  # a page load: not compressed
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0], body


def header(start: dict, name: bytes) -> bytes | None:
    values = [v for k, v in start["headers"] if k.lower() == name]
    assert len(values) <= 1, f"{name!r} sent {len(values)} times"
    return values[0] if values else None


def test_streamlits_page_gets_the_hint_once_with_its_length_right():
    start, body = respond([PAGE[:20], PAGE[20:50], PAGE[50:]])  # in three parts
    assert body == add_hint(PAGE, "") and body.count(hint_script("")) == 1
    assert body.index(hint_script("")) < body.index(STREAMLIT_MARK)  # before Streamlit runs
    assert header(start, b"content-length") == str(len(body)).encode()


def test_the_hint_names_the_servers_base_path():
    _start, body = respond([PAGE], base_path="/tools/search/")
    assert b'location.origin+"/tools/search/"' in body


def test_other_responses_pass_unchanged():
    login = b"<html><head><style>p{}</style></head><body><form></form></body></html>"
    assert respond([login])[1] == login  # the door's own page: its policy allows no script
    assert respond([PAGE], content_type=b"application/json")[1] == PAGE
    assert respond([PAGE], extra=((b"content-encoding", b"gzip"),))[1] == PAGE
    assert respond([PAGE], method="POST")[1] == PAGE
    head, _ = respond([b""], method="HEAD")  # no body: its length stays the page's
    assert header(head, b"content-length") == b"0"
    assert respond([b""], status=304)[1] == b""


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_any_body_keeps_every_byte_and_gains_at_most_the_hint(before, after):
    page = before + b"<head>" + STREAMLIT_MARK + after
    assert add_hint(page, "").replace(hint_script(""), b"", 1) == page
    plain = before + after
    if STREAMLIT_MARK not in plain:  # not Streamlit's page: not touched
        assert add_hint(plain, "") == plain
