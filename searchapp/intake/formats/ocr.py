"""Tesseract, the one way a picture of text becomes text: a scanned PDF page, an image file.

``tesseract_program`` finds the ``tesseract`` program on PATH (None when it is not
installed; ``INSTALL_HINT`` says how to have it). ``read_picture`` hands it one
grayscale picture as a binary PGM (``pgm``) and returns what it read, or "" when it
read nothing, failed or ran past ``OCR_TIMEOUT`` seconds: the reader then says
which page or frame had no text. It runs inside an extraction process
(``extract_pool``), so the pool's memory cap and its timeout per progress step bound
it too; the callers report progress after each picture.

Example:
    >>> pgm(2, 1, b"\\x00\\xff")
    b'P5\\n2 1\\n255\\n\\x00\\xff'
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

OCR_TIMEOUT = 120  # seconds for one picture (a page, a frame)
INSTALL_HINT = "install Debian's tesseract-ocr (apt-get install tesseract-ocr)"


def tesseract_program() -> str | None:
    """The path of ``tesseract``, or None when it is not installed."""
    return shutil.which("tesseract")


def pgm(width: int, height: int, rows: bytes) -> bytes:
    """A binary PGM image of ``width`` x ``height`` 8-bit gray pixels (``rows`` unpadded)."""
    return b"P5\n%d %d\n255\n" % (width, height) + rows


def read_picture(program: str, image: bytes) -> str:
    """The text ``tesseract IMAGE stdout`` reads in one PGM picture; "" when none or failed.

    Example:
        >>> read_picture("/bin/false", pgm(1, 1, b"\\xff"))
        ''
    """
    with tempfile.TemporaryDirectory(prefix="searchapp-ocr-") as folder:
        file = Path(folder) / "picture.pgm"
        file.write_bytes(image)
        try:
            done = subprocess.run([program, str(file), "stdout"], capture_output=True,
                                  timeout=OCR_TIMEOUT, check=False)
        except (subprocess.TimeoutExpired, OSError):
            return ""
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else ""
