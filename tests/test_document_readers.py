"""Document readers: each format's text, sections or pages and metadata, and every refusal.

The sample files are made here (``tests/document_files.py``); tests that read
Debian's postgresql-doc manual skip where it is not installed.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from searchapp.errors import IngestError
from searchapp.intake.formats.document import DocumentError, Limits
from searchapp.intake.formats.document_readers import document_type, read_document
from searchapp.intake.formats.html import read_html_bytes
from searchapp.intake.ingest import read_table
from tests import document_files as files

PG_DOCS = sorted(Path("/usr/share/doc").glob("postgresql-doc-*/html"))


def one(path: Path, name: str | None = None, **kw):
    docs = read_document(path, name or path.name, **kw)
    assert len(docs) == 1
    return docs[0]


def sections(doc) -> list[str | None]:
    return [p.section for p in doc.parts]


# ---- PDF ---------------------------------------------------------------------------------
def test_pdf_pages_and_metadata(tmp_path):
    path = files.make_pdf(tmp_path / "a.pdf", ["Alpha bravo.", "Charlie delta.", "Echo foxtrot."],
                          title="Manual", author="Ann")
    doc = one(path)
    assert [(p.page, p.text) for p in doc.parts] == [
        (1, "Alpha bravo."), (2, "Charlie delta."), (3, "Echo foxtrot.")]
    assert doc.meta == {"title": "Manual", "author": "Ann", "created": "2023-01-15T10:30:00+00:00",
                        "pages": "3", "type": "pdf"}
    start, end, page, _ = doc.layout[1]
    assert doc.text[start:end] == "Charlie delta." and page == 2  # the page holding that text


def test_pdf_page_without_text_is_named_when_tesseract_is_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    doc = one(files.make_pdf(tmp_path / "a.pdf", ["Words here.", None]))
    assert doc.pages_without_text == [2]
    assert "Page 2 has no text layer" in doc.notes[0] and "apt-get install tesseract-ocr" \
        in doc.notes[0]


def test_a_pdf_of_scans_only_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    """Kept empty, it would be "unchanged" when added again after the install, never read."""
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(DocumentError, match=r"a\.pdf has no text: Pages 1, 2 have no text "
                       r"layer .* not read: install .*\(apt-get install tesseract-ocr\)"):
        one(files.make_pdf(tmp_path / "a.pdf", [None, None]))


def test_pdf_pages_without_text_are_read_by_tesseract(tmp_path, monkeypatch):
    """A stand-in ``tesseract`` on PATH: called with the rendered page, its stdout is the text."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tesseract"
    fake.write_text('#!/bin/sh\ntest "$2" = stdout && head -c 2 "$1" | grep -q P5 '
                    '&& echo "Scanned words"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    calls = []
    path = files.make_pdf(tmp_path / "a.pdf", ["Typed.", None, "More.", None])
    doc = one(path, progress=lambda done, total: calls.append((done, total)))
    assert [(p.page, p.text.strip()) for p in doc.parts] == [
        (1, "Typed."), (2, "Scanned words"), (3, "More."), (4, "Scanned words")]
    assert doc.notes == ["OCR (Tesseract) read pages 2, 4."] and doc.pages_without_text == []
    assert calls == [(1, 2), (2, 2)]


def test_a_long_pdf_is_read_with_the_document_opened_again_as_it_goes(tmp_path, monkeypatch):
    """PDFium keeps every page it parsed until the document closes (a 514 MB PDF held 533 MB,
    opened again every 100 pages 91 MB): the reader opens it again every REOPEN_PAGES pages,
    and every page keeps its text and its number."""
    from searchapp.intake.formats import pdf as pdf_reader

    monkeypatch.setattr(pdf_reader, "REOPEN_PAGES", 2)
    opened, real_open = [], pdf_reader._open
    monkeypatch.setattr(pdf_reader, "_open", lambda *a: opened.append(a) or real_open(*a))
    doc = one(files.make_pdf(tmp_path / "long.pdf", [f"Page {n} words." for n in range(1, 6)]))
    assert [(p.page, p.text.strip()) for p in doc.parts] == [
        (n, f"Page {n} words.") for n in range(1, 6)]
    assert len(opened) == 3  # pages 1-2, 3-4, 5


def test_pdf_with_a_password_is_refused(tmp_path):
    path = files.make_pdf(tmp_path / "secret.pdf", ["Hidden."], password="pw")
    with pytest.raises(DocumentError, match=r"secret\.pdf is encrypted with a password"):
        read_document(path, "secret.pdf")


def test_pdf_with_too_many_pages_is_refused(tmp_path):
    path = files.make_pdf(tmp_path / "long.pdf", ["a", "b", "c"])
    with pytest.raises(DocumentError, match=r"3 pages, more than the limit of 2.*"
                                            "SEARCHAPP_MAX_PAGES"):
        read_document(path, "long.pdf", Limits(max_pages=2))


@pytest.mark.parametrize("data,what", [
    (b"PK\x03\x04" + bytes(40), "a zip archive"),
    (b"<!DOCTYPE html><html><body>Hi</body></html>", r"a web page \(HTML\)"),
])
def test_a_pdf_that_is_something_else_says_what_it_is(tmp_path, data, what):
    (tmp_path / "a.pdf").write_bytes(data)
    with pytest.raises(DocumentError, match=rf"a\.pdf is not a PDF: it looks like {what}"):
        read_document(tmp_path / "a.pdf", "a.pdf")


# ---- Word and PowerPoint -------------------------------------------------------------------
def test_docx_sections_tables_and_properties(tmp_path):
    doc = one(files.make_docx(tmp_path / "g.docx"))
    assert sections(doc) == ["Guide", "1 Intro", "1 Intro > 1.2 Scope", "2 Use"]
    assert doc.parts[2].text == "1.2 Scope\nScope covers widgets.\nName | Size\nBolt | M6"
    assert doc.meta["title"] == "The Guide" and doc.meta["author"] == "Ann Author"
    assert doc.meta["created"].startswith("2022-05-01T08:00:00") and doc.meta["type"] == "docx"


def test_pptx_one_part_per_slide_with_notes(tmp_path):
    doc = one(files.make_pptx(tmp_path / "s.pptx"))
    assert [(p.page, p.section) for p in doc.parts] == [(1, "Welcome"), (2, "Results")]
    assert doc.parts[0].text == "Welcome\nAgenda for today\nSpeak slowly"
    assert "Sales grew" in doc.parts[1].text
    assert doc.meta["title"] == "Quarterly" and doc.meta["pages"] == "2"


def test_damaged_docx_is_refused(tmp_path):
    data = files.make_docx(tmp_path / "g.docx").read_bytes()
    (tmp_path / "bad.docx").write_bytes(data[: len(data) // 2])  # cut: no central directory
    with pytest.raises(DocumentError, match=r"bad\.docx is not a valid Word document file "
                                            r"\(damaged or not what its name says\)"):
        read_document(tmp_path / "bad.docx", "bad.docx")


def test_a_docx_zip_bomb_is_refused_before_unpacking(tmp_path):
    source = files.make_docx(tmp_path / "g.docx")
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(source) as z, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        for item in z.infolist():
            out.writestr(item, z.read(item))
        out.writestr("word/media/filler.bin", bytes(8 << 20))  # 8 MiB of zeros: ratio ~1000
    with pytest.raises(DocumentError, match=r"filler\.bin would unpack to 8,388,608 bytes.*"
                                            "zip bomb"):
        read_document(bomb, "bomb.docx")
    with pytest.raises(DocumentError, match=r"would unpack to .* more than the limit"):
        read_document(source, "g.docx", Limits(max_expanded_bytes=1000))


def _with_entity(source: Path, target: Path, member: str) -> Path:
    with zipfile.ZipFile(source) as z, zipfile.ZipFile(target, "w") as out:
        for item in z.infolist():
            data = z.read(item)
            if item.filename == member:
                data = data.replace(b"?>", b'?><!DOCTYPE x [<!ENTITY a "aaaa">]>', 1)
            out.writestr(item, data)
    return target


def test_xml_entities_in_a_docx_are_refused(tmp_path):
    path = _with_entity(files.make_docx(tmp_path / "g.docx"), tmp_path / "e.docx",
                        "word/document.xml")
    with pytest.raises(DocumentError, match=r"e\.docx: member word/document\.xml declares XML "
                                            "entities"):
        read_document(path, "e.docx")


# ---- OpenDocument ----------------------------------------------------------------------
def test_odt_headings_lists_tables_and_meta(tmp_path):
    doc = one(files.make_odt(tmp_path / "a.odt"))
    assert sections(doc) == ["Chapter One", "Chapter One > Detail", "Chapter Two"]
    assert doc.parts[1].text == "Detail\nDeep  words.\nk | v"
    assert doc.parts[2].text == "Chapter Two\nListed item."
    assert doc.meta == {"title": "Odt Title", "author": "Olga", "created": "2021-03-04T05:06:07",
                        "type": "odt"}


def test_odp_one_part_per_slide(tmp_path):
    doc = one(files.make_odp(tmp_path / "a.odp"))
    assert [(p.page, p.section, p.text) for p in doc.parts] == [
        (1, "Opening", "Opening\nHello all\nSmile"), (2, "Closing", "Closing\nThanks")]


def test_odt_with_an_entity_or_doctype_is_refused(tmp_path):
    path = files.make_odt(tmp_path / "e.odt", prolog=files.ENTITY_PROLOG)
    with pytest.raises(DocumentError, match=r"content\.xml declares XML entities"):
        read_document(path, "e.odt")
    path = files.make_odt(tmp_path / "d.odt", prolog='<!DOCTYPE x SYSTEM "http://x/y.dtd">')
    with pytest.raises(DocumentError, match="has a document type declaration"):
        read_document(path, "d.odt")


# ---- web pages ------------------------------------------------------------------------
PAGE = b"""<!DOCTYPE html><html><head><title>Widget manual</title><script>var x = 1;</script>
<style>body {}</style></head><body>
<header><a href="/">Home</a> <a href="/shop">Shop</a></header>
<nav><ul><li><a href="/a">Menu entry one</a></li><li><a href="/b">Menu entry two</a></li></ul></nav>
<div class="sidebar">Related links and advertising</div>
<main><h1>Installing widgets</h1>
<p>Widgets are installed by unpacking the archive into the folder of your choice, which
takes a minute or two on most machines.</p>
<h2>Requirements</h2><p>You need a screwdriver and some patience to finish the whole job.</p>
<table><tr><th>Part</th><th>Count</th></tr><tr><td>Bolt</td><td>12</td></tr></table>
<h2>Upgrading</h2><p>Upgrading replaces the old files and keeps your own settings intact.</p>
</main><aside>Popular posts this week</aside>
<footer>Copyright 2024 Widget Corp. All rights reserved.</footer></body></html>"""


def test_html_main_content_with_sections_and_no_boilerplate(tmp_path):
    (tmp_path / "w.html").write_bytes(PAGE)
    doc = one(tmp_path / "w.html")
    assert doc.meta == {"title": "Widget manual", "type": "html"}
    assert sections(doc) == ["Installing widgets", "Installing widgets > Requirements",
                             "Installing widgets > Upgrading"]
    assert "Part | Count\nBolt | 12" in doc.parts[1].text
    for junk in ("Home", "Menu entry", "Related links", "Popular posts", "Copyright", "var x"):
        assert junk not in doc.text


def test_html_without_landmarks_keeps_what_trafilatura_finds_to_be_content():
    page = PAGE.replace(b"<main>", b"<div>").replace(b"</main>", b"</div><div><a href='/p'>"
                                                     b"Privacy policy</a> | <a href='/t'>Terms "
                                                     b"of use</a></div>")
    doc = read_html_bytes(page, "w.html")
    assert "Part | Count\nBolt | 12" in doc.text and "Upgrading replaces" in doc.text
    assert "Privacy policy" not in doc.text and "Terms of use" not in doc.text


def test_html_tiny_page_falls_back_to_its_body():
    doc = read_html_bytes(b"<html><body><p>Hi.</p></body></html>", "t.html")
    assert doc.text == "Hi."


@pytest.mark.skipif(not PG_DOCS, reason="Debian's postgresql-doc is not installed "
                                        "(apt-get install postgresql-doc)")
def test_postgresql_manual_page_without_its_navigation():
    doc = one(PG_DOCS[-1] / "sql-select.html")
    assert doc.meta["title"] == "SELECT"
    assert "Synopsis" in sections(doc) and "Parameters > WITH Clause" in sections(doc)
    assert "SELECT retrieves rows from zero or more tables" in doc.text
    for junk in ("Prev", "Next", "Home", "Up", "Submit correction"):
        assert not any(line.strip() == junk for line in doc.text.splitlines()), junk
    assert "PostgreSQL 1" not in doc.text.splitlines()[0]  # the navheader's version line


GIT_DOCS = Path("/usr/share/doc/git-doc")


@pytest.mark.skipif(not PG_DOCS, reason="Debian's postgresql-doc is not installed "
                                        "(apt-get install postgresql-doc)")
def test_postgresql_reference_page_keeps_its_see_also_list():
    """The list of links closing a page, under its own heading right after the content:
    content, though trafilatura drops it and most of its characters are links."""
    doc = one(PG_DOCS[-1] / "sql-vacuum.html")
    assert "See Also" in sections(doc)
    assert "vacuumdb, Section 20.4.4, Section 25.1.6" in doc.text


@pytest.mark.skipif(not (GIT_DOCS / "gitworkflows.html").exists(),
                    reason="Debian's git-doc is not installed (apt-get install git-doc)")
def test_git_manual_page_keeps_captions_and_see_also_but_not_its_footer():
    doc = one(GIT_DOCS / "gitworkflows.html")
    lines = doc.text.splitlines()
    assert "Recipe: Release tagging" in lines  # a caption between two kept blocks
    assert "SEE ALSO\ngittutorial(7),\ngit-push(1)," in doc.text
    assert "Last updated" not in doc.text  # after the last kept block: the footer


def test_html_links_under_a_heading_after_the_content_are_content_but_a_menu_is_not():
    body = " ".join(f"Sentence {n} explains how the widget is cleaned and stored safely."
                    for n in range(12))
    page = (f"<html><head><title>Widgets</title></head><body>"
            f"<div class='wrap'><h1>Widgets</h1><p>{body}</p>"
            f"<h2>See also</h2><p><a href='a.html'>Gadgets</a>, <a href='b.html'>Gizmos</a>"
            f"</p></div><div><ul><li><a href='/x'>Shop</a></li><li><a href='/y'>Careers</a>"
            f"</li></ul></div></body></html>").encode()
    doc = read_html_bytes(page, "w.html")
    assert "Gadgets, Gizmos" in doc.text and sections(doc)[-1] == "Widgets > See also"
    for junk in ("Shop", "Careers"):
        assert junk not in doc.text


# ---- Markdown, reStructuredText, text, RTF ----------------------------------------------
def test_markdown_headings_and_front_matter(tmp_path):
    (tmp_path / "n.md").write_text(
        "---\ntitle: Notes\nauthor: Kim\ndate: 2024-02-03\ntags: [db, sql]\n---\n"
        "Intro line.\n\n# Setup\nInstall it.\n\n```sh\n# not a heading\n```\n"
        "Config\n======\nEdit the file.\n\n## Deep ##\nMore.\n", encoding="utf-8")
    doc = one(tmp_path / "n.md")
    assert doc.meta == {"title": "Notes", "author": "Kim", "date": "2024-02-03",
                        "tags": "db, sql", "type": "md"}
    assert sections(doc) == [None, "Setup", "Config", "Config > Deep"]
    assert "# not a heading" in doc.parts[1].text and doc.parts[3].text == "Deep\nMore."


def test_rst_titles_by_adornment(tmp_path):
    (tmp_path / "r.rst").write_text(
        "=======\nManual\n=======\n\nOverview\n========\nSome text.\n\nDetails\n-------\n"
        "Fine print.\n\n----\n\nAgain\n=====\nLast.\n", encoding="utf-8")
    doc = one(tmp_path / "r.rst")
    assert sections(doc) == ["Manual > Overview", "Manual > Overview > Details",
                             "Manual > Again"]
    assert doc.parts[1].text == "Details\nFine print."


def test_txt_whole_file_or_pages_and_encodings(tmp_path):
    (tmp_path / "a.txt").write_bytes("\ufeffline one\nline two\n".encode())
    assert one(tmp_path / "a.txt").text == "line one\nline two"
    (tmp_path / "p.txt").write_bytes("page one\fpage two\n".encode("utf-16"))
    doc = one(tmp_path / "p.txt")
    assert [(p.page, p.text) for p in doc.parts] == [(1, "page one"), (2, "page two")]
    (tmp_path / "l.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DocumentError, match=r"l\.txt is not UTF-8 text.*Save it as UTF-8"):
        read_document(tmp_path / "l.txt", "l.txt")


def test_rtf_text_and_info(tmp_path):
    (tmp_path / "a.rtf").write_bytes(rb"{\rtf1\ansi\ansicpg1252{\info{\title Memo}{\author Lee}}"
                                     rb"Caf\'e9 opens at \b nine\b0.\par Second line.\par}")
    doc = one(tmp_path / "a.rtf")
    assert doc.text == "Café opens at nine.\nSecond line."
    assert doc.meta == {"title": "Memo", "author": "Lee", "type": "rtf"}


# ---- EPUB ----------------------------------------------------------------------------
def test_epub_chapters_in_spine_order_named_by_the_toc(tmp_path):
    doc = one(files.make_epub(tmp_path / "b.epub"))
    assert sections(doc) == ["Chapter the First", "The Second"]
    assert "harbour at dawn" in doc.parts[0].text and "storm" in doc.parts[1].text
    assert doc.meta == {"title": "Sea Tales", "author": "Mara Writer", "created": "2020-06-01",
                        "type": "epub"}


def test_epub_chapter_with_an_internal_subset_is_refused(tmp_path):
    members = files.epub_members(chapter_prolog='<!DOCTYPE html [<!ENTITY a "b">]>')
    with pytest.raises(DocumentError, match=r"one\.xhtml declares XML entities"):
        read_document(files.make_epub(tmp_path / "e.epub", members), "e.epub")


# ---- e-mail --------------------------------------------------------------------------
def test_eml_plain_text_headers_and_attachments(tmp_path):
    """Attachments of a type we read (a PDF, an image for OCR) are handed on; others not."""
    msg = files.message("Budget", "Numbers are attached.\n",
                        attachments=(("report.pdf", b"%PDF-1.4 x"), ("photo.jpg", b"\xff\xd8"),
                                     ("tool.exe", b"MZ")))
    (tmp_path / "m.eml").write_bytes(msg.as_bytes())
    doc = one(tmp_path / "m.eml")
    assert doc.parts[0].text == "Numbers are attached." and doc.parts[0].section == "Budget"
    assert doc.meta == {"subject": "Budget", "from": "ann@example.org", "to": "bob@example.org",
                        "message_id": "<m1@example.org>", "date": "2024-01-02T10:00:00+01:00",
                        "type": "eml"}
    assert [(a.name, a.data) for a in doc.attachments] == [("report.pdf", b"%PDF-1.4 x"),
                                                           ("photo.jpg", b"\xff\xd8")]


def test_eml_attachments_are_bounded(tmp_path):
    atts = tuple((f"r{i}.txt", b"text") for i in range(3))
    (tmp_path / "m.eml").write_bytes(files.message("S", "Body", attachments=atts).as_bytes())
    doc = one(tmp_path / "m.eml", limits=Limits(max_attachments=2))
    assert len(doc.attachments) == 2 and "r2.txt" in doc.notes[0]


def test_eml_html_only_body_is_read_as_a_page(tmp_path):
    msg = files.message("News", "", html="<html><body><nav>Unsubscribe</nav><p>Big news "
                                         "today.</p></body></html>")
    (tmp_path / "h.eml").write_bytes(msg.as_bytes())
    assert one(tmp_path / "h.eml").text == "Big news today."


def test_mbox_one_document_per_message(tmp_path):
    box = b"".join(b"From ann@example.org Tue Jan  2 10:00:00 2024\n"
                   + files.message(s, f"Body of {s}.\n").as_bytes() + b"\n"
                   for s in ("First", "Second"))
    (tmp_path / "box.mbox").write_bytes(box)
    docs = read_document(tmp_path / "box.mbox", "box.mbox")
    assert [(d.suffix, d.meta["message"], d.parts[0].section, d.text) for d in docs] == [
        ("#1", "1", "First", "Body of First."), ("#2", "2", "Second", "Body of Second.")]


# ---- the registry ------------------------------------------------------------------------
def test_document_types():
    assert [document_type(n) for n in ("a.PDF", "b.htm", "c.xhtml", "d.markdown", "e.mbox",
                                       "f.csv", "g")] == ["pdf", "html", "html", "md", "mbox",
                                                          None, None]


@pytest.mark.parametrize("name", ["e.pdf", "e.docx", "e.md", "e.txt", "e.epub"])
def test_an_empty_file_is_refused(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    with pytest.raises(DocumentError, match=rf"{name} is empty: it has no text"):
        read_document(tmp_path / name, name)


def test_a_file_without_text_is_refused(tmp_path):
    (tmp_path / "blank.md").write_text("\n\n   \n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"blank\.md has no text"):
        read_document(tmp_path / "blank.md", "blank.md")


def test_text_over_the_limit_is_refused(tmp_path):
    (tmp_path / "big.md").write_text("word " * 100, encoding="utf-8")
    with pytest.raises(DocumentError, match=r"big\.md is longer than 50 characters"):
        read_document(tmp_path / "big.md", "big.md", Limits(max_text_chars=50))
    (tmp_path / "w.html").write_bytes(PAGE)  # read first, then measured
    with pytest.raises(DocumentError, match=r"w\.html has 3\d\d characters of text, more than "
                                            "the limit of 200"):
        read_document(tmp_path / "w.html", "w.html", Limits(max_text_chars=200))


def test_docx_that_is_a_pdf_says_so(tmp_path):
    path = files.make_pdf(tmp_path / "x.pdf", ["Hi"])
    with pytest.raises(DocumentError, match=r"w\.docx is not a Word document: it looks like a "
                                            "PDF"):
        read_document(path, "w.docx")


# ---- spreadsheets as tables ----------------------------------------------------------------
def test_xlsx_rows_as_the_sheet_shows_them(tmp_path):
    rows = [["id", "text", "price"], [1, "Bolt", 2.5], [2, "Nut", 3], ["", "", ""],
            [3, "Washer", 10]]
    path = files.write_zip(tmp_path / "p.xlsx", files.xlsx_members(rows, sheets=("Data", "More")))
    table = read_table(path)
    assert table.columns == ["id", "text", "price"]
    assert list(table.rows()) == [(2, {"id": "1", "text": "Bolt", "price": "2.5"}),
                                  (3, {"id": "2", "text": "Nut", "price": "3"}),
                                  (5, {"id": "3", "text": "Washer", "price": "10"})]
    assert table.label(5) == "row 5" and "also in it: More" in table.notes[0]


def test_xlsx_with_an_entity_or_not_a_zip_is_refused(tmp_path):
    members = files.xlsx_members([["text"], ["a"]], sheet_prolog=files.ENTITY_PROLOG)
    path = files.write_zip(tmp_path / "e.xlsx", members)
    with pytest.raises(IngestError, match=r"sheet1\.xml declares XML entities"):
        read_table(path)
    with pytest.raises(IngestError, match=r"Cannot open n\.xlsx as an Excel workbook .*"
                                          "CSV UTF-8"):
        read_table(io.BytesIO(b"id,text\n1,a\n"), "n.xlsx")


@pytest.mark.skipif(not __import__("shutil").which("tesseract"),
                    reason="Debian's tesseract-ocr is not installed (apt-get install "
                    "tesseract-ocr)")
def test_a_scanned_page_is_read_by_the_real_tesseract(tmp_path):
    """A page that is only a picture of text (no text layer), read by Tesseract itself."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    font = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    if not font.exists():
        pytest.skip("the DejaVu font (fonts-dejavu-core) is not installed")
    picture = Image.new("L", (1700, 300), 255)
    ImageDraw.Draw(picture).text((60, 100), "Invoices are paid within thirty days",
                                 font=ImageFont.truetype(str(font), 64), fill=0)
    picture.save(tmp_path / "scan.png")
    pdf = FPDF()
    pdf.add_page()
    pdf.image(str(tmp_path / "scan.png"), x=10, y=20, w=190)
    pdf.output(str(tmp_path / "scan.pdf"))
    doc = one(tmp_path / "scan.pdf")
    assert doc.pages_without_text == [] and doc.notes == ["OCR (Tesseract) read page 1."]
    words = doc.text.lower().split()
    assert {"invoices", "paid", "thirty", "days"} <= set(words), doc.text
