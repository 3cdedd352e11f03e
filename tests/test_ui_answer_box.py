"""The Search page's answer box (Streamlit AppTest on a real corpus: a copy of Git's FAQ,
``gitfaq.html`` from git-doc, ingested as the file it is, the bundled encoder, SQLite):
a question gets its answers above the hits, each in its context with its place, a link
to the reader view at it and right / wrong marks stored as answer judgements; a question
the FAQ does not answer gets the silence line; keywords get no box unless "Always
answer" is on, and that switch lives in the address. Also the box's Markdown (hostile
sentences stay text) and the results' CSV (answers first, spreadsheet-safe)."""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from searchapp.answers.finder import Answer
from searchapp.answers.service import SILENCE, AnswerResult, search_with_answers
from searchapp.intake.files_job import request_ingest
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from searchapp.judgements import service
from searchapp.search.hits import SearchHit
from searchapp.ui.answer_box import answer_markdown
from searchapp.ui.results_export import results_csv
from tests.markup import rendered, shown

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "search.py"
GITFAQ = Path("/usr/share/doc/git-doc/gitfaq.html")
QUESTION = "How do I undo a commit that was already pushed?"
UNANSWERED = "What is the boiling point of water at sea level?"  # best score < 0.5 (default)
KEYWORDS = "revert pushed commit"  # no question: no answer sought unless asked
ANSWER_MARK = ":orange-background["  # the answer's sentence, highlighted


@pytest.fixture
def gitfaq(ui_resources, app, tmp_path) -> str:
    if not GITFAQ.is_file():
        pytest.skip("git-doc's gitfaq.html is not installed")
    (tmp_path / "docs").mkdir()
    shutil.copy(GITFAQ, tmp_path / "docs" / "gitfaq.html")
    request_ingest(app, "gitfaq", [tmp_path / "docs"])
    while (job := queue.claim(app.db, "test-worker")) is not None:
        run_job(app, job)
    return "gitfaq"


def opened(**params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params.update({"corpus": "gitfaq", **params})
    at.run()
    assert not at.exception, at.exception
    return at


def answers_shown(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if ANSWER_MARK in m.value]


def silence_shown(at: AppTest) -> bool:
    return any(i.value == SILENCE for i in at.info)


def order(at: AppTest) -> list[str]:
    """The keys of the page's keyed blocks, in the order they are drawn."""
    keys: list[str] = []

    def walk(node) -> None:
        for child in getattr(node, "children", {}).values():
            if getattr(child, "key", None):
                keys.append(child.key)
            walk(child)
    walk(at.main)
    return keys


def test_a_question_gets_its_answers_above_the_hits_with_where_they_stand(gitfaq):
    at = opened(q=QUESTION)
    shown_answers = answers_shown(at)
    assert 1 <= len(shown_answers) <= 3, [m.value for m in at.markdown]
    assert any("undoes those changes" in a or "git revert" in a for a in shown_answers), \
        shown_answers
    keys = order(at)
    assert "answer-box" in keys and keys.index("answer-box") < keys.index("hit-1"), keys
    assert keys.index("answer-1") < keys.index("answer-box") + 2
    first = shown_answers[0]
    assert first.startswith(":gray[") and first.count(":gray[") == 2, \
        "the sentence before and after, dimmed"
    places = [c.value for c in at.caption if c.value.startswith("gitfaq.html · ")]
    assert places[0].replace("\\", "") == "gitfaq.html · gitfaq(7) Manual Page > Common Issues"
    link = next(e for e in at.get("link_button") if e.proto.label == "Open at Common Issues")
    assert link.proto.url.startswith("/view/gitfaq/gitfaq.html?mark=") and "#s-" in \
        link.proto.url
    assert list(at.button_group(key="mark-answer-1").options) == ["Right", "Wrong"]
    assert not silence_shown(at)


def test_a_question_the_documents_do_not_answer_gets_the_silence_line(gitfaq):
    at = opened(q=UNANSWERED)
    assert silence_shown(at)
    assert answers_shown(at) == []
    assert any("scores the answer threshold, 0.50 (default)" in c.value for c in at.caption)
    assert "hit-1" in order(at), "the hits are still listed under it"


def test_keywords_get_no_box_until_always_answer_is_on_and_the_address_keeps_it(gitfaq):
    at = opened(q=KEYWORDS)
    assert "answer-box" not in order(at) and not silence_shown(at)
    assert at.toggle(key="search-answer").value is False
    at.toggle(key="search-answer").set_value(True)
    at.button(key="FormSubmitter:search-form-Search").click().run()
    assert "answer-box" in order(at)
    assert answers_shown(at), "the FAQ says how to revert a pushed commit"
    assert at.query_params["answer"] == "1"

    shared = opened(q=KEYWORDS, answer="1")  # the address, opened elsewhere
    assert shared.toggle(key="search-answer").value is True
    assert answers_shown(shared) == answers_shown(at)
    off = opened(q=KEYWORDS, answer="0")
    assert off.toggle(key="search-answer").value is False and "answer-box" not in order(off)
    assert "answer" not in off.query_params, "the default is left out of the address"


def test_right_and_wrong_marks_are_answer_judgements_of_the_search(gitfaq, app):
    at = opened(q=QUESTION)
    sentences = [m.value for m in at.markdown if ANSWER_MARK in m.value]
    assert len(sentences) >= 2
    at.button_group(key="mark-answer-1").set_value("Right").run()
    at.button_group(key="mark-answer-2").set_value("Wrong").run()
    assert not at.exception
    judged = service.list_judgements(app, "gitfaq", kind="answer")
    assert [(j.query, j.a, j.label, j.source) for j in judged] == [
        (QUESTION, "gitfaq.html", 1, "search"), (QUESTION, "gitfaq.html", 0, "search")]
    assert judged[0].b in sentences[0] and judged[1].b in sentences[1]
    assert service.list_judgements(app, "gitfaq", kind="query") == []
    at.button_group(key="mark-answer-1").set_value(None).run()  # the chosen one again: undone
    assert [j.label for j in service.list_judgements(app, "gitfaq", kind="answer")] == [0]
    again = opened(q=QUESTION)  # a new session shows the stored mark
    assert again.button_group(key="mark-answer-2").value == "Wrong"


def test_the_csv_download_holds_the_answers_then_the_hits(gitfaq, app):
    at = opened(q=QUESTION)
    assert at.get("download_button")[0].proto.label == "Download (CSV)"
    hits, result = search_with_answers(app, "gitfaq", QUESTION)
    rows = list(csv.DictReader(io.StringIO(results_csv(QUESTION, hits, result))))
    kinds = [r["kind"] for r in rows]
    assert kinds == ["answer"] * len(result.answers) + ["hit"] * len(hits)
    assert rows[0]["text"] == " ".join(result.answers[0].text.split())
    assert rows[0]["path"] == "gitfaq.html" and rows[0]["section"].endswith("Common Issues")
    assert rows[0]["rank"] == "1" and float(rows[0]["answer_score"]) >= 0.5


# ---- no page needed: the box's Markdown and the CSV's cells --------------------------
HOSTILE = st.sampled_from(["[x](http://evil.example)", ":red[alarm] ]", "<img src=x>",
                           "**b** `c` $x$", "=HYPERLINK(\"http://evil.example\")", "a\n\n- b",
                           "\\]", "1. one"])
TEXT = st.one_of(HOSTILE, st.text(st.characters(blacklist_categories=("Cs",),
                                                blacklist_characters="\x00"), max_size=30))


@settings(max_examples=150, deadline=None)
@given(TEXT, TEXT, TEXT)
def test_an_answer_in_its_context_renders_as_text_whatever_the_documents_say(before, text,
                                                                            after):
    markdown = answer_markdown(Answer(text, "d", 0, 1, 0.7, 0.7, 1, before=before, after=after))
    assert set(re.findall(r"<([^>]*)>", rendered(markdown))) <= {"p", "/p"}
    parts = [f":gray[{' '.join(before.split())}]" if before.split() else "",
             f":orange-background[{' '.join(text.split())}]",
             f":gray[{' '.join(after.split())}]" if after.split() else ""]
    assert shown(markdown) == " ".join(" ".join(p for p in parts if p).split())


def test_the_csv_is_spreadsheet_safe_and_says_when_there_was_no_clear_answer():
    hit = SearchHit("=1+1", "@SUM(A1)", 0.03, snippet="@SUM(A1)", semantic_score=0.4,
                    source={"path": "-x.pdf", "type": "pdf", "page": 2, "section": None})
    answer = Answer("+cmd", "=1+1", 0, 4, 0.61, 0.66, 1, before="-b", after="=a",
                    vector=np.ones(2, np.float32))
    rows = list(csv.reader(io.StringIO(results_csv("=q", [hit], AnswerResult(True, [answer])))))
    assert rows[1][:7] == ["'=q", "answer", "1", "'=1+1", "'+cmd", "'-b", "'=a"]
    assert rows[2][:5] == ["'=q", "hit", "1", "'=1+1", "'@SUM(A1)"] and rows[2][9] == "2"
    silent = list(csv.DictReader(io.StringIO(results_csv("q", [hit], AnswerResult(True)))))
    assert [(r["kind"], r["text"]) for r in silent] == [("no clear answer", SILENCE),
                                                       ("hit", "'@SUM(A1)")]
    unasked = list(csv.DictReader(io.StringIO(results_csv("q", [hit], AnswerResult(False)))))
    assert [r["kind"] for r in unasked] == ["hit"]
