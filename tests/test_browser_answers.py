"""The answer box in headless Chromium on a real server on 127.0.0.1: Git's FAQ (``gitfaq``
of git-doc, text no one on the project wrote) made into a PDF of one page per question in
the test's folder, ingested as the PDF it is. A question typed in the search box shows
its answer above the hits with its page; "Open at page N" opens the reader view in a new
tab at that page with the answer's sentence marked; a question the FAQ does not answer
shows the silence line. Needs /usr/bin/chromium and git-doc."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from searchapp.intake.files_job import request_ingest
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from tests.browser import ARTIFACTS, IDLE, browser_page, served_without_worker
from tests.document_files import make_pdf

pytestmark = pytest.mark.browser
WAIT = 180_000  # ms: the first search loads the model on a busy machine
GITFAQ = Path("/usr/share/doc/git-doc/gitfaq.html")
QUESTION = "How do I undo a commit that was already pushed?"
UNANSWERED = "What is the boiling point of water at sea level?"
SILENCE = "No clear answer in these documents."
LATIN1 = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "—": "-", "–": "-"})


def faq_pages() -> list[str]:
    """Each question of the FAQ with its answer, as the text of one page (the PDF's core
    font writes Latin-1)."""
    source = GITFAQ.read_text(encoding="utf-8")
    items = re.findall(r"<dt[^>]*>(.*?)</dt>\s*<dd>(.*?)</dd>", source, re.S)

    def text(fragment: str) -> str:
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())
    return [f"{text(q)}\n{text(a)}".translate(LATIN1).encode("latin-1", "replace")
            .decode("latin-1") for q, a in items]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not GITFAQ.is_file():
        pytest.skip("git-doc's gitfaq.html is not installed")
    tmp = tmp_path_factory.mktemp("browser-answers")
    (tmp / "docs").mkdir()
    pages = faq_pages()
    make_pdf(tmp / "docs" / "gitfaq.pdf", pages, title="Git FAQ")

    def prepare(app):
        request_ingest(app, "faq", [tmp / "docs"])
        while (job := queue.claim(app.db, "test-worker")) is not None:
            run_job(app, job)

    with served_without_worker(tmp, prepare) as (url, browser, _app):
        yield url, browser, pages


def ask(page, url: str, question: str):
    """The Search page with ``question`` typed and Enter pressed; the answer box."""
    page.goto(f"{url}/search?corpus=faq")
    box = page.get_by_label("Query")
    box.wait_for(timeout=WAIT)
    box.fill(question)
    box.press("Enter")
    answers = page.locator(".st-key-answer-box")
    answers.wait_for(timeout=WAIT)
    page.locator(IDLE).wait_for(timeout=WAIT)  # the run that drew it has ended: all is drawn
    return answers


def page_of(pages: list[str], sentence: str) -> int:
    """The number of the PDF page whose text holds ``sentence`` (1-based)."""
    flat = " ".join(sentence.split())
    found = [n for n, text in enumerate(pages, start=1) if flat in " ".join(text.split())]
    assert len(found) == 1, (sentence, found)
    return found[0]


def test_a_typed_question_shows_its_answer_with_its_page_and_opens_the_page_there(served,
                                                                                  request):
    url, browser, pages = served
    with browser_page(browser, request) as page:
        first = ask(page, url, QUESTION).locator(".st-key-answer-1")
        shown = first.inner_text()
        assert ":gray[" not in shown and ":orange-background[" not in shown, shown
        sentence = first.locator(".stMarkdownColoredBackground").inner_text()  # highlighted
        assert first.locator(".stMarkdownColoredText").count() == 2, "before and after, dimmed"
        number = page_of(pages, sentence)
        assert "revert" in pages[number - 1], "the page that answers: git revert"
        assert f"gitfaq.pdf · page {number}" in shown
        hits = page.locator(".st-key-hit-1")
        assert first.bounding_box()["y"] < hits.bounding_box()["y"], "above the hits"
        pdf = first.get_by_role("link", name=f"PDF at page {number}")
        assert pdf.get_attribute("href").endswith(f"/originals/faq/gitfaq.pdf#page={number}")
        page.screenshot(path=str(ARTIFACTS / "browser-answer-box.png"))

        link = first.get_by_role("link", name=f"Open at page {number}")
        with page.context.expect_page(timeout=WAIT) as opened:
            link.click()
        tab = opened.value
        tab.wait_for_load_state("load", timeout=WAIT)
        assert "/view/faq/gitfaq.pdf?mark=" in tab.url and "#s-" in tab.url
        marked = tab.locator("mark")
        assert " ".join(sentence.split()) in " ".join(" ".join(marked.all_inner_texts())
                                                      .split())
        section = marked.first.evaluate("m => m.closest('section').id")
        assert section == tab.url.split("#")[1]
        page_line = tab.locator(f"#page-{number}")
        assert page_line.inner_text().startswith(f"Page {number}")
        assert in_viewport(tab, marked.first), "the tab is scrolled to the answer"
        tab.screenshot(path=str(ARTIFACTS / "browser-answer-reader.png"))


def test_a_question_the_documents_do_not_answer_shows_the_silence_line(served, request):
    url, browser, _pages = served
    with browser_page(browser, request) as page:
        box = ask(page, url, UNANSWERED)
        assert SILENCE in box.inner_text()
        assert box.locator(".st-key-answer-1").count() == 0
        page.locator(".st-key-hit-1").wait_for(timeout=WAIT)  # the hits are still listed


def in_viewport(tab, locator) -> bool:
    """Whether any of the element is inside the window's visible area."""
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); "
                            "return r.bottom > 0 && r.top < window.innerHeight; }")
