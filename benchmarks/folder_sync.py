"""A watched folder kept in step: the first scan, the delay from a saved file to a search hit,
a burst of copied files, the watcher's CPU while idle and its memory; ours (watchdog events,
debounced) against the peer (a full rescan on a timer, what `cron` + `searchapp ingest
--sync` gives, and what Khoj's periodic indexing does), on the same folder in the same run.

The folder (``--files`` text files + ``--pdfs`` PDFs, default 10,000 + 200):
- text files: the text of Debian's HTML manuals under /usr/share/doc (git-doc,
  postgresql-doc), each page cut at paragraph ends into files of about 1,500 characters;
- PDFs: Debian's PDF manuals the documents benchmark keeps in benchmarks/.cache/
  (``benchmarks/documents.py`` fetches them), the shortest first, cycled under new names
  when more are asked for than exist.

Steps, with a real ``searchapp worker`` (keeper and jobs) on a data folder of its own:
1. ``watch add``, then the first scan: seconds until every file is in the store, and until
   every document has its vector (searchable by meaning);
2. ``--edits`` single files saved one at a time: seconds from the write to a hit in
   lexical search (stored) and in semantic search (embedded) for the file's own words;
3. a burst of ``--burst`` files copied in at once: per file, seconds from the end of the
   copy to its being stored, and until all are embedded;
4. ``--idle`` seconds of nothing: CPU seconds used by the worker (keeper included) and its
   memory (RSS now and peak);
5. the peer: the folder paused, a full ``ingest --sync`` every ``--peer-interval`` seconds
   by the same worker; its single-edit delays and idle CPU the same way.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/folder_sync.py [--files 1000 --pdfs 20]
Writes benchmarks/results/folder_sync.json (and prints the table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache" / "root"
HTML_ROOTS = [Path("/usr/share/doc/git-doc"), Path("/usr/share/doc/postgresql-doc-15")]
RESULTS = ROOT / "benchmarks" / "results" / "folder_sync.json"
CORPUS = "bench"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------- the files
def html_texts() -> list[tuple[str, str]]:
    """(name, text) of each HTML page of the manuals, tags stripped."""
    import lxml.html

    pages = []
    for root in HTML_ROOTS:
        for path in sorted(root.rglob("*.html")):
            try:
                tree = lxml.html.fromstring(path.read_bytes())
            except Exception:  # an empty or broken page: not a file to cut
                continue
            for bad in tree.xpath("//script|//style|//nav"):
                bad.drop_tree()
            text = re.sub(r"\n\s*\n+", "\n\n", tree.text_content()).strip()
            if len(text) > 200:
                pages.append((f"{root.name}-{path.stem}", text))
    return pages


def pieces(text: str, size: int = 1500) -> list[str]:
    """The text cut at paragraph ends into pieces of about ``size`` characters."""
    out, current = [], ""
    for para in text.split("\n\n"):
        current = f"{current}\n\n{para}" if current else para
        if len(current) >= size:
            out.append(current)
            current = ""
    if current.strip():
        out.append(current)
    return out


def text_files(n: int, size: int = 1500) -> list[tuple[str, str]]:
    """``n`` (relative path, text) pairs from the manuals, each about ``size`` characters; the
    pieces are cut smaller when the manuals hold fewer than ``n`` of that size (the files
    of a folder of notes), and all are used if even that is too few."""
    pages = html_texts()
    for _ in range(4):
        files = [(f"{name}/part-{i:03}.txt", piece)
                 for name, text in pages for i, piece in enumerate(pieces(text, size))]
        if len(files) >= n:
            break
        size = int(size * len(files) / n * 0.9)  # fewer pieces than wanted: cut smaller
    if len(files) < n:
        log(f"the manuals hold {len(files):,} pieces; using all of them, not {n:,}")
    step = max(1, len(files) // max(n, 1))
    return files[::step][:n]


def pdf_files(n: int) -> list[Path]:
    """The cached PDFs, shortest first (cycled when more are asked for than exist)."""
    pdfs = sorted((p for p in CACHE.rglob("*.pdf") if not p.is_symlink()),
                  key=lambda p: p.stat().st_size)
    if n and not pdfs:
        sys.exit("No PDFs in benchmarks/.cache: run benchmarks/documents.py once, or --pdfs 0")
    return [pdfs[i % len(pdfs)] for i in range(n)]


def write_pdfs(folder: Path, n: int, pages: int) -> None:
    """``n`` PDFs of ``pages`` pages each (0: whole manuals, cycled), cut in order from the
    cached manuals, so each holds its own pages: a folder of reports and papers is many
    short PDFs, not ten copies of one 2,400-page reference."""
    import pypdfium2 as pdfium

    (folder / "pdf").mkdir(exist_ok=True)
    if not pages:
        for i, pdf in enumerate(pdf_files(n)):
            shutil.copyfile(pdf, folder / "pdf" / f"{i:04}-{pdf.name}")
        return
    sources = list({p.stat().st_size: p for p in reversed(pdf_files(1) and sorted(
        (p for p in CACHE.rglob("*.pdf") if not p.is_symlink()),
        key=lambda p: p.stat().st_size))}.values())[::-1]  # one of each identical size
    made, turn = 0, 0
    while made < n:
        for pdf in sources:
            src = pdfium.PdfDocument(str(pdf))
            for start in range(0, len(src), pages):
                if made >= n:
                    break
                out = pdfium.PdfDocument.new()
                out.import_pages(src, list(range(start, min(start + pages, len(src)))))
                out.save(str(folder / "pdf" / f"{made:04}-{pdf.stem}-p{start + 1}-{turn}.pdf"))
                made += 1
            src.close()
            if made >= n:
                break
        turn += 1


def make_folder(folder: Path, n_text: int, n_pdf: int, pdf_pages: int) -> int:
    for rel, text in text_files(n_text):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if n_pdf:
        write_pdfs(folder, n_pdf, pdf_pages)
    return sum(1 for p in folder.rglob("*") if p.is_file())


# ------------------------------------------------------------------------------ the process
def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its children (reaped and alive)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for p in [pid, *children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
    return total


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, peak RSS) of the process in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    kb = {k: int(v.split()[0]) for k, v in re.findall(r"^(VmRSS|VmHWM):\s+(.*)$", status, re.M)}
    return kb["VmRSS"] / 1024, kb["VmHWM"] / 1024


def wait_until(condition, timeout: float, step: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise TimeoutError(f"not done within {timeout:g} s")


# ----------------------------------------------------------------------------- measurements
class Bench:
    def __init__(self, data: Path, folder: Path):
        os.environ["SEARCHAPP_DATA_DIR"] = str(data)
        os.environ.pop("SEARCHAPP_DATABASE_URL", None)
        from searchapp.context import App

        self.app, self.folder = App(), folder
        self.worker: subprocess.Popen | None = None

    def start_worker(self, log_path: Path, env: dict | None = None) -> None:
        with open(log_path, "ab") as out:
            self.worker = subprocess.Popen(
                [sys.executable, "-m", "searchapp", "worker"],
                env={**os.environ, **(env or {})}, stdout=out, stderr=subprocess.STDOUT)

    def stop_worker(self) -> None:
        if self.worker:
            self.worker.send_signal(signal.SIGTERM)
            self.worker.wait(timeout=60)

    def counts(self) -> tuple[int, int]:
        """(documents, documents with a vector) of the corpus."""
        from sqlalchemy import text

        with self.app.db.session() as s:
            docs = s.execute(text("SELECT count(*) FROM documents d JOIN corpora c ON "
                                  "c.id = d.corpus_id WHERE c.name = :n"), {"n": CORPUS}).scalar()
            vecs = s.execute(text("SELECT count(DISTINCT e.document_id) FROM embeddings e JOIN "
                                  "documents d ON d.id = e.document_id JOIN corpora c ON "
                                  "c.id = d.corpus_id WHERE c.name = :n"), {"n": CORPUS}).scalar()
        return docs or 0, vecs or 0

    def stored_ids(self) -> set[str]:
        from sqlalchemy import text

        with self.app.db.session() as s:
            return set(s.execute(text("SELECT external_id FROM documents d JOIN corpora c ON "
                                      "c.id = d.corpus_id WHERE c.name = :n"),
                                 {"n": CORPUS}).scalars())

    def hit(self, query: str, doc_id: str, mode: str) -> bool:
        from searchapp.errors import SearchAppError
        from searchapp.search.service import search

        try:
            return any(h.id == doc_id for h in search(self.app, CORPUS, query, k=5, mode=mode))
        except SearchAppError:  # not searchable yet (no vectors, index being built)
            return False

    def first_scan(self, total: int, timeout: float) -> dict:
        t0 = time.monotonic()
        wait_until(lambda: self.counts()[0] >= total, timeout, 0.5)
        stored = time.monotonic() - t0
        wait_until(lambda: (c := self.counts())[1] >= c[0] >= total, timeout, 0.5)
        return {"files": total, "stored_s": stored, "searchable_s": time.monotonic() - t0}

    def edits(self, n: int, tag: str, timeout: float) -> dict:
        stored, embedded = [], []
        for i in range(n):
            word = f"zqx{tag}{i}wv"
            rel = f"edits/{tag}-{i:03}.txt"
            (self.folder / "edits").mkdir(exist_ok=True)
            text = f"A note saved by hand: {word} is where the spare keys to the shed are kept."
            t0 = time.monotonic()
            (self.folder / rel).write_text(text)
            wait_until(lambda w=word, r=rel: self.hit(w, r, "lexical"), timeout, 0.05)
            stored.append(time.monotonic() - t0)
            wait_until(lambda t=text, r=rel: self.hit(t, r, "semantic"), timeout, 0.05)
            embedded.append(time.monotonic() - t0)
            log(f"  {tag} edit {i + 1}/{n}: stored {stored[-1]:.2f} s, searchable by meaning "
                f"{embedded[-1]:.2f} s")
        return {"edits": n, "stored": percentiles(stored), "embedded": percentiles(embedded)}

    def burst(self, source: Path, timeout: float) -> dict:
        names = {f"burst/{p.relative_to(source).as_posix()}" for p in source.rglob("*.txt")}
        seen: dict[str, float] = {}
        shutil.copytree(source, self.folder / "burst")
        copied = time.monotonic()
        while len(seen) < len(names) and time.monotonic() - copied < timeout:
            now = time.monotonic()
            for found in (self.stored_ids() & names) - set(seen):
                seen[found] = now - copied
            time.sleep(0.2)
        wait_until(lambda: (c := self.counts())[1] >= c[0], timeout, 0.5)
        return {"files": len(names), "stored": percentiles(list(seen.values())),
                "all_embedded_s": time.monotonic() - copied, "missed": len(names) - len(seen)}

    def idle(self, seconds: float) -> dict:
        before, t0 = cpu_seconds(self.worker.pid), time.monotonic()
        time.sleep(seconds)
        used, wall = cpu_seconds(self.worker.pid) - before, time.monotonic() - t0
        rss, peak = memory_mb(self.worker.pid)
        return {"seconds": wall, "cpu_s": used, "cpu_percent": 100 * used / wall,
                "rss_mb": rss, "peak_rss_mb": peak}


def percentiles(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    return {"n": len(values), "p50": statistics.median(ordered),
            "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
            "max": ordered[-1]}


def peer(bench: Bench, interval: float, edits: int, idle: float, timeout: float) -> dict:
    """The folder paused for the keeper; a full ``ingest --sync`` every ``interval`` s."""
    import threading

    from searchapp.intake.files_job import request_ingest
    from searchapp.watching.folders import set_paused

    set_paused(bench.app, str(bench.folder), True)
    stop = threading.Event()

    def rescans():
        while not stop.wait(interval):
            request_ingest(bench.app, CORPUS, [bench.folder], sync=True)

    thread = threading.Thread(target=rescans, daemon=True)
    thread.start()
    try:
        out = {"interval_s": interval, **bench.edits(edits, "peer", timeout)}
        out["idle"] = bench.idle(idle)
    finally:
        stop.set()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000, help="text files in the folder")
    ap.add_argument("--pdfs", type=int, default=200, help="PDFs in the folder")
    ap.add_argument("--pdf-pages", type=int, default=10,
                    help="pages per PDF, cut from the cached manuals (0: whole manuals)")
    ap.add_argument("--edits", type=int, default=20, help="single files saved, one at a time")
    ap.add_argument("--burst", type=int, default=1_000, help="files copied in at once")
    ap.add_argument("--idle", type=float, default=30.0, help="seconds of idle measured")
    ap.add_argument("--peer-interval", type=float, default=60.0,
                    help="the peer's rescan interval (cron runs each minute at best)")
    ap.add_argument("--peer-edits", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=7200.0)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="folder-sync-"))
    folder, source = work / "watched", work / "burst-source"
    folder.mkdir()
    source.mkdir()
    log(f"making the folder: {args.files:,} text files + {args.pdfs} PDFs")
    try:
        total = make_folder(folder, args.files, args.pdfs, args.pdf_pages)
        for i, (rel, text) in enumerate(text_files(args.files + args.burst)[-args.burst:]):
            (source / f"{i:05}-{Path(rel).parent.name}.txt").write_text(text, encoding="utf-8")
    except BaseException:  # no PDFs, no manuals: nothing left behind
        shutil.rmtree(work, ignore_errors=True)
        raise
    bench = Bench(work / "data", folder)
    from searchapp.watching.folders import add_watch

    results = {"machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                           "load_before": os.getloadavg()},
               "args": vars(args), "files_in_folder": total}
    try:
        add_watch(bench.app, folder, CORPUS)
        bench.start_worker(work / "worker.log")
        log("first scan")
        results["first_scan"] = bench.first_scan(total, args.timeout)
        log(f"  {results['first_scan']}")
        log("single edits (ours)")
        results["ours_edits"] = bench.edits(args.edits, "ours", args.timeout)
        log(f"burst of {args.burst:,} files")
        results["ours_burst"] = bench.burst(source, args.timeout)
        log(f"  {results['ours_burst']}")
        log(f"idle {args.idle:g} s (ours)")
        results["ours_idle"] = bench.idle(args.idle)
        log(f"peer: a full rescan every {args.peer_interval:g} s")
        results["peer"] = peer(bench, args.peer_interval, args.peer_edits, args.idle,
                               args.timeout)
    finally:
        bench.stop_worker()
        results["machine"]["load_after"] = os.getloadavg()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2))
    print_table(results)


def print_table(r: dict) -> None:
    ours, theirs = r["ours_edits"], r["peer"]
    print(f"\nfolder: {r['files_in_folder']:,} files; first scan: stored in "
          f"{r['first_scan']['stored_s']:.1f} s, searchable by meaning in "
          f"{r['first_scan']['searchable_s']:.1f} s")
    print(f"{'':34} {'ours (events)':>14} {'peer (rescan)':>14} {'peer/ours':>10}")
    for label, key in (("single edit -> stored, p50 s", ("stored", "p50")),
                       ("single edit -> stored, p95 s", ("stored", "p95")),
                       ("single edit -> by meaning, p50 s", ("embedded", "p50")),
                       ("single edit -> by meaning, p95 s", ("embedded", "p95"))):
        a, b = ours[key[0]][key[1]], theirs[key[0]][key[1]]
        print(f"{label:34} {a:14.2f} {b:14.2f} {b / a:10.1f}")
    oi, pi = r["ours_idle"], theirs["idle"]
    print(f"{'idle CPU, % of one core':34} {oi['cpu_percent']:14.2f} {pi['cpu_percent']:14.2f}")
    print(f"{'worker RSS / peak, MB':34} {oi['rss_mb']:7.0f}/{oi['peak_rss_mb']:.0f}")
    b = r["ours_burst"]
    print(f"burst of {b['files']:,} files: stored p50 {b['stored']['p50']:.1f} s, p95 "
          f"{b['stored']['p95']:.1f} s; all searchable by meaning after "
          f"{b['all_embedded_s']:.1f} s; missed {b['missed']}")


if __name__ == "__main__":
    main()
