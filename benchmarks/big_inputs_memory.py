"""Peak memory of reading a very large PDF and a very large archive: ours against markitdown.

The inputs are made here, with pages a real scanner or report would give: each
page of a PDF holds a paragraph of text and a photograph-like picture of random
noise (JPEG, which does not compress further), so ``--pdf-mb`` megabytes of PDF
are mostly image data, as in scanned or illustrated documents:

- ``big.pdf``: one PDF of about ``--pdf-mb`` MB (default 500);
- ``big.tar``: an uncompressed tar of ``--archive-pdfs`` PDFs made the same way, each
  with other pictures and text (default 4 of 500 MB: about 2 GB).

Ours: the ``ingest`` job (``request_ingest`` + the worker's ``run_until_done``, the path
of ``searchapp ingest``) into a fresh ``SEARCHAPP_DATA_DIR``: walking the input,
unpacking the archive member by member, hashing, the extraction processes, keeping
the original, storing the text. The embedding job it queues is not run: it reads
the stored text in bounded batches (``embed_batches.BATCH_CHARS_CPU``), whatever the
file's size; the batches it stores are embedded while the next pages are read
(``embed_alongside``), so the encoder's memory is in the peak. Peer: markitdown's
``convert`` of the same PDF (pdfminer.six); markitdown reads no tar (its zip
reader holds the whole archive in memory), so the archive is ours alone.

The inputs are kept in ``benchmarks/.cache/big-inputs/`` (git-ignored) and made
again only when missing.

``ours_reading_only`` is the same ingest with the embedding left to the embed job
(``overlap=False``): what reading the file itself costs. Memory is the peak
resident size of the whole process tree (the job and its extraction processes),
sampled from /proc every 0.1 s, next to the input's size.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/big_inputs_memory.py [--pdf-mb 500]
      [--archive-pdfs 4] [--quick]    (--quick: a 50 MB PDF and 2 of them in the tar)
Writes benchmarks/results/big_inputs_memory.json (``--quick``: ..._quick.json).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from documents import tree_rss  # noqa: E402  (the process tree's resident bytes)

RESULTS = ROOT / "benchmarks" / "results"
CACHE = ROOT / "benchmarks" / ".cache" / "big-inputs"
TEXT = ("the invoice was paid after the committee approved the annual budget for the new "
        "library building and the contractor delivered the steel frame on schedule while "
        "inspectors checked the wiring plumbing and fire exits of every floor")
WORDS = tuple(re.findall(r"\w+", TEXT))
PICTURE_PX = 900  # a 900x900 noise JPEG at quality 90 is about 0.6 MB


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def make_pdf(path: Path, megabytes: int, seed: int) -> int:
    """A PDF of about ``megabytes`` MB: per page a paragraph and a noise picture. Pages."""
    import numpy as np
    from fpdf import FPDF
    from PIL import Image

    rng, words = np.random.default_rng(seed), random.Random(seed)
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pages = 0
    while True:
        pdf.add_page()
        pages += 1
        text = " ".join(words.choice(WORDS) for _ in range(120))
        pdf.multi_cell(0, 6, text=f"Page {pages}. {text}")
        picture = Image.fromarray(rng.integers(0, 256, (PICTURE_PX, PICTURE_PX), np.uint8))
        buf = io.BytesIO()
        picture.save(buf, "JPEG", quality=90)
        buf.seek(0)
        pdf.image(buf, x=20, y=120, w=170)
        if pages % 50 == 0 and _size_mb(pdf) >= megabytes:
            break
    pdf.output(str(path))
    return pages


def made_inputs(megabytes: int, copies: int, work: Path) -> tuple[Path, Path]:
    """The big PDF and the archive of ``copies`` others, from the cache or made now."""
    CACHE.mkdir(parents=True, exist_ok=True)
    pdf, tar_path = CACHE / f"big-{megabytes}mb.pdf", CACHE / f"big-{megabytes}mb-x{copies}.tar"
    if not pdf.exists():
        log(f"making a PDF of about {megabytes} MB")
        make_pdf(work / "big.pdf", megabytes, seed=1)
        shutil.move(work / "big.pdf", pdf)
    if not tar_path.exists():
        with tarfile.open(work / "big.tar", "w") as tar:
            for n in range(copies):
                log(f"making archive member {n + 1} of {copies}")
                member = work / f"report-{n + 1}.pdf"
                make_pdf(member, megabytes, seed=100 + n)
                tar.add(member, arcname=f"reports/report-{n + 1}.pdf")
                member.unlink()
        shutil.move(work / "big.tar", tar_path)
    return pdf, tar_path


def pdf_pages(path) -> int:
    import pypdfium2

    doc = pypdfium2.PdfDocument(path)
    try:
        return len(doc)
    finally:
        doc.close()


def tar_pages(path: Path) -> int:
    """Pages of every PDF in the archive (each read through a temporary file)."""
    total = 0
    with tarfile.open(path) as tar, tempfile.TemporaryDirectory() as folder:
        for member in tar:
            if member.isfile():
                tar.extract(member, folder, filter="data")
                total += pdf_pages(str(Path(folder) / member.name))
                (Path(folder) / member.name).unlink()
    return total


def _size_mb(pdf) -> float:
    """The images dominate: their bytes so far, in MB."""
    return sum(len(info["data"]) for info in pdf.image_cache.images.values()) / 1e6


def measured(argv: list[str], env: dict, timeout: float) -> dict:
    """Run ``argv``; its wall time, exit code, last output line and peak tree RSS."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    peak, done = [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc.pid))
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        out += f"\n(killed after {timeout:.0f} s)"
    done.set()
    sampler.join()
    lines = [line for line in out.splitlines() if line.strip()]
    return {"seconds": round(time.monotonic() - started, 1), "returncode": proc.returncode,
            "peak_tree_rss_mb": round(peak[0] / 1e6, 1), "last_line": lines[-1] if lines
            else ""}


OURS = """
import json, sys
from pathlib import Path
from searchapp.context import App
from searchapp.intake.files_job import request_ingest
from searchapp.jobs.worker import run_until_done
app = App()
job = run_until_done(app, request_ingest(app, "big", [Path(sys.argv[1])],
                                         overlap=sys.argv[2] == "overlap"))
r = job.result or {}
print(json.dumps({"status": job.status, "error": job.error, "added": r.get("added"),
                  "failed": r.get("failed"), "documents": r.get("documents"),
                  "problems": r.get("problems")}))
"""

PEER = """
import json, sys, tarfile
from markitdown import MarkItDown
md, chars = MarkItDown(), 0
path = sys.argv[1]
if path.endswith(".tar"):
    with tarfile.open(path) as tar:
        for member in tar:
            chars += len(md.convert_stream(tar.extractfile(member),
                                           file_extension=".pdf").text_content)
else:
    chars += len(md.convert(path).text_content)
print(json.dumps({"characters": chars}))
"""


def run_ours(path: Path, work: Path, timeout: float, overlap: bool = True) -> dict:
    data = work / f"data-{path.stem}"
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "SEARCHAPP_DATA_DIR": str(data), "PYTHONPATH": str(ROOT),
           "SEARCHAPP_DEVICE": "cpu"}
    result = measured([sys.executable, "-c", OURS, str(path),
                       "overlap" if overlap else "read-only"], env, timeout)
    shutil.rmtree(data, ignore_errors=True)
    return result


def run_peer(path: Path, timeout: float) -> dict:
    return measured([sys.executable, "-c", PEER, str(path)], dict(os.environ), timeout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pdf-mb", type=int, default=500)
    ap.add_argument("--archive-pdfs", type=int, default=4)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--no-peer", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.pdf_mb, args.archive_pdfs = 50, 2
    work = Path(tempfile.mkdtemp(prefix="bench-big-"))
    try:
        pdf, tar_path = made_inputs(args.pdf_mb, args.archive_pdfs, work)
        inputs = {"pdf": (pdf, pdf_pages(pdf)), "archive": (tar_path, tar_pages(tar_path))}
        results = {}
        for kind, (path, n_pages) in inputs.items():
            size = round(path.stat().st_size / 1e6, 1)
            log(f"{kind}: {path.name}, {size} MB, {n_pages} pages")
            row = {"file_mb": size, "pages": n_pages,
                   "ours": run_ours(path, work, args.timeout),
                   "ours_reading_only": run_ours(path, work, args.timeout, overlap=False)}
            log(f"  ours: {row['ours']}")
            log(f"  ours, reading only (no embedding alongside): {row['ours_reading_only']}")
            if not args.no_peer and kind == "pdf":
                row["markitdown"] = run_peer(path, args.timeout)
                log(f"  markitdown: {row['markitdown']}")
            for tool in ("ours", "ours_reading_only", "markitdown"):
                if tool in row:
                    row[tool]["peak_per_file_mb"] = round(
                        row[tool]["peak_tree_rss_mb"] / size, 3)
            results[kind] = row
        out = {"benchmark": "big_inputs_memory", "quick": args.quick,
               "machine": {"cpu": _cpu(), "cores": os.cpu_count(),
                           "python": platform.python_version(),
                           "load_at_end": os.getloadavg()},
               "settings": {"pdf_mb": args.pdf_mb, "archive_pdfs": args.archive_pdfs,
                            "picture_px": PICTURE_PX},
               "results": results}
        RESULTS.mkdir(parents=True, exist_ok=True)
        target = RESULTS / ("big_inputs_memory_quick.json" if args.quick
                            else "big_inputs_memory.json")
        target.write_text(json.dumps(out, indent=1) + "\n")
        for kind, row in results.items():
            ours = row["ours"]["peak_tree_rss_mb"]
            line = f"{kind:8} {row['file_mb']:8.1f} MB: ours peak {ours} MB"
            if "markitdown" in row:
                line += f", markitdown peak {row['markitdown']['peak_tree_rss_mb']} MB"
            print(line)
        log(f"wrote {target.relative_to(ROOT)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
