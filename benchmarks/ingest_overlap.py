"""Reading and encoding at once: an ingest with its batches embedded while it reads, against
the same ingest with all the embedding left to the embed job after it (the app before).

The input: the first ``--files`` pages of PostgreSQL's HTML manual (Debian's
``postgresql-doc``) and the PDF manuals of the documents benchmark's cache if it
has them (``benchmarks/.cache/root``, made by ``benchmarks/documents.py``). Each
run: a fresh ``SEARCHAPP_DATA_DIR``, ``request_ingest`` (``overlap`` on or off),
then the worker's ``run_until_done`` for the ingest job and its embed job, in
this process. A thread polls the database every 0.1 s for the first embedded
document. Reported: seconds until the first document is searchable by meaning,
until every document is, and the two jobs' own durations. The runs alternate
(off, on, off, on, ...) so a change of load hits both.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/ingest_overlap.py [--files 150] [--rounds 2]
Writes benchmarks/results/ingest_overlap.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"
PG = Path("/usr/share/doc/postgresql-doc-15/html")
PDFS = ROOT / "benchmarks" / ".cache" / "root" / "usr" / "share"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def make_folder(work: Path, files: int, pdfs: int) -> Path:
    folder = work / "input"
    folder.mkdir()
    for page in sorted(PG.glob("*.html"))[:files]:
        shutil.copy(page, folder / page.name)
    found = sorted(p for p in PDFS.rglob("*.pdf") if not p.is_symlink())[:pdfs]
    for n, pdf in enumerate(found):
        shutil.copy(pdf, folder / f"{n:02}-{pdf.name}")
    return folder


def one_run(folder: Path, work: Path, overlap: bool) -> dict:
    from searchapp.context import App
    from searchapp.intake.files_job import request_ingest
    from searchapp.jobs.worker import run_until_done
    from searchapp.store import repo

    data = work / f"data-{overlap}"
    shutil.rmtree(data, ignore_errors=True)
    os.environ["SEARCHAPP_DATA_DIR"] = str(data)
    app = App()
    app.encoder(app.settings.model)  # loaded before the clock starts, as in a running worker
    first, done = [None], threading.Event()

    def watch(started: float) -> None:
        while not done.is_set() and first[0] is None:
            with app.db.session() as s:
                corpus = repo.find_corpus(s, "overlap")
                if corpus is not None and repo.count_embedded(
                        s, corpus.id, app.model_ref(corpus.model_name).id) > 0:
                    first[0] = time.monotonic() - started
            done.wait(0.1)

    started = time.monotonic()
    watcher = threading.Thread(target=watch, args=(started,), daemon=True)
    watcher.start()
    ingest = run_until_done(app, request_ingest(app, "overlap", [folder], overlap=overlap))
    read_s = time.monotonic() - started
    embed = run_until_done(app, ingest.result["embed_job"])
    total_s = time.monotonic() - started
    done.set()
    watcher.join()
    assert ingest.status == embed.status == "succeeded", (ingest.error, embed.error)
    return {"overlap": overlap, "first_searchable_s": round(first[0] or total_s, 1),
            "all_embedded_s": round(total_s, 1), "ingest_job_s": round(read_s, 1),
            "embed_job_after_s": round(total_s - read_s, 1),
            "documents": ingest.result["documents"],
            "embedded_by_embed_job": embed.result["embedded"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=150)
    ap.add_argument("--pdfs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    if not PG.is_dir():
        raise SystemExit(f"{PG} is missing: apt-get install postgresql-doc-15")
    os.environ.setdefault("SEARCHAPP_DEVICE", "cpu")
    work = Path(tempfile.mkdtemp(prefix="bench-overlap-"))
    try:
        folder = make_folder(work, args.files, args.pdfs)
        log(f"{len(list(folder.iterdir()))} files in {folder}")
        runs = []
        for _ in range(args.rounds):
            for overlap in (False, True):
                runs.append(one_run(folder, work, overlap))
                log(f"  {runs[-1]}")
        summary = {}
        for overlap in (False, True):
            mine = [r for r in runs if r["overlap"] is overlap]
            summary["overlap" if overlap else "after"] = {
                key: statistics.median(r[key] for r in mine)
                for key in ("first_searchable_s", "all_embedded_s", "ingest_job_s")}
        ratio = {key: round(summary["overlap"][key] / summary["after"][key], 2)
                 for key in ("first_searchable_s", "all_embedded_s")}
        out = {"benchmark": "ingest_overlap", "files": args.files, "pdfs": args.pdfs,
               "cores": os.cpu_count(), "load_at_end": os.getloadavg(), "runs": runs,
               "median": summary, "overlap_over_after": ratio}
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "ingest_overlap.json").write_text(json.dumps(out, indent=1) + "\n")
        for name, row in summary.items():
            print(f"{name:8} first searchable {row['first_searchable_s']:7.1f} s   all embedded "
                  f"{row['all_embedded_s']:7.1f} s")
        print(f"overlap / after: {ratio}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
