"""A hit's title is shown once: the snippet goes on where the title ends (hypothesis over
texts of one or more lines, long and short, with the query's word marked wherever it is)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from searchapp.search.service import SearchHit
from searchapp.ui.results import SNIPPET_CHARS, reflowed, title_and_body, title_of

WORDS = st.lists(st.sampled_from(["card", "stolen", "block", "bank", "transfer", "help",
                                  "account", "yesterday", "someone", "please"]),
                 min_size=1, max_size=40)


def plain(markdown: str) -> str:
    """The text of our markdown: no bold marks, line breaks as typed."""
    return markdown.replace("**", "").replace("  \n", "\n")


@given(first=WORDS, rest=st.lists(WORDS, max_size=3))
def test_the_title_is_not_repeated_as_the_snippets_start(first, rest):
    text = "\n".join(" ".join(line) for line in [first, *rest])
    spans = [m.span() for m in re.finditer(r"\bcard\b", text)]  # the query's word
    head, body = title_and_body(SearchHit("a", text, 1.0, snippet=text, highlights=spans))
    title = title_of(text).removesuffix("…").rstrip()
    after = text[len(title):].lstrip()
    assert plain(head) == title
    assert plain(body) == reflowed(after[:SNIPPET_CHARS]) + ("…" if len(after) >
                                                                         SNIPPET_CHARS else "")
    assert head.count("**card**") == title.split().count("card")  # still bold in the title


@given(st.lists(st.sampled_from(["word", "card", " ", "\n", "\n\n", " \n ", "\t"]),
                max_size=30))
def test_wrapped_lines_are_joined_and_paragraphs_kept(pieces):
    text = "".join(pieces)
    out = reflowed(text)
    assert len(out) == len(text), "the highlights' offsets still hold"
    assert all(a == b or (a in "\n \t" and b in " \n") for a, b in zip(text, out, strict=True))
    assert re.sub(r"\s+", " ", out) == re.sub(r"\s+", " ", text), "only whitespace changes"
    assert "\n" not in out or re.search(r"\n[ \t]*\n", text), "a break only at a blank line"
    assert out.count("\n") == len(re.findall(r"\n(?:[ \t]*\n)+", text)), "one per paragraph"
