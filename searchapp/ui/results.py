"""The results list: one dense row per hit, as a search engine shows them, with actions.

Each hit is drawn by ``render_hit``: its rank and first line, the snippet with
the query's words in bold, the id and metadata, the score a person reads (the
cosine between the query and the text; BM25 where words alone matched), a
"weak match" mark under ``WEAK_COSINE``, and a row of actions. An action is a
``HitAction`` (a label, an icon and a callback that takes the hit), so a page
adds one more in one line. Everything shown from a document is escaped: no
HTML, link or markup of a document is ever rendered.

The rows sit in ``results_list()``, a container that packs them as tightly as
one reads a search engine's list (lines at 1.4, short action buttons, half the
usual gap): 9 hits of a title and a two-line description fit a 1400×1000
window, where Streamlit's spacing fits 7 (``benchmarks/ui_pages.py``).

Example (inside a page script):
    >>> actions = [HitAction("More like this", ":material/search:", like)]  # doctest: +SKIP
    >>> with results_list():                                                # doctest: +SKIP
    ...     for rank, hit in enumerate(hits, start=1):
    ...         render_hit(hit, rank, actions)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import streamlit as st

from searchapp.base.text_width import chars_within, columns
from searchapp.search.service import SearchHit
from searchapp.ui.common import md_escape, user_errors

# Streamlit's own spacing, tightened inside the results list only (its key: results-list);
# a hit's details (id and metadata) take the row's room left by its buttons, cut with "…"
# (the Document button shows them all), so the buttons never wrap to a row of their own.
DENSE_LIST_STYLE = """<style>
.st-key-results-list [data-testid="stMarkdownContainer"] p { line-height: 1.4; }
.st-key-results-list [class*="st-key-hit-actions-"] button {
  min-height: 1.6rem; padding-top: 0; padding-bottom: 0; }
.st-key-results-list [class*="st-key-hit-actions-"]
  > .stElementContainer:has([data-testid="stCaptionContainer"]) {
  flex: 1 1 0; min-width: 4rem; }
.st-key-results-list [class*="st-key-hit-actions-"] [data-testid="stCaptionContainer"] p {
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
</style>"""
WEAK_COSINE = 0.3  # below this, all-MiniLM-L6-v2 pairs are mostly unrelated texts
TITLE_CHARS = 110  # columns: a Chinese or Japanese character takes two (``base/text_width``)
SNIPPET_CHARS = 260


@dataclass(frozen=True)
class HitAction:
    """A button under each hit: ``run(hit)`` is called when it is clicked (a callback,
    before the rerun, so it may change session state or the address)."""

    label: str
    icon: str
    run: Callable[[SearchHit], None]
    help: str | None = None


def title_of(text: str, limit: int = TITLE_CHARS) -> str:
    """A hit's title: its first line, cut at a word to ``limit`` columns (a Chinese or
    Japanese character takes two).

    Example:
        >>> title_of("How do I reset my password?\\nI forgot it yesterday.")
        'How do I reset my password?'
        >>> title_of("word " * 40, limit=20)
        'word word word word…'
        >>> title_of("日本語の題名" * 5, limit=10)
        '日本語の題…'
    """
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    fits = chars_within(line, limit)
    if fits >= len(line):
        return line
    cut = line[:fits]
    if columns(cut) > len(cut):  # wide characters: a space is no word's end in Japanese
        space = cut.rfind(" ", max(0, fits - 12))
        return (cut[:space] if space > 0 else cut).rstrip() + "…"
    return cut.rsplit(" ", 1)[0].rstrip() + "…"


def shown_score(hit: SearchHit) -> tuple[str, bool]:
    """(the score as shown, whether the match is weak): the cosine when there is one.

    Example:
        >>> shown_score(SearchHit("a", "", 0.03, semantic_score=0.8123))
        ('0.81', False)
        >>> shown_score(SearchHit("a", "", 0.02, semantic_score=0.12))
        ('0.12', True)
        >>> shown_score(SearchHit("a", "", 4.9, lexical_score=4.9))
        ('BM25 4.9', False)
    """
    if hit.semantic_score is not None:
        return f"{hit.semantic_score:.2f}", hit.semantic_score < WEAK_COSINE
    if hit.lexical_score is not None:
        return f"BM25 {hit.lexical_score:.1f}", False
    return f"{hit.score:.2f}", False


def snippet_markdown(hit: SearchHit, limit: int = SNIPPET_CHARS) -> str:
    """The hit's snippet as markdown: escaped text, the query's words in bold, ≤ ``limit``.

    Example:
        >>> print(snippet_markdown(SearchHit("a", "", 1.0, snippet="<b>ERR-1</b>",
        ...                                  highlights=[(7, 8)])))
        \\<b\\>ERR-**&#49;**\\</b\\>
    """
    return marked(hit.snippet or hit.text, hit.highlights, limit)


def reflowed(text: str) -> str:
    """``text`` with its hard-wrapped lines joined: a line break inside a paragraph becomes
    a space, the first break of a blank line (a paragraph's end) stays. Same length, so
    offsets into it (the highlights) still hold.

    Text files, mail and licences are wrapped at ~72 characters; shown as they are, a
    snippet is a narrow column eight lines tall and a screen holds two hits.

    Example:
        >>> reflowed("Permission is hereby\\ngranted, free of charge.\\n\\nNext part")
        'Permission is hereby granted, free of charge.\\n Next part'
    """
    return _LINE_BREAK.sub(lambda m: "\n" + " " * (len(m[0]) - 1)
                           if m[0].count("\n") > 1 else " " * len(m[0]), text)


_LINE_BREAK = re.compile(r"[ \t]*\n(?:[ \t]*\n)*")  # a break and the blank lines after it


def marked(text: str, highlights: list, limit: int = SNIPPET_CHARS) -> str:
    """``text`` (cut to ``limit`` columns, its wrapped lines joined) escaped as markdown with
    the ``highlights`` in bold."""
    limit = chars_within(text, limit)
    marks = [(a, b) for a, b in highlights if b <= limit]
    cut = reflowed(text[:limit])
    out, last = [], 0
    for start, end in marks:
        out += [md_escape(cut[last:start]), "**", md_escape(cut[start:end]), "**"]
        last = end
    out.append(md_escape(cut[last:]))
    return "".join(out) + ("…" if len(text) > limit else "")


def _bold(markdown: str) -> str:
    """A title in bold, its own bold words (the query's) kept visible in it."""
    return "**" + markdown.replace("**", "") + "**" if markdown else markdown


def title_and_body(hit: SearchHit) -> tuple[str, str]:
    """(title, snippet) as markdown, the title never repeated as the snippet's start.

    A snippet that begins with the text's first line (or the part of it that is the
    title) goes on after it; the query's words stay bold in both.

    Example:
        >>> hit = SearchHit("a", "Card stolen\\nBlock my card now", 1.0,
        ...                 snippet="Card stolen\\nBlock my card now", highlights=[(0, 4)])
        >>> title_and_body(hit)
        ('**Card** stolen', 'Block my card now')
    """
    title = title_of(hit.text)
    core = title.removesuffix("…").rstrip()
    text = hit.snippet or hit.text
    if not core or not text.startswith(core):
        return md_escape(title), snippet_markdown(hit)
    rest = text[len(core):]
    shift = len(text) - len(rest.lstrip())
    head = marked(core, [(a, b) for a, b in hit.highlights if b <= len(core)])
    body = marked(text[shift:], [(a - shift, b - shift) for a, b in hit.highlights
                                 if a >= shift])
    return head, body


FILE_DETAILS = ("title", "author", "modified", "pages")  # of a file's metadata, shown in a row


def details_text(hit: SearchHit) -> str:
    """The line under the snippet: id, then each non-empty metadata value, escaped (for a
    hit of a file: its title, author, date and pages; the rest is in "Document")."""
    shown = {k: v for k, v in hit.meta.items() if k in FILE_DETAILS} if hit.source \
        else hit.meta
    return " · ".join([f"id {md_escape(hit.id)}"] + [
        f"{md_escape(str(key))}: {md_escape(str(value))}"
        for key, value in shown.items() if str(value).strip()])


def where_in_file(source: dict) -> str:
    """``install.pdf · page 4 · 2.1 Requirements``: the file and the place of the passage.

    Example:
        >>> where_in_file({"path": "guide/install.pdf", "type": "pdf", "page": 4,
        ...                "section": "2.1 Requirements"})
        'install.pdf · page 4 · 2.1 Requirements'
    """
    page = page_word(source)
    parts = [source["path"].rsplit("/", 1)[-1]]
    if source.get("page") is not None:
        parts.append(f"{page} {source['page']}")
    if source.get("section"):
        parts.append(str(source["section"]))
    return " · ".join(parts)


def page_word(source: dict) -> str:
    """What a file's numbered part is called: "slide" in a presentation, else "page".

    Example:
        >>> page_word({"type": "odp"}), page_word({"type": "pdf"})
        ('slide', 'page')
    """
    return "slide" if source.get("type") in ("pptx", "odp") else "page"


@contextlib.contextmanager
def results_list() -> Iterator[None]:
    """The container the hits of a list go in: ``with results_list(): render_hit(...)``.

    Its rows are half Streamlit's usual gap apart, and ``DENSE_LIST_STYLE``, the list's
    last element (no height), tightens their lines and buttons. It goes through
    ``st.markdown``, drawn by the code that draws every hit: ``st.html`` is drawn by code
    the browser fetches the first time it is used, so the first list showed loose for a
    moment (and a test counted 7 hits in 1 run of 3).
    """
    with st.container(key="results-list", gap="xsmall"):
        yield
        st.markdown(DENSE_LIST_STYLE, unsafe_allow_html=True)  # our constant, no document text


def render_hit(hit: SearchHit, rank: int, actions: Sequence[HitAction] = (),
               extra: str = "", mark: Callable[[], None] | None = None, corpus: str = "") -> None:
    """One result row: rank and title, snippet, details, score, then the action buttons.

    ``extra`` is one more caption line (e.g. the ranks in both lists); ``mark``
    draws the judgement switch among the actions (``searchapp.ui.judging``). The
    row is a container keyed ``hit-{rank}``, so tests and scripts can find it.
    """
    score, weak = shown_score(hit)
    short = "\n" not in hit.text.strip() and len(hit.text) <= TITLE_CHARS and hit.passage is None
    if hit.source:  # a file: its name, page and section head the row
        head = f"**{rank}. {md_escape(where_in_file(hit.source))}**  \n{snippet_markdown(hit)}"
    elif short:
        head = f"**{rank}.** {snippet_markdown(hit)}"
    else:  # the title once, in bold, then the snippet from where the title ends
        title, body = title_and_body(hit)
        head = f"**{rank}.** {_bold(title)}" + (f"  \n{body}" if body else "")
    note = "Cosine similarity between the query and the text (1 = same meaning)" \
        if hit.semantic_score is not None else "BM25 over the query's words"
    with st.container(key=f"hit-{rank}", gap="xxsmall"):
        st.markdown(head)
        with st.container(horizontal=True, gap="small", vertical_alignment="center",
                          key=f"hit-actions-{rank}"):
            st.badge(score + (" · weak match" if weak else ""),
                     color="gray" if weak else "blue",
                     help=f"{note}.  \n{extra}" if extra else note)
            st.caption(details_text(hit))
            for action in actions:
                st.button(action.label, icon=action.icon, type="tertiary", help=action.help,
                          key=f"hit-{rank}-{action.label}", on_click=action.run, args=(hit,))
            if hit.source and corpus:
                open_original(hit, corpus)
            with st.popover("Document", icon=":material/article:", type="tertiary"):
                whole_document(hit)
            if mark is not None:
                mark()


def whole_document(hit: SearchHit) -> None:
    """The whole text, its id (with a copy button) and every metadata value."""
    st.caption("Id (the copy button is at the right)")
    st.code(hit.id, language=None)
    if hit.meta:
        st.dataframe([{"field": str(k), "value": str(v)} for k, v in hit.meta.items()],
                     hide_index=True, width="stretch")
    if hit.passage is not None and hit.span is not None:
        where = f", {where_in_file(hit.source)}" if hit.source else ""
        st.caption(f"Matched passage {hit.passage + 1} (characters {hit.span[0]:,}–"
                   f"{hit.span[1]:,}{md_escape(where)}):")
        st.info(md_escape(hit.text[hit.span[0]:hit.span[1]]))
        st.caption("The whole text:")
    st.markdown(md_escape(hit.text))


def open_original(hit: SearchHit, corpus: str) -> None:
    """Links to the hit's place in its file: a PDF opens at the hit's page in the browser's
    own viewer; any other file opens in the app's reader view at the hit's section, the
    passage marked (``searchapp.web.reader``), and downloads as it was read. A file of a
    watched folder, where the app runs on this machine only, also opens in place (the file
    on disk, with the desktop's program: ``searchapp.watching.in_place``)."""
    from searchapp.web.originals import original_link

    in_place(hit, corpus)

    pdf = hit.source.get("type") == "pdf"
    page = hit.source.get("page")
    if not pdf and hit.view:
        st.link_button(md_escape(open_label(hit.source)), hit.view, type="tertiary",
                       icon=":material/menu_book:",
                       help="The document's text in a new tab, at this section, the passage "
                            "marked")
    label = f"Open at page {page}" if pdf and page else "Open" if pdf else "Download original"
    st.link_button(label, original_link(corpus, hit.id, hit.source), type="tertiary",
                   icon=":material/open_in_new:" if pdf else ":material/download:")


SECTION_LABEL_CHARS = 40


def open_label(source: dict) -> str:
    """The reader view's button: "Open at" the last step of the hit's section (its heading),
    cut to ``SECTION_LABEL_CHARS``; "Open" for a part with none. As text: a button's label
    is Markdown, so the caller escapes it.

    Example:
        >>> open_label({"section": "Guide > Install > 2.1 Requirements"})
        'Open at 2.1 Requirements'
        >>> open_label({"section": None})
        'Open'
    """
    section = str(source.get("section") or "").rsplit(" > ", 1)[-1].strip()
    if not section:
        return "Open"
    if len(section) > SECTION_LABEL_CHARS:
        section = section[:SECTION_LABEL_CHARS - 1].rstrip() + "…"
    return "Open at " + section


def in_place(hit: SearchHit, corpus: str) -> None:
    """The "Open the file" button, only for a server on loopback and a file still on disk."""
    from streamlit import config

    from searchapp.corpora import documents
    from searchapp.errors import SearchAppError
    from searchapp.ui.resources import get_app
    from searchapp.watching.in_place import local_file, on_this_machine, open_in_place

    if not on_this_machine(config.get_option("server.address")):
        return
    app = get_app()
    try:  # the bytes the app kept for this document (its own record), never a metadata value
        original = documents.get(app, corpus, hit.id).original
    except SearchAppError:  # deleted since the search: no button
        return
    path = local_file(app, corpus, hit.id, original)
    if path is None:
        return

    def run() -> None:
        with user_errors():
            open_in_place(path)

    st.button("Open the file", icon=":material/folder_open:", type="tertiary",
              key=f"in-place-{hit.id}", help=md_escape(path), on_click=run)
