"""The user guide inside the app: the pages of ``docs/`` read where the app runs, so a page
that explains something links to the guide's page on it, with no internet and nothing
to install.

A topic is a file ``docs/<topic>.md`` (``README`` is the guide's index); a topic is only
ever one of those names, never a path a request chose. Links between the guide's pages
become links to the Guide page; screenshots are shown from ``docs/``.

Example:
    >>> to_guide_links("See [Clusters](clusters.md#levels) and [the API](api.md).",
    ...                {"clusters", "api"})
    'See [Clusters](guide?topic=clusters) and [the API](guide?topic=api).'
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException

from searchapp.reporting import md_escape

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDE_PAGE = "searchapp/ui/pages/guide.py"
INDEX = "README"
_LINK = re.compile(r"\]\((?:\.\./docs/|docs/|\./)?([A-Za-z0-9_-]+)\.md(?:#[^)\s]*)?\)")
_README_LINK = re.compile(r"\]\(\.\./README\.md(?:#[^)\s]*)?\)")
_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)\s]+)\)\s*$")


@dataclass(frozen=True)
class Topic:
    name: str  # the file's stem: "clusters"
    title: str  # its first heading: "Clusters: what a corpus is about"


def topics(docs: Path = DOCS) -> list[Topic]:
    """The guide's pages, the index first; empty when ``docs/`` is not beside the app."""
    if not docs.is_dir():
        return []
    found = [Topic(p.stem, _title(p)) for p in sorted(docs.glob("*.md"))]
    return sorted(found, key=lambda t: (t.name != INDEX, t.name))


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def read_topic(name: str, docs: Path = DOCS) -> str:
    """The markdown of the guide's page ``name``, which must be one of ``topics()``' names
    (a name from an address never reaches the file system otherwise)."""
    if name not in {t.name for t in topics(docs)}:
        raise KeyError(name)
    return (docs / f"{name}.md").read_text(encoding="utf-8")


def to_guide_links(text: str, names: set[str]) -> str:
    """Markdown links to the guide's own pages as links to the Guide page (their anchors
    dropped: a page opens at its top); other links as they are."""
    text = _README_LINK.sub(f"](guide?topic={INDEX})", text)
    return _LINK.sub(lambda m: f"](guide?topic={m[1]})" if m[1] in names else m[0], text)


def blocks(text: str, docs: Path = DOCS) -> list[tuple[str, str]]:
    """The page as ("markdown", text) and ("image", path) parts, in order: a screenshot on
    a line of its own is shown from ``docs/`` (only a file inside it)."""
    out: list[tuple[str, str]] = []
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        fenced ^= line.lstrip().startswith("```")
        image = None if fenced else _IMAGE.match(line)
        path = (docs / image[2]).resolve() if image else None
        if path is not None and path.is_relative_to(docs.resolve()) and path.is_file():
            out.append(("markdown", "\n".join(lines)))
            out.append(("image", str(path)))
            lines = []
        else:
            lines.append(line)
    out.append(("markdown", "\n".join(lines)))
    return [(kind, part) for kind, part in out if part.strip()]


def guide_link(topic: str) -> None:
    """A small link to the guide's page on ``topic`` (nothing when that page is missing, or
    where the page runs without the app's navigation).

    Example:
        >>> guide_link("clusters")                                 # doctest: +SKIP
    """
    found = {t.name: t for t in topics()}.get(topic)
    if found is None:
        return
    with contextlib.suppress(StreamlitAPIException):  # a page run on its own: no navigation
        st.page_link(GUIDE_PAGE, label=f"Guide: {md_escape(found.title)}",
                     icon=":material/menu_book:",
                     query_params={"topic": topic})
