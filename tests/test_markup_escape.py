"""``md_escape``: any string, put anywhere in a page's Markdown, shows as typed.

The property is checked two ways. Rendered by a CommonMark parser (markdown-it, with GFM
tables and strike-through) the escaped text makes no element but paragraphs and line
breaks, and reads as the input. Streamlit's front end adds syntax markdown-it does not
know (GFM autolinks ``http://``/``www.``/e-mail, ``:color[..]`` directives,
``:material/..:`` icons, ``:emoji:``, ``$..$`` LaTeX), so the raw text is checked for the
characters those need: none is left unescaped. Then the pages: the Guide page's ``?topic=``
and a page's ``?corpus=`` with hostile values, and the results' lines built from a
document's id, metadata and text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from searchapp.reporting import WORD_JOINER, md_escape
from tests.markup import rendered, shown

REPO = Path(__file__).resolve().parents[1]
ALLOWED_TAGS = {"p", "/p", "br /"}
HOSTILE = ["[login](http://evil.example/login)", "![x](http://127.0.0.1:9/pixel.png)",
           "<img src=x onerror=alert(1)>", "<http://evil.example>", "http://evil.example/a",
           "www.evil.example", "me@evil.example", ":red[alarm] :material/home: :smile:",
           "$x^2$ $$y$$", "**bold** _it_ `code` ~~gone~~", "# heading\n- item\n1. one\n> q",
           "a | b\n--- | ---\nc | d", "&amp; &#58; &lt;", "line\n\n    indented code",
           "text\n===", "[ref]: http://evil.example", "\\*escaped\\* \\", "x\r- y\r\n+ z"]
# Markdown-ish text: the characters that make markup, often, and any others.
MARKUPISH = st.lists(st.sampled_from([*"[]()<>!*_`$:#@&~|\\/.-+=^{}\"' \n\t\rwh1tpsaxé",
                                        "www.", "http://", ":red[", ":material/",
                                        "\n\n    "]), max_size=40).map("".join)
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


def tags(html: str) -> set[str]:
    return set(re.findall(r"<([^>]*)>", html))


def unescaped(source: str, chars: str) -> list[int]:
    """Positions of ``chars`` in ``source`` that no backslash escapes."""
    out, i = [], 0
    while i < len(source):
        if source[i] == "\\":
            i += 2
            continue
        if source[i] in chars:
            out.append(i)
        i += 1
    return out


def as_read(text: str) -> str:
    """``text`` as a browser lays out a paragraph: blanks collapsed, a lone CR a blank."""
    return " ".join(text.replace(WORD_JOINER, "").split())


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_markdown_shows_as_typed(text):
    html = rendered(md_escape(text))
    assert tags(html) <= ALLOWED_TAGS, html
    assert shown(md_escape(text)) == as_read(text)


@settings(max_examples=400, deadline=None)
@given(st.one_of(MARKUPISH, ANY_TEXT))
def test_any_text_renders_to_itself_and_nothing_else(text):
    escaped = md_escape(text)
    assert tags(rendered(escaped)) <= ALLOWED_TAGS, escaped
    assert shown(escaped) == as_read(text), escaped


@settings(max_examples=400, deadline=None)
@given(st.one_of(MARKUPISH, ANY_TEXT), st.sampled_from(["", "x", "Error: ", " "]),
       st.sampled_from(["", "x", ".", ":", " (y)"]))
def test_escaped_text_stays_text_between_any_words(text, before, after):
    """The escaped text inside a message: nothing of it joins the message's own words."""
    escaped = md_escape(text)
    assert shown(f"{before}{escaped}{after}") == as_read(f"{before}{text}{after}"), escaped
    # Streamlit's own syntax, which a CommonMark parser does not see: nothing left for it.
    ours = re.sub(r"&#(58|4[89]|5[0-7]);", "0", escaped)  # the escape's own entities
    assert unescaped(ours, "[]<>`*_$~|#@&\\") == [], escaped
    assert not re.search(r":(?![ \t\n])", escaped), "a colon could open :red[ :smile: http:"
    assert not re.search(r"(?i)www\.|https?(&#58;|:)", escaped), "an autolink"
    assert not re.search(r"[^\u2060]\\@", escaped), "an e-mail autolink"
    for line in escaped.split("\n"):
        assert not re.match(r" ?([-+=]|\d{1,9}[.)])|  ", line.rstrip()), line  # blocks


@settings(max_examples=60, deadline=None)
@given(st.one_of(MARKUPISH, st.sampled_from(HOSTILE)), st.one_of(MARKUPISH,
                                                                  st.sampled_from(HOSTILE)))
def test_a_hits_details_and_text_never_render_markup(value, text):
    """The results' lines: the id, the metadata and the text of a document."""
    from searchapp.search.service import SearchHit
    from searchapp.ui.results import details_text, title_and_body, where_in_file

    hit = SearchHit(value or "x", text or "y", 1.0, meta={value or "k": value, "title": text})
    for markdown in (details_text(hit), *title_and_body(hit),
                     md_escape(where_in_file({"path": f"dir/{value}", "section": text}))):
        assert tags(rendered(markdown)) <= ALLOWED_TAGS | {"strong", "/strong"}, markdown


# ---- the pages: hostile address parameters -----------------------------------------
def markdown_sources(at: AppTest) -> list[str]:
    """The Markdown of every element that renders it (alerts, text, captions, titles)."""
    kinds = ("markdown", "caption", "error", "warning", "info", "success", "title",
             "header", "subheader")
    return [e.value for kind in kinds for e in getattr(at, kind)]


def assert_only_text(at: AppTest, hostile: str) -> None:
    for source in markdown_sources(at):
        html = rendered(source)
        assert "evil.example" not in " ".join(re.findall(r"<(?:a|img)\b[^>]*>", html)), html
        assert "127.0.0.1:9" not in " ".join(re.findall(r"<(?:a|img)\b[^>]*>", html)), html
        assert "<img" not in html and "<script" not in html, html


@settings(max_examples=12, deadline=None)
@given(st.one_of(st.sampled_from(HOSTILE), MARKUPISH.filter(lambda t: t.strip())))
def test_the_guide_shows_a_hostile_topic_as_text(topic):
    at = AppTest.from_file(REPO / "searchapp" / "ui" / "pages" / "guide.py",
                           default_timeout=60)
    at.query_params["topic"] = topic
    at.run()
    assert not at.exception
    assert_only_text(at, topic)
    if topic != "README":
        assert as_read(repr(topic)) in shown(at.error[0].value)


@pytest.fixture
def one_corpus(ui_resources):
    from searchapp.corpora.service import create_corpus
    from searchapp.ui.resources import get_app

    create_corpus(get_app(), "faq")


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.sampled_from(HOSTILE), MARKUPISH.filter(lambda t: t.strip())))
def test_a_hostile_corpus_in_the_address_is_said_as_text(one_corpus, corpus):
    at = AppTest.from_file(REPO / "searchapp" / "ui" / "pages" / "documents.py",
                           default_timeout=60)
    at.query_params["corpus"] = corpus
    at.run()
    assert not at.exception
    assert_only_text(at, corpus)
