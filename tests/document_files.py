"""Sample document files made on the spot for the document reader tests (tmp_path only).

Each ``make_*`` writes one file and returns its path: PDFs by fpdf2, Word and
PowerPoint by python-docx and python-pptx, OpenDocument, EPUB and XLSX as zip
archives of hand-written XML (so a test can slip in what a hostile file would),
e-mail by the standard library.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from email.message import EmailMessage
from pathlib import Path

ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
          'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
          'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
          'xmlns:dc="http://purl.org/dc/elements/1.1/"')
ENTITY_PROLOG = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]>'


def make_pdf(path: Path, pages: list[str | None], title: str = "", author: str = "",
             password: str | None = None) -> Path:
    """One page per item: its text, or None for a page with no text layer (a drawn box)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text is None:
            pdf.rect(20, 20, 100, 50, style="F")
        else:
            pdf.multi_cell(0, 8, text=text)
    if title:
        pdf.set_title(title)
    if author:
        pdf.set_author(author)
    pdf.set_creation_date(dt.datetime(2023, 1, 15, 10, 30, tzinfo=dt.UTC))
    if password:
        pdf.set_encryption(owner_password="owner", user_password=password)
    pdf.output(str(path))
    return path


def make_docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_heading("Guide", 0)
    d.add_paragraph("Preface text.")
    d.add_heading("1 Intro", 1)
    d.add_paragraph("The intro explains goals.")
    d.add_heading("1.2 Scope", 2)
    d.add_paragraph("Scope covers widgets.")
    table = d.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "Name", (0, 1): "Size", (1, 0): "Bolt", (1, 1): "M6"}.items():
        table.cell(r, c).text = text
    d.add_heading("2 Use", 1)
    d.add_paragraph("Use it daily.")
    d.core_properties.title, d.core_properties.author = "The Guide", "Ann Author"
    d.core_properties.created = dt.datetime(2022, 5, 1, 8, 0, 0)
    d.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    import pptx

    p = pptx.Presentation()
    slide = p.slides.add_slide(p.slide_layouts[1])
    slide.shapes.title.text = "Welcome"
    slide.placeholders[1].text = "Agenda for today"
    slide.notes_slide.notes_text_frame.text = "Speak slowly"
    slide = p.slides.add_slide(p.slide_layouts[5])
    slide.shapes.title.text = "Results"
    box = slide.shapes.add_textbox(0, 0, 100, 100)
    box.text_frame.text = "Sales grew"
    p.core_properties.title = "Quarterly"
    p.save(str(path))
    return path


def write_zip(path: Path, members: dict[str, str | bytes], stored_first: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if stored_first:
            z.writestr(zipfile.ZipInfo(stored_first), members[stored_first])
        for name, data in members.items():
            if name != stored_first:
                z.writestr(name, data)
    return path


def odt_members(body: str, prolog: str = '<?xml version="1.0"?>') -> dict[str, str]:
    return {
        "mimetype": "application/vnd.oasis.opendocument.text",
        "content.xml": f"{prolog}<office:document-content {ODF_NS}><office:body><office:text>"
                       f"{body}</office:text></office:body></office:document-content>",
        "meta.xml": f'<?xml version="1.0"?><office:document-meta {ODF_NS}><office:meta>'
                    "<dc:title>Odt Title</dc:title><meta:initial-creator>Olga</meta:initial-"
                    "creator><meta:creation-date>2021-03-04T05:06:07</meta:creation-date>"
                    "</office:meta></office:document-meta>",
    }


ODT_BODY = ('<text:h text:outline-level="1">Chapter One</text:h><text:p>First words.</text:p>'
            '<text:h text:outline-level="2">Detail</text:h><text:p>Deep<text:s text:c="2"/>'
            "words.</text:p><table:table><table:table-row><table:table-cell><text:p>k</text:p>"
            "</table:table-cell><table:table-cell><text:p>v</text:p></table:table-cell>"
            '</table:table-row></table:table><text:h text:outline-level="1">Chapter Two</text:h>'
            "<text:list><text:list-item><text:p>Listed item.</text:p></text:list-item>"
            "</text:list>")


def make_odt(path: Path, body: str = ODT_BODY, prolog: str = '<?xml version="1.0"?>') -> Path:
    return write_zip(path, odt_members(body, prolog), stored_first="mimetype")


def make_odp(path: Path) -> Path:
    def page(title: str, text: str, notes: str = "") -> str:
        note = (f"<presentation:notes><draw:frame><draw:text-box><text:p>{notes}</text:p>"
                "</draw:text-box></draw:frame></presentation:notes>") if notes else ""
        return (f'<draw:page draw:name="p"><draw:frame presentation:class="title"><draw:text-box>'
                f"<text:p>{title}</text:p></draw:text-box></draw:frame><draw:frame><draw:text-box>"
                f"<text:p>{text}</text:p></draw:text-box></draw:frame>{note}</draw:page>")

    members = {
        "mimetype": "application/vnd.oasis.opendocument.presentation",
        "content.xml": f'<?xml version="1.0"?><office:document-content {ODF_NS}><office:body>'
                       f"<office:presentation>{page('Opening', 'Hello all', 'Smile')}"
                       f"{page('Closing', 'Thanks')}</office:presentation></office:body>"
                       "</office:document-content>",
    }
    return write_zip(path, members, stored_first="mimetype")


def epub_members(chapter_prolog: str = "<!DOCTYPE html>") -> dict[str, str]:
    def chapter(title: str, text: str) -> str:
        return (f'{chapter_prolog}<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}'
                f"</title></head><body><h1>{title}</h1><p>{text}</p></body></html>")

    return {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml":
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
            'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" '
            'media-type="application/oebps-package+xml"/></rootfiles></container>',
        "OEBPS/content.opf":
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Sea Tales</dc:title>'
            "<dc:creator>Mara Writer</dc:creator><dc:date>2020-06-01</dc:date></metadata>"
            '<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" '
            'properties="nav"/><item id="c2" href="text/two.xhtml" media-type="application/'
            'xhtml+xml"/><item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>'
            '</manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>',
        "OEBPS/nav.xhtml":
            '<html xmlns="http://www.w3.org/1999/xhtml"><body><nav><ol><li><a href="text/one.'
            'xhtml">Chapter the First</a></li><li><a href="text/two.xhtml#s">The Second</a></li>'
            "</ol></nav></body></html>",
        "OEBPS/text/one.xhtml": chapter("One", "The ship left the harbour at dawn."),
        "OEBPS/text/two.xhtml": chapter("Two", "A storm rose in the night."),
    }


def make_epub(path: Path, members: dict[str, str] | None = None) -> Path:
    return write_zip(path, members or epub_members(), stored_first="mimetype")


def xlsx_members(rows: list[list[str | int | float]], sheet_prolog: str = '<?xml version="1.0"?>',
                 sheets: tuple[str, ...] = ("Data",)) -> dict[str, str]:
    """A minimal workbook: the first sheet holds ``rows`` (numbers as numbers, text inline)."""
    def cell(ref: str, value) -> str:
        if isinstance(value, int | float):
            return f'<c r="{ref}"><v>{value}</v></c>'
        return f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>'

    data = "".join(
        f'<row r="{r}">' + "".join(cell(f"{chr(65 + c)}{r}", v) for c, v in enumerate(row))
        + "</row>" for r, row in enumerate(rows, 1))
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    members = {
        "[Content_Types].xml":
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats'
            '-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/>' + "".join(
                f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/vnd.'
                'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
                for i in range(1, len(sheets) + 1)) + "</Types>",
        "_rels/.rels":
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            f'2006/relationships"><Relationship Id="rId1" Type="{rel}/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml":
            f'<?xml version="1.0"?><workbook {ns} xmlns:r="{rel}"><sheets>' + "".join(
                f'<sheet name="{n}" sheetId="{i}" r:id="rId{i}"/>'
                for i, n in enumerate(sheets, 1)) + "</sheets></workbook>",
        "xl/_rels/workbook.xml.rels":
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships">' + "".join(
                f'<Relationship Id="rId{i}" Type="{rel}/worksheet" '
                f'Target="worksheets/sheet{i}.xml"/>'
                for i in range(1, len(sheets) + 1)) + "</Relationships>",
    }
    for i in range(1, len(sheets) + 1):
        body = data if i == 1 else ""
        members[f"xl/worksheets/sheet{i}.xml"] = (
            f"{sheet_prolog}<worksheet {ns}><sheetData>{body}"
            "</sheetData></worksheet>")
    return members


def message(subject: str, body: str, html: str = "",
            attachments: tuple[tuple[str, bytes], ...] = ()) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"], msg["From"], msg["To"] = subject, "ann@example.org", "bob@example.org"
    msg["Date"], msg["Message-ID"] = "Tue, 02 Jan 2024 10:00:00 +0100", "<m1@example.org>"
    if body:
        msg.set_content(body)
    if html:
        if body:
            msg.add_alternative(html, subtype="html")
        else:
            msg.set_content(html, subtype="html")
    for name, data in attachments:
        msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return msg
