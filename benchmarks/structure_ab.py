"""Ingest throughput and query latency of two versions of the code, in the same run.

A change of structure (modules moved, registries, declared job kinds) must not cost speed.
This runs the code of a git ref ``--before`` (the peer) and of ``--after`` (default: the
working tree) on the same input, alternately (A B A B ...), so both see the machine's
same moods:

1. **ingest**: ``searchapp ingest FOLDER --corpus pages --wait`` as a user runs it, in a
   process of its own with a fresh data folder: ``--pages`` HTML pages of Debian's
   PostgreSQL manual (``apt-get install postgresql-doc``) read, stored, embedded and
   indexed. Reported: the whole command's seconds and files per second.
2. **query**: in a process of its own on the data folder the ingest made, ``--queries``
   hybrid searches (the git manual questions, ``benchmarks/data/git_doc_questions.tsv``,
   then STSb-like paraphrases cycled) through ``search.service.search``, after two
   warm-up searches; p50 and p95 in milliseconds.

Each version runs from a checkout of its own (``git worktree``, removed at the end) with
this repo's virtual environment. Prints both, and the ratio after/before of each figure.

Run:  .venv/bin/python benchmarks/structure_ab.py --before 55801f6 [--rounds 3]
Writes benchmarks/results/structure_ab.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANUAL = sorted(Path("/usr/share/doc").glob("postgresql-doc-*/html"))
QUESTIONS = ROOT / "benchmarks" / "data" / "git_doc_questions.tsv"
QUERY_CHILD = r"""
import json, statistics, sys, time
from searchapp.context import App
from searchapp.search.service import search
queries = json.loads(sys.argv[1])
app = App()
for q in queries[:2]:
    search(app, "pages", q, k=10, mode="hybrid")
times = []
for q in queries:
    started = time.perf_counter()
    search(app, "pages", q, k=10, mode="hybrid")
    times.append((time.perf_counter() - started) * 1000)
times.sort()
print(json.dumps({"p50_ms": statistics.median(times),
                  "p95_ms": times[int(0.95 * (len(times) - 1))]}))
"""


def checkout(ref: str, into: Path) -> Path:
    """The code of ``ref`` in a worktree under ``into``; ``"WORKTREE"``: this checkout."""
    if ref == "WORKTREE":
        return ROOT
    tree = into / ref.replace("/", "_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref],
                   check=True, capture_output=True)
    return tree


def env_for(tree: Path, data: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "SEARCHAPP_DATA_DIR": str(data),
            "OMP_WAIT_POLICY": "PASSIVE"}


def ingest(tree: Path, pages: Path, data: Path) -> float:
    """Seconds for ``searchapp ingest pages --wait`` with ``tree``'s code."""
    shutil.rmtree(data, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "searchapp", "ingest", str(pages), "--corpus",
                    "pages", "--wait"], cwd=tree, env=env_for(tree, data), check=True,
                   capture_output=True, text=True)
    return time.perf_counter() - started


def query(tree: Path, data: Path, queries: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", QUERY_CHILD, json.dumps(queries)], cwd=tree,
                         env=env_for(tree, data), check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def questions(n: int) -> list[str]:
    rows = [line.split("\t")[0] for line in QUESTIONS.read_text("utf-8").splitlines()[1:]
            if line.strip()]
    return [rows[i % len(rows)] for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="git ref of the code before")
    ap.add_argument("--after", default="WORKTREE", help="git ref after (default: this tree)")
    ap.add_argument("--pages", type=int, default=120)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "structure_ab.json"))
    args = ap.parse_args()
    if not MANUAL:
        sys.exit("Debian's PostgreSQL manual is not installed: apt-get install postgresql-doc")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pages = work / "pages"
        pages.mkdir()
        for page in sorted(MANUAL[0].glob("*.html"))[:args.pages]:
            shutil.copy(page, pages / page.name)
        trees = {"before": checkout(args.before, work), "after": checkout(args.after, work)}
        runs: dict[str, dict[str, list[float]]] = {
            side: {"ingest_s": [], "p50_ms": [], "p95_ms": []} for side in trees}
        try:
            for round_ in range(args.rounds):
                for side, tree in trees.items():
                    data = work / f"data-{side}"
                    seconds = ingest(tree, pages, data)
                    q = query(tree, data, questions(args.queries))
                    runs[side]["ingest_s"].append(seconds)
                    runs[side]["p50_ms"].append(q["p50_ms"])
                    runs[side]["p95_ms"].append(q["p95_ms"])
                    print(f"round {round_ + 1} {side:6s} ingest {seconds:6.1f} s "
                          f"({args.pages / seconds:5.2f} files/s)  query p50 "
                          f"{q['p50_ms']:6.1f} ms p95 {q['p95_ms']:6.1f} ms", flush=True)
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                    str(tree)], capture_output=True)
    medians = {side: {k: statistics.median(v) for k, v in r.items()} for side, r in runs.items()}
    ratio = {k: medians["after"][k] / medians["before"][k] for k in medians["after"]}
    for k in ("ingest_s", "p50_ms", "p95_ms"):
        print(f"{k:9s} before {medians['before'][k]:8.2f}  after {medians['after'][k]:8.2f}  "
              f"after/before {ratio[k]:.3f}")
    result = {"before": args.before, "after": args.after, "pages": args.pages,
              "queries": args.queries, "rounds": args.rounds, "runs": runs,
              "medians": medians, "ratio_after_over_before": ratio,
              "files_per_s": {s: args.pages / m["ingest_s"] for s, m in medians.items()},
              "machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count()}}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
