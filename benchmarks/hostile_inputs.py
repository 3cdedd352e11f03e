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

(each .gz is gzip members of 64 MiB each, as ``cat a.gz b.gz`` makes). Each case runs in a
fresh ``python`` of its own under an address-space cap (``RLIMIT_AS``, 4 GB: this machine
is shared), which does the work itself as the worker does (the ``ingest`` job run to its end
in that process, embedding left out; or ``judge import``'s ``import_csv``) and reports the
seconds it took, its own peak RSS (``VmHWM``) and its reader processes' largest
(``RUSAGE_CHILDREN``). A baseline case (one small Markdown file) shows what the process
costs anyway. ``--before DIR`` runs the same cases against another checkout (a worktree of
the commit before the fix) and records both. Prints one JSON object.
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
        from searchapp.corpora.files_job import request_ingest
        from searchapp.jobs.worker import run_until_done
        job = run_until_done(app, request_ingest(app, "bench", [target], overlap=False),
                             poll_seconds=0.05)
        r = job.result or {}
        outcome = {"status": job.status, "added": r.get("added"), "skipped": r.get("skipped"),
                   "failed": r.get("failed"), "error": (job.error or "")[:300],
                   "problems": [p["reason"][:300] for p in r.get("problems", [])],
                   "notes": [n[:300] for n in r.get("notes", [])]}
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
                ("judge", blank_lines(work / "blank.csv.gz"))}


def size_of(target: Path) -> int:
    return sum(p.stat().st_size for p in target.rglob("*")) if target.is_dir() else \
        target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="a checkout of the commit before the fix")
    parser.add_argument("--timeout", type=float, default=360.0)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" /
                        "hostile_inputs.json")
    args = parser.parse_args()
    trees = {"after": REPO, **({"before": args.before} if args.before else {})}
    result: dict = {"memory_cap_bytes": MEMORY_CAP, "cases": {}}
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        work = Path(tmp)
        for name, (kind, target) in build(work).items():
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
