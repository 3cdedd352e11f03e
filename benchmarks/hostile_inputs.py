"""Issue 43's resource numbers: small hostile inputs, the time to refuse them and the memory
of the process doing the work.

Usage (from the repository root; writes only under a new temporary folder, then the result
file):

    PYTHONPATH=. .venv/bin/python benchmarks/hostile_inputs.py [--before COMMIT_TREE]
        [--timeout 360] [--out benchmarks/results/hostile_inputs.json]

Each bomb is built in a temporary folder:

- ``longname.tar.gz``: a member, a GNU long-name header declaring 1 GiB of "a", a member;
- ``pax.tar.gz``: the same with a PAX extended header of 1 GiB;
- ``front.md``: the 387-byte YAML "billion laughs" as Markdown front matter (and a good
  file beside it);
- ``blank.csv.gz``: a judgements header, then 1.5 GiB of blank lines (1.5 MB gzipped);
- ``xfd.xlsx``, ``zz.xlsx``: a workbook with one number at XFD1048576 (or ZZ100000),
  read as the Upload page and ``searchapp ingest`` read a table (``read_table``, every row);
- ``repeat.ods``: a row repeated 100,000 times holding a cell repeated 100 times (753 bytes);
- ``chain.tar``, ``longname.tar``: a backup archive led by 3,000 PAX headers, or by a GNU
  long name declaring 1 GiB (a hole on disk), checked as ``restore --check`` does;

(each .gz is gzip members of 64 MiB each, as ``cat a.gz b.gz`` makes). Each case runs in a
fresh ``python`` of its own under an address-space cap (``RLIMIT_AS``, 4 GB: this machine
is shared), which does the work itself as the worker does (the ``ingest`` job run to its end
in that process, embedding left out; or ``judge import``'s ``import_csv``) and reports the
seconds it took, its own peak RSS (``VmHWM``) and its reader processes' largest
(``RUSAGE_CHILDREN``). A baseline case (one small Markdown file) shows what the process
costs anyway. ``--before DIR`` runs the same cases against another checkout (a worktree of
the commit before the fix) and records both; ``--only TEXT`` (repeatable) runs the cases
whose name holds it and updates just those in the result file. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEMORY_CAP = 4_000_000_000  # bytes of address space per case
HEADER = 1 << 30  # the declared size of the tar headers
GOOD = b"# Notes\nThe office is closed over the winter holidays.\n"

# Run in the case's own process: does the work, prints one JSON line.
CASE = r"""
import json, resource, sys, time, traceback
from pathlib import Path
kind, target = sys.argv[1], Path(sys.argv[2])
from searchapp.context import App
app = App()
started = time.perf_counter()
try:
    if kind == "ingest":
        from searchapp.intake.files_job import request_ingest
        from searchapp.jobs.worker import run_until_done
        job = run_until_done(app, request_ingest(app, "bench", [target], overlap=False),
                             poll_seconds=0.05)
        r = job.result or {}
        outcome = {"status": job.status, "added": r.get("added"), "skipped": r.get("skipped"),
                   "failed": r.get("failed"), "error": (job.error or "")[:300],
                   "problems": [p["reason"][:300] for p in r.get("problems", [])],
                   "notes": [n[:300] for n in r.get("notes", [])]}
    elif kind == "table":
        from searchapp.intake.ingest import read_table
        try:
            rows = sum(1 for _ in read_table(target).rows())
            outcome = {"status": "read", "rows": rows}
        except Exception as exc:
            outcome = {"status": "refused", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    elif kind == "restore":
        from searchapp.backups import service as backups
        try:
            backups.check(target)
            outcome = {"status": "passed"}
        except Exception as exc:
            outcome = {"status": "refused", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    else:
        from searchapp.judgements.service import import_csv
        from searchapp.store import repo
        with app.db.session() as s:
            c = repo.get_or_create_corpus(s, "bench", "all-MiniLM-L6-v2")
            repo.add_documents(s, c, [repo.NewDocument("p1", "a"), repo.NewDocument("p3", "b")])
        try:
            outcome = {"status": "imported", "summary": str(import_csv(app, "bench", target))}
        except Exception as exc:
            outcome = {"status": "refused", "error": str(exc)[:300]}
except BaseException as exc:
    outcome = {"status": "crashed", "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
seconds = time.perf_counter() - started
status = dict(l.split(":", 1) for l in Path("/proc/self/status").read_text().splitlines()
              if ":" in l)
print(json.dumps({"seconds": round(seconds, 2),
                  "worker_peak_rss_mb": int(status["VmHWM"].split()[0]) // 1024,
                  "readers_peak_rss_mb":
                      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,
                  **outcome}))
"""


def gz_members(out, data: bytes, total: int) -> None:
    """``total`` bytes of ``data`` repeated, written as gzip members of 64 MiB each."""
    member = gzip.compress(data * ((64 << 20) // len(data)), 9)
    for _ in range(total // (64 << 20)):
        out.write(member)


def tar_block(info: tarfile.TarInfo) -> bytes:
    return info.tobuf(tarfile.GNU_FORMAT)


def regular(name: str) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(GOOD)
    return tar_block(info) + GOOD + bytes(-len(GOOD) % tarfile.BLOCKSIZE)


def header_bomb(folder: Path, kind: bytes) -> Path:
    """A folder holding a .tar.gz: a member, an extension header of 1 GiB of "a", a member."""
    folder.mkdir()
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = kind, HEADER
    with (folder / "bomb.tar.gz").open("wb") as out:
        out.write(gzip.compress(regular("first.md") + tar_block(info)))
        gz_members(out, b"a" * 4096, HEADER)
        out.write(gzip.compress(regular("after.md") + bytes(2 * tarfile.BLOCKSIZE)))
    return folder


def laughs(folder: Path) -> Path:
    folder.mkdir()
    lines, names = ['a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]'], "abcdefghi"
    for level in range(1, 9):
        lines.append(f"{names[level]}: &{names[level]} [" + ",".join(
            [f"*{names[level - 1]}"] * 9) + "]")
    (folder / "front.md").write_text("---\n" + "\n".join(lines) + "\ntitle: *i\n---\n"
                                     + GOOD.decode(), encoding="utf-8")
    (folder / "good.md").write_bytes(GOOD)
    return folder


def blank_lines(path: Path) -> Path:
    with path.open("wb") as out:
        out.write(gzip.compress(b"a_id,b_id,label\n"))
        gz_members(out, b"\n" * 4096, 24 * (64 << 20))
    return path


def workbook(path: Path, ref: str, row: int) -> Path:
    """A one-sheet .xlsx: a header, a row, and one number at ``ref`` (in row ``row``)."""
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    sheet = (f'<worksheet {ns}><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>id</t>'
             '</is></c><c r="B1" t="inlineStr"><is><t>text</t></is></c></row><row r="2"><c '
             'r="A2"><v>1</v></c><c r="B2" t="inlineStr"><is><t>hello</t></is></c></row>'
             f'<row r="{row}"><c r="{ref}"><v>1</v></c></row></sheetData></worksheet>')
    members = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
        'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sheet.main+xml"/></Types>',
        "_rels/.rels": f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/'
                       'officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook {ns} xmlns:r="{rel}"><sheets><sheet name="Data" '
                           'sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" '
                                      f'Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
                                      "</Relationships>",
        "xl/worksheets/sheet1.xml": sheet}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def repeat_ods(path: Path, rows: int = 100_000, columns: int = 100) -> Path:
    """An .ods whose second row, a cell repeated ``columns`` times, is repeated ``rows``."""
    ns = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')

    def cell(text: str, attrs: str = "") -> str:
        return (f'<table:table-cell office:value-type="string"{attrs}><text:p>{text}</text:p>'
                "</table:table-cell>")

    content = (f'<office:document-content {ns}><office:body><office:spreadsheet><table:table '
               f'table:name="S"><table:table-row>{cell("id")}{cell("text")}</table:table-row>'
               f'<table:table-row table:number-rows-repeated="{rows}">'
               f'{cell("y", f" table:number-columns-repeated={chr(34)}{columns}{chr(34)}")}'
               "</table:table-row></table:table></office:spreadsheet></office:body>"
               "</office:document-content>")
    manifest = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:'
                'manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-'
                'type="application/vnd.oasis.opendocument.spreadsheet"/></manifest:manifest>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", content)
        z.writestr("META-INF/manifest.xml", manifest)
    return path


def backup_led_by(path: Path, hostile: bytes, hole: int = 0) -> Path:
    """A backup-shaped tar: ``hostile`` headers (then ``hole`` bytes of zeros, a hole on
    disk), a manifest."""
    body = json.dumps({"format": "searchapp-backup", "format_version": 1, "members": {}})
    info = tarfile.TarInfo("manifest.json")
    info.size = len(body)
    with path.open("wb") as out:
        out.write(hostile)
        out.seek(hole + (-hole % tarfile.BLOCKSIZE), 1)
        out.write(info.tobuf(tarfile.PAX_FORMAT) + body.encode()
                  + bytes(-len(body) % tarfile.BLOCKSIZE) + bytes(2 * tarfile.BLOCKSIZE))
    return path


def pax_chain(count: int) -> bytes:
    return tarfile.TarInfo._create_pax_generic_header({"comment": "x"}, tarfile.XHDTYPE,
                                                      "utf-8") * count


def cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_case(tree: Path, kind: str, target: Path, data: Path, timeout: float) -> dict:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree), "SEARCHAPP_DATA_DIR": str(data),
           "SEARCHAPP_DEVICE": "cpu", "HOME": str(data)}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", CASE, kind, str(target)], env=env,
                              cwd=tree, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=cap_memory)
    except subprocess.TimeoutExpired:
        return {"status": f"still working after {timeout:g} s (stopped)",
                "seconds": round(time.monotonic() - started, 1)}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"status": f"process died (exit {done.returncode})",
                "seconds": round(time.monotonic() - started, 1),
                "stderr": done.stderr.strip()[-300:]}
    return json.loads(lines[-1])


def build(work: Path) -> dict[str, tuple[str, Path]]:
    baseline = work / "baseline"
    baseline.mkdir()
    (baseline / "good.md").write_bytes(GOOD)
    return {"baseline (one good .md)": ("ingest", baseline),
            "GNU long-name header of 1 GiB (.tar.gz)":
                ("ingest", header_bomb(work / "longname", tarfile.GNUTYPE_LONGNAME)),
            "PAX header of 1 GiB (.tar.gz)": ("ingest", header_bomb(work / "pax",
                                                                    tarfile.XHDTYPE)),
            "YAML alias bomb in front matter (.md)": ("ingest", laughs(work / "yaml")),
            "1.5 GiB of blank lines (.csv.gz, judge import)":
                ("judge", blank_lines(work / "blank.csv.gz")),
            "one cell at XFD1048576 (.xlsx)": ("table", workbook(work / "xfd.xlsx",
                                                                "XFD1048576", 1_048_576)),
            "one cell at ZZ100000 (.xlsx)": ("table", workbook(work / "zz.xlsx", "ZZ100000",
                                                               100_000)),
            "a row repeated 100,000 times, a cell 100 (.ods)":
                ("table", repeat_ods(work / "repeat.ods")),
            "a backup led by 3,000 PAX headers (restore --check)":
                ("restore", backup_led_by(work / "chain.tar", pax_chain(3000))),
            "a backup led by a 1 GiB long name (restore --check)":
                ("restore", backup_led_by(work / "longname.tar", long_name(HEADER), HEADER))}


def long_name(size: int) -> bytes:
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = tarfile.GNUTYPE_LONGNAME, size
    return tar_block(info)


def size_of(target: Path) -> int:
    return sum(p.stat().st_size for p in target.rglob("*")) if target.is_dir() else \
        target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="a checkout of the commit before the fix")
    parser.add_argument("--timeout", type=float, default=360.0)
    parser.add_argument("--only", action="append", default=[],
                        help="run only the cases whose name holds this (repeatable)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" /
                        "hostile_inputs.json")
    args = parser.parse_args()
    trees = {"after": REPO, **({"before": args.before} if args.before else {})}
    result: dict = {"memory_cap_bytes": MEMORY_CAP, "cases": {}}
    if args.only and args.out.exists():
        result = json.loads(args.out.read_text())  # the other cases kept as measured
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        work = Path(tmp)
        for name, (kind, target) in build(work).items():
            if args.only and not any(text in name for text in args.only):
                continue
            entry = {"input_bytes": size_of(target)}
            for label, tree in trees.items():
                data = work / f"data-{label}-{len(result['cases'])}"
                entry[label] = run_case(tree, kind, target, data, args.timeout)
                print(name, label, json.dumps(entry[label])[:400], flush=True)
            result["cases"][name] = entry
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
