"""A saved search's new hits as its notifications carry them: the webhook's JSON body and
the desktop notification's lines.

Example:
    >>> title_of({"title": "Q3 report"}, "ignored")
    'Q3 report'
    >>> title_of({}, "\\n  First line of the text\\nsecond")
    'First line of the text'
"""

from __future__ import annotations

from collections.abc import Sequence

from searchapp.search.hits import SearchHit

TITLE_CHARS = 120


def title_of(meta: dict, text: str) -> str:
    """A document's title: its metadata's ``title``, else its text's first line, cut."""
    title = meta.get("title") if isinstance(meta.get("title"), str) else None
    line = title or next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS - 1].rstrip() + "…"


def hit_news(hit: SearchHit) -> dict:
    """One new hit: ``{id, title, source: {path, type, page, section}, score}``."""
    source = None
    if hit.source:
        source = {key: hit.source.get(key) for key in ("path", "type", "page", "section")}
    return {"id": hit.id, "title": title_of(hit.meta or {}, hit.text), "source": source,
            "score": hit.score}


def webhook_body(saved_id: int, name: str, corpus: str, hits: Sequence[SearchHit]) -> dict:
    """The JSON a webhook receives for a saved search's new hits."""
    return {"saved_search": {"id": saved_id, "name": name}, "corpus": corpus,
            "new_hits": [hit_news(h) for h in hits]}


def desktop_lines(name: str, corpus: str, hits: Sequence[SearchHit]) -> tuple[str, str]:
    """(title, body) of the desktop notification."""
    shown = [hit_news(h)["title"] for h in hits[:3]]
    more = f"\n… and {len(hits) - 3} more" if len(hits) > 3 else ""
    return (f"{len(hits)} new for “{name}” ({corpus})", "\n".join(shown) + more)
