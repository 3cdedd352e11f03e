"""The reader view (``/view/{corpus}/{id}``): a hit of a sectioned file opens at its section.

Files of every format whose parts carry a section (web page, Markdown,
reStructuredText, Word, OpenDocument, EPUB) are ingested by the CLI, searched for a
sentence of a later section, and the hit's ``view`` address is opened through the real
door: the page is the stored text escaped part by part (a ``<script>`` in the text is
shown as text), scrolled by its fragment to the part whose heading is that section,
the passage in a ``<mark>``, in the originals' sandbox. Unknown corpora and documents
are 404; a password keeps the view behind the login. The page's HTML holds nothing
of a document's text but text, whatever the text and its layout (hypothesis).
"""

from __future__ import annotations

import re
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient

from searchapp.api.app import ApiDispatch, build_api
from searchapp.cli.main import main
from searchapp.config import Settings
from searchapp.context import App
from searchapp.corpora.reading import Reading, layout_blocks
from searchapp.intake.files_job import request_ingest
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from searchapp.search.service import hit_json, search
from searchapp.web.door import Door
from searchapp.web.middleware import DoorMiddleware
from searchapp.web.reader import page_html, reader_routes
from searchapp.web.routes import door_routes
from tests.document_files import make_docx, make_epub, make_odt

HTML = ("<html><head><title>Field guide</title><script>window.__pwned = 1</script></head>"
        "<body><h1>Field guide</h1><p>Welcome to the guide.</p>"
        "<h2>Setting up camp</h2><p>Choose flat ground away from the river.</p>"
        "<h2>Cooking</h2><p>Boil water for three minutes. Type &lt;script&gt;alert(1)"
        "&lt;/script&gt; in the log.</p>"
        "<h3>Washing up</h3><p>Scrub the pots with sand far from the stream.</p>"
        "</body></html>")
RST = ("Tools\n=====\n\nA short intro to the tools.\n\nHammers\n-------\n\nHold the hammer "
       "near its end.\n\nSaws\n----\n\nA saw cuts on the push stroke only.\n")
MARKDOWN = ("# Garden\n\nThe garden has four beds.\n\n## Watering\n\nWater the beds at "
            "dusk.\n\n## Compost\n\nTurn the compost heap every second week.\n")
# (file, a sentence of a later section, that section's heading path)
CASES = [("site/guide.html", "Scrub the pots with sand far from the stream.",
          "Field guide > Cooking > Washing up"),
         ("notes/garden.md", "Turn the compost heap every second week.", "Garden > Compost"),
         ("notes/tools.rst", "A saw cuts on the push stroke only.", "Tools > Saws"),
         ("policy.docx", "Use it daily.", "2 Use"),
         ("book.odt", "Listed item.", "Chapter Two"),
         ("tales.epub", "A storm rose in the night.", "The Second")]


def sectioned_files(root: Path) -> Path:
    """A folder holding one sectioned file of each format."""
    docs = root / "docs"
    (docs / "site").mkdir(parents=True)
    (docs / "notes").mkdir()
    (docs / "site" / "guide.html").write_text(HTML, encoding="utf-8")
    (docs / "notes" / "garden.md").write_text(MARKDOWN, encoding="utf-8")
    (docs / "notes" / "tools.rst").write_text(RST, encoding="utf-8")
    make_docx(docs / "policy.docx")
    make_odt(docs / "book.odt")
    make_epub(docs / "tales.epub")
    return docs


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """An App whose corpus ``docs`` holds the folder, ingested and embedded as a worker
    would (one for the module: reading six formats costs a process each)."""
    tmp = tmp_path_factory.mktemp("reader-view")
    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(tmp / "data"),
                                 "SEARCHAPP_DEVICE": "cpu"}))
    job_id = request_ingest(app, "docs", [sectioned_files(tmp)])
    while (job := queue.claim(app.db, "test-worker")) is not None:
        run_job(app, job)
    report = queue.get(app.db, job_id).result
    assert (report["added"], report["failed"]) == (len(CASES), 0), report
    yield app
    app.db.dispose()


def served(app, env: dict | None = None) -> TestClient:
    """The reader's route behind the real door (as ``serve.py`` stacks them), on ``app``."""
    door = Door.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir), **(env or {})})
    web = Starlette(routes=[*door_routes(door), *reader_routes(lambda: app)],
                    middleware=[Middleware(DoorMiddleware, door=door)])
    return TestClient(web, base_url="http://127.0.0.1", follow_redirects=False)


class Page(HTMLParser):
    """A reader page read back: its tags, the text of each section, its marks."""

    def __init__(self, body: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.sections: dict[str, str] = {}
        self.headings: dict[str, str] = {}
        self.marks: list[str] = []
        self._section: str | None = None
        self._heading = self._mark = False
        self.feed(body)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "section":
            self._section = dict(attrs)["id"]
            self.sections[self._section] = self.headings[self._section] = ""
        self._heading = self._heading or (self._section is not None and tag in
                                          ("h2", "h3", "h4", "h5", "h6"))
        if tag == "mark":
            self._mark = True
            self.marks.append("")

    def handle_endtag(self, tag):
        if tag == "section":
            self._section = None
        if tag in ("h2", "h3", "h4", "h5", "h6"):
            self._heading = False
        if tag == "mark":
            self._mark = False

    def handle_data(self, data):
        if self._section is not None:
            self.sections[self._section] += data
            if self._heading:
                self.headings[self._section] += data
        if self._mark:
            self.marks[-1] += data


@pytest.mark.parametrize(("path", "sentence", "section"), CASES,
                         ids=[c[0].rsplit(".", 1)[1] for c in CASES])
def test_a_hit_of_a_sectioned_file_opens_the_reader_at_its_section_with_the_passage_marked(
        ingested, path, sentence, section):
    hits = search(ingested, "docs", sentence, k=len(CASES), mode="lexical")
    hit = next(h for h in hits if h.id == path)
    assert hit.source["section"] == section
    assert hit_json(hit)["view"] == hit.view
    address, anchor = hit.view.split("#")
    assert address.startswith(f"/view/docs/{path}?mark=") and re.fullmatch(r"s-\d+", anchor)
    with served(ingested) as client:
        answer = client.get(address)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["content-security-policy"].startswith("sandbox")
    assert answer.headers["x-content-type-options"] == "nosniff"
    page = Page(answer.text)
    assert " ".join(page.headings[anchor].split()) == section.rsplit(" > ", 1)[-1]
    assert page.marks and all(m in page.sections[anchor] for m in page.marks)  # one part's
    assert sentence in " ".join(" ".join(page.marks).split())  # the heading's and the text's


def test_the_text_of_a_page_is_shown_as_text_and_no_markup_of_it_runs(ingested):
    with served(ingested) as client:
        answer = client.get("/view/docs/site/guide.html")
    assert answer.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in answer.text  # the page's words
    assert "<script" not in answer.text and "__pwned" not in answer.text  # its markup: gone
    page = Page(answer.text)
    assert page.tags <= {"html", "head", "meta", "title", "style", "body", "header", "h1",
                         "p", "a", "main", "section", "h2", "h3", "h4", "div", "mark"}
    assert "<script>alert(1)</script>" in "".join(page.sections.values())
    assert page.marks == []  # no mark asked for, none drawn


@pytest.mark.parametrize("address", ["/view/nope/site/guide.html", "/view/docs/nope.html",
                                     "/view/docs/site/%2E%2E/notes/garden.md"])
def test_an_unknown_corpus_or_document_is_not_found(ingested, address):
    with served(ingested) as client:
        answer = client.get(address)
    assert answer.status_code == 404
    assert "<" not in answer.text and answer.headers["content-type"].startswith("text/plain")


def test_a_wrong_mark_draws_no_mark_and_the_page_still_opens(ingested):
    with served(ingested) as client:
        for mark in ("9-3", "abc", "-5-2", "3-", "", "1-2-3", "99999-100000"):
            answer = client.get("/view/docs/notes/garden.md", params={"mark": mark})
            assert answer.status_code == 200 and "<mark>" not in answer.text
        whole = client.get("/view/docs/notes/garden.md", params={"mark": "0-99999999999"})
        assert "".join(Page(whole.text).marks).replace("\n", "") == \
            "".join(Page(whole.text).sections.values()).replace("\n", "")  # to the end


def test_the_view_is_behind_the_door(ingested):
    with served(ingested, {"SEARCHAPP_PASSWORD": "correct horse"}) as client:
        refused = client.get("/view/docs/notes/garden.md")
        assert refused.status_code == 401 and "Garden" not in refused.text
        assert client.post("/login", data={"password": "correct horse"}).status_code == 303
        assert client.get("/view/docs/notes/garden.md").status_code == 200


def test_the_cli_names_the_view_of_a_hit(ingested, capsys, monkeypatch):
    monkeypatch.setenv("SEARCHAPP_DATA_DIR", str(ingested.settings.data_dir))
    capsys.readouterr()
    assert main(["search", "--corpus", "docs", "Turn the compost heap", "-k", "1",
                 "--mode", "lexical"]) == 0
    out = capsys.readouterr().out
    assert "notes/garden.md · Garden > Compost" in out
    assert re.search(r"open: /view/docs/notes/garden\.md\?mark=\d+-\d+#s-2$", out, re.M), out


def test_the_api_hit_carries_the_view_and_it_opens_behind_the_same_door(ingested):
    door = Door.from_env({"SEARCHAPP_DATA_DIR": str(ingested.settings.data_dir)})
    api = build_api(app=lambda: ingested, start_worker=lambda app: None)
    web = Starlette(routes=reader_routes(lambda: ingested),
                    middleware=[Middleware(DoorMiddleware, door=door),
                                Middleware(ApiDispatch, api=api)])
    with TestClient(web, base_url="http://127.0.0.1") as client:
        answer = client.post("/api/v1/corpora/docs/search",
                             json={"query": "compost heap", "k": 1, "mode": "lexical"})
        assert answer.status_code == 200, answer.text
        [hit] = answer.json()["results"]
        assert hit["source"]["section"] == "Garden > Compost"
        assert re.fullmatch(r"/view/docs/notes/garden\.md\?mark=\d+-\d+#s-2", hit["view"])
        page = Page(client.get(hit["view"].split("#")[0]).text)
    assert "compost heap" in " ".join(page.marks)


def test_a_section_whose_first_line_is_not_its_heading_gets_the_heading_from_its_path():
    text = "One\nThe ship left.\n\nTwo\nA storm rose."
    blocks = layout_blocks(text, [[0, 18, None, "Chapter the First"], [20, 37, 2, "B"]])
    page = Page(page_html(Reading("c", "t.epub", "Tales", text, blocks, True), (20, 37)))
    assert page.headings == {"s-0": "Chapter the First", "s-1": "B"}
    assert page.sections["s-0"] == "Chapter the FirstOne\nThe ship left."
    assert page.marks == ["Two\nA storm rose."]


MARKUP = ["<script>alert(1)</script>", "</div></section><h2>", "<b>bold</b>", "&amp;", "&lt;",
          "<!-- x -->", "<img src=x onerror=alert(1)>", "\r\n", "\n", "</mark>", "<a href=/x>"]


@st.composite
def documents(draw):
    """A text of any characters and a layout of ordered parts over it, sections included."""
    pieces = st.one_of(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)),
                               max_size=30), st.sampled_from(MARKUP))
    text = "".join(draw(st.lists(pieces, max_size=8)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    words = st.one_of(st.none(), st.text(max_size=12), st.just("A > <b>B</b>"))
    layout = [[a, b, draw(st.one_of(st.none(), st.integers(1, 3))), draw(words)]
              for a, b in zip(cuts[::2], cuts[1::2], strict=False)]
    mark = draw(st.one_of(st.none(), st.tuples(st.integers(0, 210), st.integers(0, 210))))
    return text, layout, mark


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_whatever_the_text_the_page_holds_it_as_text_only(doc):
    text, layout, mark = doc
    mark = mark if mark and mark[0] < mark[1] else None
    blocks = layout_blocks(text, layout)
    page = Page(page_html(Reading("c", "<id>", "<t>", text, blocks, False), mark))
    assert page.tags <= {"html", "head", "meta", "title", "style", "body", "header", "h1",
                         "p", "main", "section", "h2", "h3", "h4", "h5", "h6", "div", "mark"}
    for block in blocks:  # every character of every part, in its section, as typed
        assert page.sections[f"s-{block.anchor}"] == shown_text(text, block)
    for piece in page.marks:
        assert mark is not None and piece in text[mark[0]:mark[1]]


def shown_text(text: str, block) -> str:
    """What a part's section should read: its heading (its own first line, or its path's
    last step), then the rest of its text."""
    if block.heading is None:
        return text[block.start:block.end]
    if block.body_start == block.start:
        return block.heading + text[block.start:block.end]
    rest = block.body_start + (text[block.body_start:block.body_start + 1] == "\n")  # its line
    return text[block.start:block.body_start] + text[rest:block.end]


def test_an_archive_member_opens_at_its_section_too(app, tmp_path, capsys):
    with zipfile.ZipFile(tmp_path / "site.zip", "w") as z:
        z.writestr("wiki/garden.md", MARKDOWN)
    assert main(["ingest", str(tmp_path / "site.zip"), "--corpus", "wiki", "--wait"]) == 0
    [hit] = search(app, "wiki", "compost heap", k=1, mode="lexical")
    assert hit.view.startswith("/view/wiki/wiki/garden.md?mark=") and hit.view.endswith("#s-2")
