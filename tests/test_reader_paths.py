"""Every path a reader has to text, and a refusal only after all of them found none.

Images read by OCR (the real Tesseract; skipped, saying why, where it is absent),
a picture too large to decode, a PowerPoint chart whose only words are its labels,
a Word document whose only words are in a text box or its header, an e-mail digest
whose text is only in its inner messages, and the refusal of a file without text
naming what its format's reader tried. Files are made here, in the test's folder.
"""

from __future__ import annotations

import os
import shutil
import stat
import struct
import zlib
from pathlib import Path

import pytest

from searchapp.intake.formats import image as image_reader
from searchapp.intake.formats.document import DocumentError, Limits
from searchapp.intake.formats.document_readers import read_document
from tests import document_files as files

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
needs_tesseract = pytest.mark.skipif(
    not shutil.which("tesseract") or not FONT.exists(),
    reason="Debian's tesseract-ocr (apt-get install tesseract-ocr) or the DejaVu font "
    "(fonts-dejavu-core) is not installed")


def one(path: Path, name: str | None = None, **kw):
    docs = read_document(path, name or path.name, **kw)
    assert len(docs) == 1
    return docs[0]


def words(doc) -> set[str]:
    return set(doc.text.lower().replace(".", " ").split())


def drawn(text: str, mode: str = "L", ground=255, ink=0, size=(1500, 220)):
    """A picture of ``text`` in black DejaVu Sans, 60 px high."""
    from PIL import Image, ImageDraw, ImageFont

    picture = Image.new(mode, size, ground)
    ImageDraw.Draw(picture).text((40, 70), text, font=ImageFont.truetype(str(FONT), 60),
                                 fill=ink)
    return picture


def no_tesseract(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))


# ---- images ------------------------------------------------------------------------------
@needs_tesseract
@pytest.mark.parametrize("name,save", [
    ("scan.png", {}), ("photo.jpg", {"quality": 90}), ("fax.tiff", {}), ("shot.webp",
                                                                          {"lossless": True})])
def test_an_image_is_a_document_read_by_ocr(tmp_path, name, save):
    drawn("Invoices are paid within thirty days").save(tmp_path / name, **save)
    calls = []
    doc = one(tmp_path / name, progress=lambda done, total: calls.append((done, total)))
    assert {"invoices", "paid", "thirty", "days"} <= words(doc), doc.text
    assert doc.notes == ["OCR (Tesseract) read the image."] and calls == [(1, 1)]
    assert doc.meta["type"] == {"png": "png", "jpg": "jpeg", "tiff": "tiff",
                                "webp": "webp"}[name.rsplit(".", 1)[1]]
    assert (doc.meta["width"], doc.meta["height"]) == ("1500", "220")


@needs_tesseract
def test_black_text_on_a_transparent_ground_is_read(tmp_path):
    """Transparent pixels are black with alpha 0: made gray as they are, the text vanishes."""
    drawn("Transparent ground reads fine", "RGBA", (0, 0, 0, 0), (0, 0, 0, 255)).save(
        tmp_path / "logo.png")
    assert {"transparent", "ground", "reads"} <= words(one(tmp_path / "logo.png"))


@needs_tesseract
def test_a_multi_frame_tiff_is_one_page_per_frame(tmp_path):
    blank = drawn("")
    blank.save(tmp_path / "fax.tif", save_all=True,
               append_images=[drawn("Second page words"), drawn("Third page here")])
    doc = one(tmp_path / "fax.tif")
    assert [p.page for p in doc.parts] == [2, 3] and doc.meta["pages"] == "3"
    assert "second" in doc.parts[0].text.lower() and "third" in doc.parts[1].text.lower()
    assert doc.notes == ["OCR (Tesseract) read 2 of its 3 frames.", "Frames without text: 1."]
    with pytest.raises(DocumentError, match=r"fax\.tif has 3 frames \(pages\), more than the "
                                            "limit of 2"):
        read_document(tmp_path / "fax.tif", "fax.tif", Limits(max_pages=2))


@needs_tesseract
def test_an_image_without_text_is_refused_saying_ocr_found_none(tmp_path):
    drawn("").save(tmp_path / "blank.png")
    with pytest.raises(DocumentError, match=r"^blank\.png has no text: OCR \(Tesseract\) found "
                                            "no text in the image"):
        read_document(tmp_path / "blank.png", "blank.png")


def test_without_tesseract_an_image_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    from PIL import Image

    Image.new("L", (20, 20), 255).save(tmp_path / "a.png")
    no_tesseract(tmp_path, monkeypatch)
    with pytest.raises(DocumentError, match=r"a\.png is an image, whose text only OCR can read, "
                       r"and Tesseract is not installed: .*\(apt-get install tesseract-ocr\)"):
        read_document(tmp_path / "a.png", "a.png")


def png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width`` x ``height`` gray pixels and holds a few bytes of them:
    what a decompression bomb looks like to a reader before it decodes."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("width,height", [(100_000, 100_000), (10_000, 9_000), (9_500, 9_500)])
def test_a_decompression_bomb_is_refused_before_it_is_decoded(tmp_path, monkeypatch, width,
                                                               height):
    """Past Pillow's bound twice over (its error), past it (its warning), past ours."""
    bin_dir = tmp_path / "bin"  # a stand-in tesseract: the refusal comes before any OCR
    bin_dir.mkdir()
    (bin_dir / "tesseract").write_text("#!/bin/sh\necho never\n")
    (bin_dir / "tesseract").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    (tmp_path / "bomb.png").write_bytes(png_header(width, height))
    with pytest.raises(DocumentError, match=r"bomb\.png is too large an image to read .*"
                                            "decompression bomb. Scale it down"):
        read_document(tmp_path / "bomb.png", "bomb.png")


def test_our_own_pixel_cap_is_checked_frame_by_frame(tmp_path, monkeypatch):
    from PIL import Image

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tesseract").write_text("#!/bin/sh\necho never\n")
    (bin_dir / "tesseract").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(image_reader, "MAX_IMAGE_PIXELS", 5_000)
    Image.new("L", (60, 60), 255).save(tmp_path / "ok.png")  # 3,600 pixels
    assert one(tmp_path / "ok.png").text.strip() == "never"
    Image.new("L", (80, 80), 255).save(tmp_path / "big.png")  # 6,400 pixels
    with pytest.raises(DocumentError, match=r"big\.png is too large an image to read \(80 x 80 "
                                            "pixels; the limit is 5,000"):
        read_document(tmp_path / "big.png", "big.png")


def test_an_image_named_as_another_image_is_read_but_a_page_named_png_is_not(tmp_path,
                                                                           monkeypatch):
    from PIL import Image

    no_tesseract(tmp_path, monkeypatch)
    Image.new("L", (20, 20), 255).save(tmp_path / "x.jpg", format="PNG")
    with pytest.raises(DocumentError, match="Tesseract is not installed"):  # got to the reader
        read_document(tmp_path / "x.jpg", "x.jpg")
    (tmp_path / "p.png").write_text("<!DOCTYPE html><html><body>Hi</body></html>")
    with pytest.raises(DocumentError, match=r"p\.png is not a PNG image: it looks like a web "
                                            "page"):
        read_document(tmp_path / "p.png", "p.png")


# ---- PowerPoint: charts, and what a refusal names -------------------------------------------
def chart_only_pptx(path: Path) -> Path:
    """One slide (blank layout) whose only shape is a chart: no title, no box, no notes."""
    import pptx
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    data = CategoryChartData()
    data.categories = ["Northern region", "Southern region"]
    data.add_series("Turbine output", (3.5, 4.2))
    data.add_series("Grid demand", (2.0, 5.1))
    frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, 0, 0, Inches(6), Inches(4),
                                   data)
    chart = frame.chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Wind farm capacity"
    chart.value_axis.has_title = True
    chart.value_axis.axis_title.text_frame.text = "Megawatts"
    deck.save(str(path))
    return path


def test_a_slide_whose_only_words_are_a_charts_labels_is_read(tmp_path):
    doc = one(chart_only_pptx(tmp_path / "wind.pptx"))
    assert [p.page for p in doc.parts] == [1]
    assert doc.parts[0].text.splitlines() == [
        "Wind farm capacity", "Megawatts", "Northern region | Southern region",
        "Turbine output | Grid demand"]


def test_a_slide_whose_only_words_are_a_table_is_read(tmp_path):
    """A slide table's cells are not Word cells (python-pptx has no ``iter_inner_content``):
    reading them as Word's once failed every deck with a table."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    table = slide.shapes.add_table(2, 2, 0, 0, Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "Site", (0, 1): "Output", (1, 0): "Dunmore",
                             (1, 1): "3.5 MW"}.items():
        table.cell(row, col).text = text
    deck.save(str(tmp_path / "table.pptx"))
    assert one(tmp_path / "table.pptx").text == "Site | Output\nDunmore | 3.5 MW"


def test_a_presentation_without_words_names_every_place_looked_in(tmp_path):
    import pptx

    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[6])
    deck.save(str(tmp_path / "empty.pptx"))
    with pytest.raises(DocumentError, match=r"^empty\.pptx has no text: no slide text, notes, "
                                            "tables or chart labels in it"):
        read_document(tmp_path / "empty.pptx", "empty.pptx")


# ---- Word: text boxes, headers and footers -------------------------------------------------
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"


def boxed_docx(path: Path, boxed: str) -> Path:
    """A document whose only text is in a text box, written twice as Word does (the box and
    its VML fallback)."""
    import docx
    from lxml import etree

    document = docx.Document()
    content = (f'<w:txbxContent xmlns:w="{W}"><w:p><w:r><w:t>{boxed}</w:t></w:r></w:p>'
               "</w:txbxContent>")
    run = etree.fromstring(
        f'<w:r xmlns:w="{W}" xmlns:mc="{MC}"><mc:AlternateContent><mc:Choice Requires="wps">'
        f"<w:pict>{content}</w:pict></mc:Choice><mc:Fallback><w:pict>{content}</w:pict>"
        "</mc:Fallback></mc:AlternateContent></w:r>")
    document.add_paragraph()._p.append(run)
    document.save(str(path))
    return path


def test_a_text_box_is_read_once(tmp_path):
    doc = one(boxed_docx(tmp_path / "poster.docx", "Open day on Saturday"))
    assert doc.text == "Open day on Saturday"


def test_headers_and_footers_are_read_once_each(tmp_path):
    import docx

    document = docx.Document()
    document.add_paragraph("Body text.")
    document.sections[0].header.paragraphs[0].text = "Acme Ltd, 4 Quay Street"
    document.sections[0].footer.paragraphs[0].text = "Registered in Ireland"
    document.add_section()  # its header is linked to the first one's: not read twice
    document.save(str(tmp_path / "letter.docx"))
    doc = one(tmp_path / "letter.docx")
    assert [(p.section, p.text) for p in doc.parts] == [
        (None, "Body text."),
        ("Headers and footers", "Acme Ltd, 4 Quay Street\nRegistered in Ireland")]


# ---- e-mail: digests and forwarded messages -------------------------------------------------
DIGEST = b"""Subject: Plant list digest, Vol 3
From: list@example.org
MIME-Version: 1.0
Content-Type: multipart/digest; boundary="XX"

--XX

Subject: Pumps stop at night
From: ann@example.org

The pump in hall 3 stops after midnight.

--XX

Subject: Re: Pumps stop at night
From: bob@example.org

Check the timer relay first.

--XX--
"""


def test_a_digest_is_read_by_its_inner_messages(tmp_path):
    (tmp_path / "digest.eml").write_bytes(DIGEST)
    doc = one(tmp_path / "digest.eml")
    assert [(p.section, p.text) for p in doc.parts] == [
        ("Plant list digest, Vol 3", "Plant list digest, Vol 3"),
        ("Pumps stop at night", "The pump in hall 3 stops after midnight."),
        ("Re: Pumps stop at night", "Check the timer relay first.")]


def test_a_message_forwarded_as_an_attachment_is_read_with_its_carrier(tmp_path):
    inner = files.message("Boiler service", "The boiler is serviced every May.\n")
    outer = files.message("Fwd: boiler", "See the message below.\n")
    outer.add_attachment(inner)  # message/rfc822, no file name
    (tmp_path / "fwd.eml").write_bytes(outer.as_bytes())
    doc = one(tmp_path / "fwd.eml")
    assert [p.text for p in doc.parts] == ["See the message below.",
                                           "The boiler is serviced every May."]
    assert doc.attachments == []


def test_an_empty_message_names_what_was_looked_in(tmp_path):
    (tmp_path / "e.eml").write_bytes(b"From: a@example.org\n\n\n")
    with pytest.raises(DocumentError, match=r"^e\.eml has no text: no body, subject or inner "
                                            r"\(forwarded, digested\) message in it"):
        read_document(tmp_path / "e.eml", "e.eml")


# ---- PDF: what a refusal names ---------------------------------------------------------------
def test_a_scan_ocr_found_nothing_in_is_refused_saying_so(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tesseract"
    fake.write_text("#!/bin/sh\nexit 0\n")  # runs, reads nothing
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(DocumentError, match=r"^s\.pdf has no text: Pages 1, 2 have no text "
                                            r"layer and OCR \(Tesseract\) found no text there"):
        read_document(files.make_pdf(tmp_path / "s.pdf", [None, None]), "s.pdf")


# ---- the registry, and a folder ingested ----------------------------------------------------
def test_images_are_in_the_registry_of_a_fresh_process(tmp_path):
    """What every list of formats (upload page, CLI help, refusals, watched folders) is made
    of, as a process that imports only the formats package sees it."""
    import subprocess
    import sys

    code = ("from searchapp.intake.formats.registry import find, listing; "
            "print([find(n, 'document').name for n in ('a.png', 'b.JPG', 'c.jpeg', 'd.tif', "
            "'e.tiff', 'f.webp')]); print(listing('document'))")
    done = subprocess.run([sys.executable, "-c", "import searchapp.intake.formats; " + code],
                          capture_output=True, text=True, cwd=tmp_path, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    names, listed = done.stdout.splitlines()
    assert names == "['png', 'jpeg', 'jpeg', 'tiff', 'tiff', 'webp']"
    assert "PNG image (.png), JPEG image (.jpg/.jpeg), TIFF image (.tif/.tiff), WebP image " \
           "(.webp)" in listed


@needs_tesseract
def test_an_image_among_other_files_is_ingested_and_found(app, tmp_path, capsys):
    import json

    from searchapp.cli.main import main
    from searchapp.search.service import search

    folder = tmp_path / "pile"
    folder.mkdir()
    (folder / "notes.md").write_text("# Parking\nBicycles go in the courtyard.\n")
    drawn("Invoices are paid within thirty days", size=(1500, 220)).save(folder / "memo.png")
    chart_only_pptx(folder / "wind.pptx")
    (folder / "digest.eml").write_bytes(DIGEST)
    capsys.readouterr()
    assert main(["ingest", str(folder), "--corpus", "pile", "--wait", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["added"], report["failed"]) == (4, 0), report
    [hit] = search(app, "pile", "when are invoices paid", k=1, mode="hybrid")
    assert hit.id == "memo.png" and hit.meta["type"] == "png"


def test_text_in_an_opendocument_slides_drawn_shape_is_read(tmp_path):
    """LibreOffice writes a subtitle as a ``draw:custom-shape``, not a frame (odfpy's
    cols.odp): reading frames only refused it as without text."""
    slide = ('<office:body><office:presentation><draw:page draw:name="p1">'
             '<draw:custom-shape><text:p>Harbour tides table</text:p></draw:custom-shape>'
             "</draw:page></office:presentation></office:body>")
    files.write_zip(tmp_path / "s.odp", {
        "mimetype": "application/vnd.oasis.opendocument.presentation",
        "content.xml": f"<office:document-content {files.ODF_NS}>{slide}"
                       "</office:document-content>"})
    assert one(tmp_path / "s.odp").text == "Harbour tides table"
