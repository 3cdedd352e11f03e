"""What a page shows for a Markdown source: the text a reader sees, for tests that look for
a message in an element whose source is escaped (``md_escape``).

Rendered with markdown-it (CommonMark, with GFM's tables and strike-through), the parser
family Streamlit's front end follows; tags dropped, entities decoded, blanks collapsed, and the
invisible word joiners ``md_escape`` puts in URLs dropped.

Example:
    >>> shown("SEARCHAPP\\\\_PASSWORD &#58;red\\\\[x\\\\]  \\nnext")
    'SEARCHAPP_PASSWORD :red[x] next'
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from searchapp.reporting import WORD_JOINER

_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_TAG = re.compile(r"<[^>]*>")


def rendered(source: str) -> str:
    """The HTML a CommonMark parser makes of ``source``."""
    return _PARSER.render(source)


def shown(source: str) -> str:
    """The text a reader sees of ``source``: one line, as the browser lays it out."""
    text = html.unescape(_TAG.sub(" ", rendered(source))).replace(WORD_JOINER, "")
    return " ".join(text.split())
