"""A pile of real files read as an ingest reads them: the share read, and each failure's reason.

Issue 45, item 2: "no text" must come only after every reader path found none, and an
image is a document read by OCR. This builds a pile of files nobody on the project
wrote, from what this machine has, and reads each one the way the ingest job does
(``extract.extract_file`` in an ``ExtractionPool``: the same worker processes, memory
cap and timeout), then writes the share read and every failure's reason.

The pile (copied into a temporary folder; nothing outside it is written but the result):

- ``html``: every 40th page of PostgreSQL's manual (Debian ``postgresql-doc-*``) and every
  15th of Git's (``git-doc``);
- ``pdf``: the PDF manuals under ``/usr/share/doc`` (``.pdf`` and ``.pdf.gz``, unpacked);
- ``docx``/``pptx``/``odt``/``odp``: the test files in the sdists of python-docx 1.2.0,
  python-pptx 1.0.2 and odfpy 1.4.1 (``--sources``; fetch them with ``pip download
  --no-binary :all: --no-deps python-docx==1.2.0 python-pptx==1.0.2 odfpy==1.4.1`` and
  unpack them there);
- ``eml``: CPython's ``test/test_email/data/msg_*.txt``, named ``.eml``;
- ``image``: CPython's ``test/imghdrdata`` PNG, JPEG, TIFF and WebP (a logo without words)
  and four pictures of a sentence drawn here with Pillow (PNG, JPEG, TIFF, WebP).

Run it once with the code before the change and once after, on the same pile::

    PYTHONPATH=/work/main python benchmarks/reasons_pile.py --label before
    PYTHONPATH=$PWD python benchmarks/reasons_pile.py --label after

Each run adds its label to ``benchmarks/results/reasons_pile.json``: files, read, failed,
the share read, per kind, and each failure (file, reason). ``--ingest`` instead sends the
pile through ``searchapp ingest --wait --json`` in a fresh data folder (slower: it embeds).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

RESULT = Path(__file__).parent / "results" / "reasons_pile.json"
STDLIB_TEST = Path(sysconfig.get_paths()["stdlib"]) / "test"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
SENTENCE = "Invoices are paid within thirty days of delivery"


def build_pile(folder: Path, sources: Path) -> list[Path]:
    """Copy the pile into ``folder`` (one sub-folder per kind); the files, sorted."""
    picks: list[tuple[str, Path, str]] = []  # (kind, source, name in the pile)
    for html in sorted(Path("/usr/share/doc").glob("postgresql-doc-*/html")):
        picks += [("html", p, f"pg-{p.name}") for p in sorted(html.glob("*.html"))[::40]]
    picks += [("html", p, f"git-{p.name}")
              for p in sorted(Path("/usr/share/doc/git-doc").glob("*.html"))[::15]]
    for p in sorted(Path("/usr/share/doc").glob("*/*.pdf*")):
        if p.name.endswith((".pdf", ".pdf.gz")):
            picks.append(("pdf", p, f"{p.parent.name}-{p.name.removesuffix('.gz')}"))
    for ending in ("docx", "pptx", "odt", "odp", "epub", "eml"):
        for p in sorted(sources.rglob(f"*.{ending}")):
            picks.append((ending, p, str(p.relative_to(sources)).replace("/", "_")))
    picks += [("eml", p, p.stem + ".eml")
              for p in sorted((STDLIB_TEST / "test_email" / "data").glob("msg_*.txt"))]
    picks += [("image", p, "logo-" + p.name) for p in sorted((STDLIB_TEST / "imghdrdata").glob(
        "python.*")) if p.suffix in (".png", ".jpg", ".tiff", ".webp")]
    out = []
    for kind, source, name in picks:
        target = folder / kind / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.name.endswith(".gz"):
            target.write_bytes(gzip.decompress(source.read_bytes()))
        else:
            shutil.copyfile(source, target)
        out.append(target)
    return sorted(out + _drawn(folder / "image"))


def _drawn(folder: Path) -> list[Path]:
    """Four pictures of ``SENTENCE``, as a phone or a scanner would save them."""
    from PIL import Image, ImageDraw, ImageFont

    folder.mkdir(parents=True, exist_ok=True)
    picture = Image.new("RGB", (1800, 300), "white")
    ImageDraw.Draw(picture).text((50, 110), SENTENCE, font=ImageFont.truetype(str(FONT), 56),
                                 fill="black")
    made = []
    for name, options in (("note.png", {}), ("note.jpg", {"quality": 85}),
                          ("note.tiff", {}), ("note.webp", {"quality": 80})):
        picture.save(folder / name, **options)
        made.append(folder / name)
    return made


def read_all(folder: Path, files: list[Path]) -> list[dict]:
    """Each file through ``extract_file`` in an extraction pool, as the ingest job reads it."""
    from searchapp.intake.extract import extract_file
    from searchapp.intake.extract_pool import ExtractionPool

    tasks = []
    for path in files:
        data = path.read_bytes()
        name = str(path.relative_to(folder))
        tasks.append((name, (str(path), name, len(data), None, hashlib.sha256(data).hexdigest())))
    rows = []
    with ExtractionPool(workers=2) as pool:
        for name, outcome in pool.map_unordered(extract_file, tasks):
            if isinstance(outcome, Exception):
                rows.append({"file": name, "read": False, "reason": str(outcome)})
            else:
                chars = sum(len(d.text) for d in outcome.documents)
                rows.append({"file": name, "read": True, "documents": len(outcome.documents),
                             "chars": chars})
    return sorted(rows, key=lambda r: r["file"])


def ingest_all(folder: Path) -> list[dict]:
    """The pile through ``searchapp ingest --wait --json`` in a fresh data folder."""
    with tempfile.TemporaryDirectory(prefix="reasons-data-") as data:
        env = {**os.environ, "SEARCHAPP_DATA": data}
        done = subprocess.run([sys.executable, "-m", "searchapp", "ingest", str(folder),
                               "--corpus", "pile", "--wait", "--json"], env=env,
                              capture_output=True, text=True, check=False)
    report = json.loads(done.stdout or "{}")
    failed = {f.get("file") or f.get("path"): f.get("reason") or f.get("error")
              for f in report.get("failures", report.get("errors", []))
              if isinstance(f, dict)}
    return [{"summary": {k: v for k, v in report.items() if isinstance(v, int)},
             "failures": failed}]


def summary(rows: list[dict], seconds: float) -> dict:
    kinds: dict[str, dict[str, int]] = {}
    for row in rows:
        kind = kinds.setdefault(row["file"].split("/", 1)[0], {"files": 0, "read": 0})
        kind["files"] += 1
        kind["read"] += row["read"]
    read = sum(r["read"] for r in rows)
    return {"files": len(rows), "read": read, "failed": len(rows) - read,
            "share_read": round(read / len(rows), 3) if rows else 0.0, "by_kind": kinds,
            "seconds": round(seconds, 1),
            "failures": [{"file": r["file"], "reason": r["reason"]} for r in rows
                         if not r["read"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True, help="before / after: the key in the result")
    parser.add_argument("--sources", type=Path, default=Path("/tmp/pilesrc"),
                        help="where the python-docx, python-pptx and odfpy sdists are unpacked")
    parser.add_argument("--ingest", action="store_true", help="through `searchapp ingest`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reasons-pile-") as tmp:
        folder = Path(tmp)
        files = build_pile(folder, args.sources)
        start = time.perf_counter()
        if args.ingest:
            result = {"ingest": ingest_all(folder)}
        else:
            result = summary(read_all(folder, files), time.perf_counter() - start)
    results = json.loads(RESULT.read_text()) if RESULT.exists() else {}
    results[args.label] = result
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "failures"}, indent=1))


if __name__ == "__main__":
    main()
