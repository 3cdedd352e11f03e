"""The original of a document read from a file, one click from its hit, behind the door.

``GET /originals/{corpus}/{document id}`` answers with the file as it was
ingested (``corpora/originals``): a PDF inline, so the browser's own viewer
opens it (the results list links to ``...#page=4``); plain text, Markdown,
reStructuredText and e-mail inline as ``text/plain``; everything else (HTML,
SVG inside an archive, Word, slides) as a download. The type comes from the
stored bytes (a file is served as a PDF only if it is one), the file from the
app's own record of the document (``documents.original_of``), never from its
metadata. No original can run script in the app's origin: every answer, the
PDF viewer's too, carries ``X-Content-Type-Options: nosniff`` (the browser keeps
the type we send) and a ``Content-Security-Policy: sandbox`` that gives the
response an opaque origin with scripts off, so even an HTML file opened
directly reaches neither the app's cookies nor its API.

The route sits with the pages, so the door admits it as it admits them: the
login cookie where a password is set, anyone on the open local server.

Example:
    >>> disposition("inline", "Ünïcode guide.pdf")
    'inline; filename="_n_code guide.pdf"; filename*=UTF-8\\'\\'%C3%9Cn%C3%AFcode%20guide.pdf'
"""

from __future__ import annotations

import re
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from searchapp.errors import SearchAppError

ORIGINALS_PATH = "/originals"
SNIFF_BYTES = 8192
SANDBOX = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
_UNSAFE_NAME = re.compile(r'[^A-Za-z0-9 ._()+-]')


def disposition(kind: str, filename: str) -> str:
    """A Content-Disposition with an ASCII fallback name and the exact UTF-8 name."""
    fallback = _UNSAFE_NAME.sub("_", filename)[:150] or "file"
    return f'{kind}; filename="{fallback}"; filename*=UTF-8\'\'{quote(filename, safe="")}'


def served_type(path) -> tuple[str, str]:
    """(media type, disposition) for a stored original, from its own bytes alone: a PDF
    only when the bytes are one (``%PDF-``), plain text only when they are UTF-8 text that
    is not markup (HTML, SVG, XML: a download); anything else is a download. No name and
    no metadata value makes a file a PDF or text.

    Example:
        >>> import tempfile, pathlib
        >>> page = pathlib.Path(tempfile.mkdtemp()) / "x"
        >>> _ = page.write_bytes(b"<html><script>alert(1)</script>")
        >>> served_type(page)
        ('application/octet-stream', 'attachment')
    """
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    if head.startswith(b"%PDF-"):
        return "application/pdf", "inline"
    if _plain_text(head):
        return "text/plain; charset=utf-8", "inline"
    return "application/octet-stream", "attachment"


def _plain_text(head: bytes) -> bool:
    """Whether a file's first bytes are UTF-8 text (a cut character at the end allowed)
    that does not start as markup."""
    if b"\0" in head or head.lstrip().startswith(b"<"):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and len(head) == SNIFF_BYTES
    return True


def original_response(path, filename: str) -> Response:
    """The stored file ``path`` answered with the type its bytes show (``served_type``),
    always in the sandbox and with ``nosniff``; ``filename`` names the download."""
    media_type, kind = served_type(path)
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "private, max-age=300",
               "Referrer-Policy": "no-referrer", "Content-Security-Policy": SANDBOX,
               "Content-Disposition": disposition(kind, filename or "original")}
    return FileResponse(path, media_type=media_type, headers=headers)


def download_name(doc_id: str) -> str:
    """The name a document's original is saved under: the last part of its id (the file's
    path, as the app recorded it).

    Example:
        >>> download_name("guide/intro.md")
        'intro.md'
    """
    return doc_id.rsplit("/", 1)[-1]


def original_routes() -> list[Route]:
    """The route serving originals (the door in front of it checks who asks)."""
    from searchapp.corpora import documents
    from searchapp.web import shared

    async def original(request: Request) -> Response:
        corpus, doc_id = request.path_params["corpus"], request.path_params["doc_id"]
        try:
            path, doc = documents.original_of(shared.app(), corpus, doc_id)
        except SearchAppError as exc:
            return PlainTextResponse(str(exc), 404)
        return original_response(path, download_name(doc.id))

    return [Route(ORIGINALS_PATH + "/{corpus}/{doc_id:path}", original, methods=["GET"])]


def original_link(corpus: str, doc_id: str, source: dict | None) -> str:
    """The address that opens a hit's original, at its page for a PDF.

    Example:
        >>> original_link("docs", "guide/a b.pdf", {"type": "pdf", "page": 4})
        '/originals/docs/guide/a%20b.pdf#page=4'
    """
    link = f"{ORIGINALS_PATH}/{quote(corpus, safe='')}/{quote(doc_id, safe='/')}"
    if source and source.get("type") == "pdf" and source.get("page"):
        link += f"#page={int(source['page'])}"
    return link
