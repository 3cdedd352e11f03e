"""The reader view: a stored document as an HTML page, opened at a hit's section.

``GET /view/{corpus}/{document id}?mark=START-END#s-N`` answers with the document's
stored text laid out part by part (``corpora/reading``): each part a ``<section
id="s-N">``, a heading where a section begins, the characters ``START``–``END`` (the
matched passage; ``search/sources.view_link`` makes the address) in a ``<mark>``. The
browser scrolls to ``#s-N`` by itself. A web page, Markdown, Word, an e-book or a PDF
opens alike, at its section, and nothing of the original's markup is ever rendered:
every character of the text is escaped (a ``<script>`` in it is shown as those
characters), the page holds no script of its own, and it is answered with the originals'
headers (``web/originals``): ``Content-Security-Policy: sandbox`` (an opaque origin,
scripts off, no request anywhere), ``nosniff``, no referrer.

The route sits beside the originals' and the pages, so the door admits it as it admits
them: the login cookie where a password is set, anyone on the open local server.

Example:
    >>> marked_html("a <b> c", 0, 7, (2, 5))
    'a <mark>&lt;b&gt;</mark> c'
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from searchapp.corpora.reading import Block, Reading, read_document
from searchapp.errors import SearchAppError
from searchapp.search.sources import VIEW_PATH
from searchapp.web.originals import SANDBOX, original_link

if TYPE_CHECKING:
    from searchapp.context import App

_MARK = re.compile(r"(\d{1,12})-(\d{1,12})")
STYLE = """
body { font: 16px/1.55 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto;
       padding: 0 1rem; color: #1f2328; }
header { border-bottom: 1px solid #d0d7de; margin-bottom: 1.5rem; }
header p { color: #59636e; font-size: 0.9rem; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; unicode-bidi: plaintext;
        text-align: start; }
.page { color: #59636e; font-size: 0.8rem; margin: 1.5rem 0 0.25rem; }
section { scroll-margin-top: 1rem; }
section:target > h2, section:target > h3, section:target > h4, section:target > h5,
section:target > h6 { background: #ddf4ff; }
mark { background: #fff3a3; padding: 0.1em 0; }
"""


def marked_html(text: str, start: int, end: int, mark: tuple[int, int] | None) -> str:
    """``text[start:end]`` escaped, the part of it inside ``mark`` between ``<mark>`` tags.

    Example:
        >>> marked_html("<script>x</script>", 0, 18, None)
        '&lt;script&gt;x&lt;/script&gt;'
    """
    if mark is None or mark[1] <= start or mark[0] >= end:
        return html.escape(text[start:end])
    a, b = max(start, mark[0]), min(end, mark[1])
    return (html.escape(text[start:a]) + "<mark>" + html.escape(text[a:b]) + "</mark>"
            + html.escape(text[b:end]))


def parse_mark(value: str | None, length: int) -> tuple[int, int] | None:
    """``START-END`` as a span within a text of ``length`` characters; None for anything
    else (a wrong mark is no reason to refuse the page).

    Example:
        >>> parse_mark("3-9", 20), parse_mark("9-3", 20), parse_mark("x", 20)
        ((3, 9), None, None)
    """
    found = _MARK.fullmatch(value or "")
    if not found:
        return None
    start, end = int(found[1]), min(int(found[2]), length)
    return (start, end) if start < end else None


def block_html(reading: Reading, block: Block, mark: tuple[int, int] | None) -> str:
    """One part: its page line where a page begins, its heading, its text."""
    out = [f'<section id="s-{block.anchor}">']
    if block.heading is not None:
        words = marked_html(reading.text, block.start, block.body_start, mark) \
            if block.body_start > block.start else html.escape(block.heading)
        out.append(f'<h{block.level} dir="auto">{words}</h{block.level}>')
    body = block.body_start  # after a heading line, from the next line on
    if block.body_start > block.start and reading.text[body:body + 1] == "\n":
        body += 1
    text = marked_html(reading.text, body, block.end, mark)
    out.append(f'<div class="text" dir="auto">{text}</div>')
    return "".join(out) + "</section>"


def page_html(reading: Reading, mark: tuple[int, int] | None) -> str:
    """The whole reader page: title, a line naming the file, every part in order."""
    title = html.escape(reading.title)
    original = html.escape(original_link(reading.corpus, reading.id, None)) \
        if reading.has_original else None
    about = f"{html.escape(reading.id)} · corpus {html.escape(reading.corpus)}"
    if original:
        about += f' · <a href="{original}">the original file</a>'
    parts, page = [], None
    for block in reading.blocks:
        if block.page is not None and block.page != page:
            parts.append(f'<p class="page" id="page-{int(block.page)}">Page {int(block.page)}'
                         "</p>")
            page = block.page
        parts.append(block_html(reading, block, mark))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{title}</title><style>{STYLE}</style></head><body>"
            f'<header><h1 dir="auto">{title}</h1><p>{about}</p></header><main>'
            + "\n".join(parts) + "</main></body></html>")


def view_response(reading: Reading, mark: str | None) -> Response:
    """The reader page of ``reading`` with the originals' headers (the sandbox)."""
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "private, max-age=300",
               "Referrer-Policy": "no-referrer", "Content-Security-Policy": SANDBOX}
    body = page_html(reading, parse_mark(mark, len(reading.text)))
    return HTMLResponse(body, headers=headers)


def reader_routes(get_app: Callable[[], App] | None = None) -> list[Route]:
    """The reader view's route (the door in front of it checks who asks); ``get_app``: the
    App to read from (default: the process' own, ``web.shared.app``).

    Example:
        >>> [r.path for r in reader_routes()]
        ['/view/{corpus}/{doc_id:path}']
    """
    def view(request: Request) -> Response:
        from searchapp.web import shared

        app = (get_app or shared.app)()
        corpus, doc_id = request.path_params["corpus"], request.path_params["doc_id"]
        try:
            reading = read_document(app, corpus, doc_id)
        except SearchAppError as exc:
            return PlainTextResponse(str(exc), 404, headers={"X-Content-Type-Options": "nosniff"})
        return view_response(reading, request.query_params.get("mark"))

    return [Route(VIEW_PATH + "/{corpus}/{doc_id:path}", view, methods=["GET"])]
