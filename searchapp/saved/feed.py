"""A saved search's Atom feed (RFC 4287), at the private address ``/feeds/saved/<token>.atom``.

The token is the feed's only credential (a feed reader sends no login), so the web
server answers this path before its login door, and a wrong token is a 404 like any
unknown page. The entries are the saved search's recent news, newest first, each linked
to the document's reader view; titles and summaries are escaped as XML text (characters
XML 1.0 cannot hold are dropped), so a document's text never becomes markup.

Example:
    >>> xml_text("a <b> & \\x00c")
    'a <b> & c'
"""

from __future__ import annotations

import re
from datetime import datetime
from xml.etree import ElementTree as ET

from searchapp.context import App
from searchapp.saved.news import title_of
from searchapp.search.sources import view_link
from searchapp.store import saved_searches as rows
from searchapp.store.schema import Corpus

ATOM = "http://www.w3.org/2005/Atom"
ENTRIES = 50
SUMMARY_CHARS = 400
TOKEN = re.compile(r"[A-Za-z0-9_-]{20,100}")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry (escaping is the writer's)."""
    return _NOT_XML.sub("", text)


def _stamp(at: datetime) -> str:
    return at.isoformat(timespec="seconds") + "Z"


def feed_for_token(app: App, token: str, base: str) -> bytes | None:
    """The Atom document of the saved search whose feed token is ``token``, its links under
    ``base`` (the server's address as the reader asked it); None for a wrong token."""
    if not TOKEN.fullmatch(token or ""):
        return None
    with app.db.session() as s:
        row = rows.by_token(s, token)
        if row is None:
            return None
        corpus = s.get(Corpus, row.corpus_id).name
        entries = [(hit.document_id, hit.score, hit.found_at, doc.external_id, doc.text,
                    dict(doc.meta or {})) for hit, doc in rows.recent_hits(s, row.id, ENTRIES)]
        name, saved_id, updated = row.name, row.id, row.created_at
    root = ET.Element("feed", xmlns=ATOM)
    _sub(root, "title", f"searchapp: {name} ({corpus})")
    _sub(root, "id", f"urn:searchapp:saved:{saved_id}:{token[:8]}")
    _sub(root, "updated", _stamp(max([e[2] for e in entries], default=updated)))
    ET.SubElement(root, "link", rel="self", href=f"{base}/feeds/saved/{token}.atom")
    author = ET.SubElement(root, "author")
    _sub(author, "name", "searchapp")
    for doc_id, score, found_at, external_id, text, meta in entries:
        entry = ET.SubElement(root, "entry")
        _sub(entry, "title", title_of(meta, text) or external_id)
        _sub(entry, "id", f"urn:searchapp:saved:{saved_id}:doc:{doc_id}")
        _sub(entry, "updated", _stamp(found_at))
        ET.SubElement(entry, "link", rel="alternate",
                      href=base + view_link(corpus, external_id, None, 0))
        summary = text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 1] + "…"
        _sub(entry, "summary", f"{summary}\n(score {score:.3f}, id {external_id})")
    declaration = '<?xml version="1.0" encoding="utf-8"?>\n'
    return (declaration + ET.tostring(root, encoding="unicode")).encode()


def _sub(parent: ET.Element, tag: str, text: str) -> ET.Element:
    child = ET.SubElement(parent, tag)
    child.text = xml_text(text)
    return child
