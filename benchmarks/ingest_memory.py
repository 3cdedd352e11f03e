"""Peak memory and time of ``searchapp ingest`` (parsing and storing, no embedding): ours
against the previous reader (the peer: the same command from an earlier commit).

The files are made here: rows of realistic text (one to three real sentences of
the shared STS/NLI/MRPC sets, drawn at random, plus a ticket number), an integer
id, an integer ``year`` with gaps (empty cells / nulls), a ``product`` text: a
CSV, a JSONL and a Parquet file of about ``--mb`` MB each, and a CSV holding one
row whose text is ``--mb`` MB long (refused by both readers: a text has at
most 100,000 characters; the question is what it costs to say so). The Parquet
file is written uncompressed by default so that its megabytes hold about as
many rows as the CSV's (``--parquet-compression snappy`` for pandas' default).

Each run is ``python -m searchapp ingest FILE --corpus bench`` with a data
folder of its own (a new SQLite database), under ``/usr/bin/time -v``: its
"Maximum resident set size" and wall-clock time. Ours runs from this checkout,
the peer from ``git archive PEER_REV`` unpacked into the work folder; they
alternate on the same file. The files and databases are deleted afterwards
unless ``--keep``.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/ingest_memory.py [--mb 200] [--peer-rev ab5e895]
Writes benchmarks/results/ingest_memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULTS = ROOT / "benchmarks" / "results"
PRODUCTS = ["billing", "login", "network", "storage", "mobile app", "printer", "email",
            "reports", "search", "accounts"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sentences() -> list[str]:
    import sentence_cache

    return [t.strip() for t in sentence_cache.all_sentences().text if t.strip()]


def rows(pool: list[str], seed: int = 0):
    """Endless (id, text, year or None, product) rows of realistic text."""
    rng = random.Random(seed)
    i = 0
    while True:
        text = " ".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.3:
            text += f" Ticket TK-{rng.randint(10_000, 99_999)}."
        year = None if rng.random() < 0.1 else 2000 + rng.randint(0, 25)
        yield i, text, year, PRODUCTS[rng.randrange(len(PRODUCTS))]
        i += 1


def write_csv(path: Path, target: int, pool: list[str]) -> int:
    import csv

    n = 0
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text", "year", "product"])
        for i, text, year, product in rows(pool):
            w.writerow([i, text, "" if year is None else year, product])
            n += 1
            if n % 10_000 == 0 and f.tell() >= target:
                break
    return n


def write_jsonl(path: Path, target: int, pool: list[str]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as f:
        for i, text, year, product in rows(pool):
            f.write(json.dumps({"id": i, "text": text, "year": year, "product": product}) + "\n")
            n += 1
            if n % 10_000 == 0 and f.tell() >= target:
                break
    return n


def write_parquet(path: Path, target: int, pool: list[str], compression: str) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, gen = 0, rows(pool)
    schema = pa.schema([("id", pa.int64()), ("text", pa.string()), ("year", pa.int64()),
                        ("product", pa.string())])
    with pq.ParquetWriter(path, schema, compression=compression) as w:
        while True:
            chunk = [next(gen) for _ in range(50_000)]
            w.write_table(pa.table(list(map(list, zip(*chunk, strict=True))), schema=schema))
            n += len(chunk)
            if path.stat().st_size >= target:
                break
    return n


def write_long_row(path: Path, target: int, pool: list[str]) -> int:
    """A CSV with one row whose text is about ``target`` bytes (no line break in it)."""
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as f:
        f.write("id,text\n1,")
        while f.tell() < target:
            f.write(" ".join(rng.choice(pool) for _ in range(1000)).replace(",", ";") + " ")
        f.write("\n")
    return 1


def peer_tree(rev: str, work: Path) -> tuple[Path, str]:
    """The peer's source (``git archive`` of ``rev``) and its full commit id."""
    commit = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    dest = work / f"peer-{commit[:10]}"
    if not dest.exists():
        dest.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest, commit


def measured(src: Path, path: Path, data: Path) -> dict:
    """``searchapp ingest path`` from ``src`` under /usr/bin/time -v, with its own data folder."""
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(src), "SEARCHAPP_DATA_DIR": str(data),
           "SEARCHAPP_DEVICE": "cpu"}
    env.pop("SEARCHAPP_DATABASE_URL", None)
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "searchapp", "ingest", str(path),
           "--corpus", "bench"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=src)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", proc.stderr)
    parts = [float(p) for p in wall.group(1).split(":")] if wall else [float("nan")]
    seconds = sum(p * 60 ** k for k, p in enumerate(reversed(parts)))
    said = [line for line in (proc.stdout + proc.stderr).splitlines()
            if line.startswith(("Corpus ", "error:", "Traceback", "MemoryError"))]
    shutil.rmtree(data, ignore_errors=True)
    return {"max_rss_mb": round(int(rss.group(1)) / 1024, 1) if rss else None,
            "seconds": round(seconds, 1), "exit": proc.returncode,
            "said": said[-1][:300] if said else (proc.stderr.strip().splitlines() or [""])[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=200, help="size of each file, in MB")
    parser.add_argument("--peer-rev", default="ab5e895", help="the previous reader's commit")
    parser.add_argument("--files", default="csv,jsonl,parquet,long_row")
    parser.add_argument("--parquet-compression", default="none")
    parser.add_argument("--work", help="folder for the files (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the files afterwards")
    parser.add_argument("--out", default=str(RESULTS / "ingest_memory.json"))
    parser.add_argument("--merge", action="store_true",
                        help="keep the other files' entries already in --out (re-run some)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="ingest-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    target = int(args.mb * 1e6)
    peer_src, peer_commit = peer_tree(args.peer_rev, work)
    ours_commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "searchapp"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip())
    pool = sentences()
    makers = {"csv": ("rows.csv", write_csv), "jsonl": ("rows.jsonl", write_jsonl),
              "parquet": ("rows.parquet", lambda p, t, s: write_parquet(
                  p, t, s, args.parquet_compression)),
              "long_row": ("long_row.csv", write_long_row)}
    from scale import machine

    ours = ours_commit + (" (+ changes)" if dirty else "")
    result = {"mb": args.mb, "machine": machine(), "peer": peer_commit,
              "parquet_compression": args.parquet_compression,
              "command": "python -m searchapp ingest FILE --corpus bench (no --wait)",
              "files": {}}
    if args.merge and Path(args.out).exists():
        result["files"] = json.loads(Path(args.out).read_text())["files"]
    try:
        for kind in args.files.split(","):
            name, make = makers[kind]
            path = work / name
            started = time.perf_counter()
            n = make(path, target, pool)
            size = path.stat().st_size
            log(f"{name}: {size / 1e6:.1f} MB, {n:,} rows, written in "
                f"{time.perf_counter() - started:.0f} s")
            entry = {"bytes": size, "rows": n, "ours_commit": ours,
                     "load_before": os.getloadavg()}
            for who, src in (("ours", ROOT), ("peer", peer_src)):
                entry[who] = measured(src, path, work / f"data-{who}")
                log(f"  {who}: {entry[who]}")
            entry["load_after"] = os.getloadavg()
            o, p = entry["ours"], entry["peer"]
            if o["max_rss_mb"] and p["max_rss_mb"]:
                entry["rss_peer_over_ours"] = round(p["max_rss_mb"] / o["max_rss_mb"], 2)
                entry["seconds_peer_over_ours"] = round(p["seconds"] / max(o["seconds"], 0.1), 2)
                entry["rss_over_file"] = {"ours": round(o["max_rss_mb"] * 2**20 / size, 2),
                                          "peer": round(p["max_rss_mb"] * 2**20 / size, 2)}
            log(f"  peer / ours: RSS {entry.get('rss_peer_over_ours')}, time "
                f"{entry.get('seconds_peer_over_ours')}")
            result["files"][kind] = entry
            path.unlink()
            Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
