"""Images (PNG, JPEG, TIFF, WebP): documents whose text Tesseract reads, a TIFF page per frame.

A photo of a whiteboard, a screenshot, a fax saved as TIFF: their text is in their
pixels, read by the same ``ocr`` path as a scanned PDF page. Without Tesseract an
image is refused by name with the install hint (``ocr.INSTALL_HINT``): kept with no
text it would be "unchanged" when added again after the install, and never read.

Pillow opens the file lazily (only its header), so its size is checked before a
pixel is decoded: a frame of more than ``MAX_IMAGE_PIXELS`` (Pillow's own bound,
about 89 megapixels: an A3 page scanned at 600 dpi fits) is refused as a possible
decompression bomb, as is anything Pillow itself calls one. A multi-frame TIFF is
one part per frame (``page`` its 1-based number), refused when it has more frames
than ``Limits.max_pages``; other formats are read by their first frame. Each frame
is made gray on a white ground (transparent pixels would otherwise turn black,
hiding black text) and shrunk to ``MAX_SIDE`` pixels on its longer side, as a
rendered PDF page is. Metadata: width, height and, for a TIFF of several frames,
pages. The extraction pool's memory cap and timeout bound it as any reader.

Example:
    >>> from searchapp.intake.formats.registry import find
    >>> [f.name for f in (find("scan.TIF", "document"), find("a.jpg", "document"))]
    ['tiff', 'jpeg']
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

from searchapp.intake.formats.document import (
    DEFAULT_LIMITS,
    DocumentError,
    Extracted,
    Limits,
    Part,
)
from searchapp.intake.formats.ocr import INSTALL_HINT, pgm, read_picture, tesseract_program
from searchapp.intake.formats.registry import Format, register

MAX_IMAGE_PIXELS = 89_478_485  # one frame: Pillow's own default bound (1024 ** 3 // 4 // 3)
MAX_SIDE = 6000  # the longer side of the picture Tesseract reads, as for a rendered PDF page
IMAGES = frozenset({"png", "jpeg", "tiff", "webp"})  # what sniff() may say: any image we read

Progress = Callable[[int, int], None]


def read_image(path: str | Path, name: str, limits: Limits = DEFAULT_LIMITS,
               progress: Progress | None = None) -> list[Extracted]:
    """An image's text as Tesseract reads it; ``progress(done, total)`` after each frame."""
    program = tesseract_program()
    if program is None:
        raise DocumentError(f"{name} is an image, whose text only OCR can read, and Tesseract "
                            f"is not installed: {INSTALL_HINT} and add it again.")
    with _opened(path, name) as image:
        frames = _frame_count(image, name, limits)
        texts = []
        for index in range(frames):
            picture = _picture(image, index, name)
            texts.append(read_picture(program, picture))
            if progress is not None:
                progress(index + 1, frames)
        meta = {"width": str(image.width), "height": str(image.height)}
    if frames > 1:
        meta["pages"] = str(frames)
    parts = [Part(text, page=i + 1 if frames > 1 else None)
             for i, text in enumerate(texts) if text.strip()]
    return [Extracted(parts, meta, _notes(texts))]


def _opened(path: str | Path, name: str):
    """The image, opened lazily (its header read, no pixel decoded)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return Image.open(str(path))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise _bomb(name, exc) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise _damaged(name, exc) from None


def _frame_count(image, name: str, limits: Limits) -> int:
    try:
        frames = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise _damaged(name, exc) from None
    if frames > limits.max_pages:
        raise DocumentError(f"{name} has {frames:,} frames (pages), more than the limit of "
                            f"{limits.max_pages:,}. Split it, or raise SEARCHAPP_MAX_PAGES.")
    return frames


def _picture(image, index: int, name: str) -> bytes:
    """Frame ``index`` as a gray PGM on white, at most ``MAX_SIDE`` pixels long."""
    from PIL import Image

    try:
        image.seek(index)
        width, height = image.size
        if width * height > MAX_IMAGE_PIXELS:
            raise _bomb(name, f"{width:,} x {height:,} pixels")
        frame = image.convert("RGBA")
        ground = Image.new("RGBA", frame.size, "white")
        ground.alpha_composite(frame)
        gray = ground.convert("L")
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise _damaged(name, exc) from None
    if max(gray.size) > MAX_SIDE:
        scale = MAX_SIDE / max(gray.size)
        gray = gray.resize((max(1, round(gray.width * scale)), max(1, round(gray.height * scale))))
    return pgm(gray.width, gray.height, gray.tobytes())


def _bomb(name: str, why: object) -> DocumentError:
    return DocumentError(
        f"{name} is too large an image to read ({why}; the limit is {MAX_IMAGE_PIXELS:,} "
        "pixels a frame): it may be a decompression bomb. Scale it down (300 dpi is enough "
        "for OCR) and add it again.")


def _damaged(name: str, exc: object) -> DocumentError:
    return DocumentError(f"{name} is a damaged image or not one Pillow reads ({exc}). Open it "
                         "in an image viewer and save it again as PNG.")


def _notes(texts: list[str]) -> list[str]:
    """What OCR read, for the report; with no text at all, the reason of the refusal."""
    empty = [i + 1 for i, t in enumerate(texts) if not t.strip()]
    if len(texts) == 1:
        return ["OCR (Tesseract) found no text in the image."] if empty else \
            ["OCR (Tesseract) read the image."]
    if len(empty) == len(texts):
        return [f"OCR (Tesseract) found no text in any of its {len(texts)} frames."]
    notes = [f"OCR (Tesseract) read {len(texts) - len(empty)} of its {len(texts)} frames."]
    if empty:
        notes.append("Frames without text: " + ", ".join(map(str, empty)) + ".")
    return notes


# This module's formats (``registry``): an image of any of these kinds is read the same way,
# whatever its name says, so each takes the first bytes of all of them.
for _name, _endings, _label in (("png", ("png",), "PNG"), ("jpeg", ("jpg", "jpeg"), "JPEG"),
                                ("tiff", ("tif", "tiff"), "TIFF"), ("webp", ("webp",), "WebP")):
    register(Format(_name, "document", _endings, f"{_label} image", f"a {_label} image",
                    read_image, content=IMAGES, progress=True))
