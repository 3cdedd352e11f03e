"""The answers benchmark's collections and hit rule (benchmarks/answers*.py) on small pages
written here: the question's words leave the indexed copy, the gold answer is the text under
its heading, and a sentence counts only inside that answer."""

from __future__ import annotations

from pathlib import Path

from benchmarks.answers import answers, locate, sentence_spans
from benchmarks.answers_collections import debian_collection, git_collection, words
from searchapp.intake.formats.document_readers import read_document

CHAPTER = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
 "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><title>Chapter 8. Tools</title>
</head><body><div class="chapter"><h1 class="title"><a id="tools"></a>Chapter 8. Tools</h1>
<div class="toc"><dl><dt><a href="tools.en.html#listfiles">8.1. How do I display the files of an
installed package?</a></dt><dt><a href="tools.en.html#dpkg">8.2. dpkg</a></dt></dl></div>
<div class="section"><h2 class="title"><a id="listfiles"></a>8.1. How do I display the files of an
installed package?</h2>
<p>Run dpkg with the listfiles option and the package’s name to see every file it installed on
this machine, one path per line, so that you can check where the configuration went.</p>
<p>The list comes from the package database kept under the administrative directory of the
system, which dpkg updates whenever a package is unpacked or removed.</p></div>
<div class="section"><h2 class="title"><a id="dpkg"></a>8.2. dpkg</h2>
<p>The low-level tool that unpacks archives; see <a class="xref" href="tools.en.html#listfiles"
title="8.1. How do I display the files of an installed package?">Section 8.1, “How do I display
the files of an installed package?”</a> for listing what it put where on the disk.</p></div>
</div><div class="navfooter">Prev Up Next Chapter 9. Keeping up to date</div></body></html>
"""

GITFAQ = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head>
<meta http-equiv="Content-Type" content="application/xhtml+xml; charset=UTF-8" />
<title>gitfaq(7)</title></head><body><div id="content">
<h2>Configuration</h2><div class="sectionbody"><div class="dlist"><dl>
<dt class="hdlist1">What should I put in <code>user.name</code>?</dt>
<dd><p>You should put your personal name, generally a form using a given name and family
name, which is stored in every commit you make from now on in this repository.</p></dd>
<dt class="hdlist1">How do I configure a different editor?</dt>
<dd><p>Set the core.editor configuration value or the GIT_EDITOR environment variable to the
program you want Git to start whenever it needs a message from you.</p></dd>
</dl></div></div></div><div id="footer">Last updated 2024</div></body></html>
"""


def stored_text(page: Path) -> str:
    """The page's text as the app stores it (its reader's parts joined)."""
    return "\n\n".join(d.text for d in read_document(page, page.name))


def debian(tmp_path: Path):
    source = tmp_path / "faq"
    source.mkdir()
    (source / "tools.en.html").write_text(CHAPTER, encoding="utf-8")
    return debian_collection(tmp_path / "copies", folder=source)


def test_debian_questions_leave_the_copy_and_keep_their_answers(tmp_path):
    c = debian(tmp_path)
    assert [(q.qid, q.number, q.text) for q in c.questions] == [
        ("debian-8.1", "8.1.", "How do I display the files of an installed package?")]
    copy = c.pages[0].read_text(encoding="utf-8")
    assert "display the files" not in copy  # heading, table of contents and cross-reference
    assert "Section 8.1</a>" in copy and 'id="listfiles"' in copy
    text = stored_text(c.pages[0])
    assert "display the files" not in text and "8.2. dpkg" in text
    answer = words(c.questions[0].answer)
    assert answer.startswith("run dpkg with the listfiles option")
    assert answer.endswith("unpacked or removed") and "unpacks archives" not in answer


def test_copies_read_back_in_utf8(tmp_path):
    text = stored_text(debian(tmp_path).pages[0])
    assert "package’s name" in text and "â€" not in text


def test_git_terms_are_the_questions_and_their_definitions_the_answers(tmp_path):
    page = tmp_path / "gitfaq.html"
    page.write_text(GITFAQ, encoding="utf-8")
    c = git_collection(tmp_path / "copies", page=page)
    assert [q.text for q in c.questions] == ["What should I put in user.name?",
                                             "How do I configure a different editor?"]
    assert words(c.questions[1].answer).startswith("set the core editor configuration")
    assert "last updated" not in words(c.questions[1].answer)
    text = stored_text(c.pages[0])
    assert "put in" not in text and "different editor" not in text
    assert "Set the core.editor" in text


class _Corpus:
    def __init__(self, texts: dict):
        self.texts = texts


def test_a_sentence_answers_only_inside_the_gold_answer_of_its_page(tmp_path):
    c = debian(tmp_path)
    q, text = c.questions[0], stored_text(c.pages[0])
    span, how = locate(text, q.answer)
    assert how == "exact"
    corpus = _Corpus({"tools.en.html": text, "other.html": text})
    said = {text[a:b]: (a, b) for a, b in sentence_spans(text)}
    inside = next(s for s in said if s.startswith("Run dpkg"))
    heading = next(s for s in said if s.endswith("8.1."))  # the question's heading line
    after = next(s for s in said if s.startswith("The low-level tool"))
    assert answers(("tools.en.html", *said[inside]), corpus, q.page, span)
    assert not answers(("tools.en.html", *said[heading]), corpus, q.page, span)
    assert not answers(("tools.en.html", *said[after]), corpus, q.page, span)
    assert not answers(("other.html", *said[inside]), corpus, q.page, span)


def test_an_answer_with_a_block_left_out_is_placed_by_its_ends():
    answer = " ".join(f"w{i}" for i in range(30))
    text = "intro words here\n" + " ".join(f"w{i}" for i in range(30) if not 12 <= i < 15)
    span, how = locate(text, answer)
    assert how == "ends" and text[span[0]:span[1]].startswith("w0") and text[:span[1]].endswith(
        "w29")
    assert locate("nothing alike at all", answer) == (None, "missing")
