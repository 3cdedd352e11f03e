"""The newcomer's walkthrough, timed: a pile of real files from upload to answer, in Chromium.

What a new user does, step by step, against the app as ``make run`` starts it (``serve.py``
with its worker, a fresh data folder): open the app, upload the pile as one zip, wait for
the files to be read and embedded, look at the Jobs page from a second tab (the files
that could not be read, with why), ask ten questions written as paraphrases and see
whether the right file is in the first three, open a hit at its section, and look at the
clusters. Each step is timed and photographed (``--shots``).

The pile (copied into a temporary folder, then zipped; nothing else is written but the
results): every Git manual page (Debian ``git-doc``) the questions of
``benchmarks/data/git_doc_questions.tsv`` name plus every 12th other page, the PDF manuals
under ``/usr/share/doc``, the Word and PowerPoint files of python-docx's and python-pptx's
test suites (``--sources``, as ``reasons_pile.py`` fetches them; left out when absent),
CPython's test e-mails, and pictures of a sentence (PNG, JPEG) drawn here.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/walkthrough.py [--questions 10]
Writes benchmarks/results/walkthrough.json, benchmarks/results/walkthrough.md and the
pictures in docs/screenshots/walkthrough/.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from map_scale import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    PAINTED,
    poll,
    read_worker_pid,
    serve,
    stop,
)
from reasons_pile import STDLIB_TEST, _drawn  # noqa: E402

GIT_DOC = Path("/usr/share/doc/git-doc")
QUESTIONS = ROOT / "benchmarks" / "data" / "git_doc_questions.tsv"
RESULTS = ROOT / "benchmarks" / "results"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
WAIT = 900_000  # ms: the pile's embedding on two busy cores


def questions(n: int) -> list[tuple[str, set[str]]]:
    rows = [line.split("\t") for line in QUESTIONS.read_text("utf-8").splitlines()[1:]
            if line.strip()]
    return [(q, set(rel.split(","))) for q, rel, *_ in rows][:n]


def build_pile(folder: Path, sources: Path, asked: list[tuple[str, set[str]]]) -> dict:
    """The pile in ``folder``; what is in it, by kind."""
    wanted = set().union(*(rel for _, rel in asked))
    pages = sorted(GIT_DOC.glob("*.html"))
    picks = [p for i, p in enumerate(pages) if p.name in wanted or i % 12 == 0]
    kinds: dict[str, int] = {}

    def put(kind: str, source: Path, name: str) -> None:
        target = folder / kind / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        kinds[kind] = kinds.get(kind, 0) + 1

    for p in picks:
        put("git-manual", p, p.name)
    for p in sorted(Path("/usr/share/doc").glob("*/*.pdf")):
        put("pdf", p, f"{p.parent.name}-{p.name}")
    for ending in ("docx", "pptx"):
        for p in sorted(sources.rglob(f"*.{ending}"))[:12] if sources.exists() else []:
            put(ending, p, p.name)
    for p in sorted((STDLIB_TEST / "test_email" / "data").glob("msg_*.txt"))[:20]:
        put("mail", p, p.stem + ".eml")
    kinds["pictures"] = len(_drawn(folder / "pictures"))
    return kinds


def zipped(folder: Path, into: Path) -> Path:
    with zipfile.ZipFile(into, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(folder))
    return into


def idle(page) -> None:
    page.wait_for_selector(IDLE, timeout=WAIT)


def walk(url: str, pile_zip: Path, asked, shots: Path) -> dict:
    from playwright.sync_api import sync_playwright

    steps: dict[str, float] = {}
    found: list[dict] = []
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(WAIT)
        started = time.monotonic()
        page.goto(url)
        page.get_by_role("heading", name="Upload").wait_for()
        idle(page)
        steps["first page (s)"] = time.monotonic() - started

        started = time.monotonic()
        page.locator('input[type="file"]').first.set_input_files(str(pile_zip))
        page.get_by_role("button", name="Add and embed").wait_for()
        page.get_by_label("New corpus name").fill("pile")
        page.get_by_role("button", name="Add and embed").click()
        page.get_by_text("files added").first.wait_for()
        steps["files read (s)"] = time.monotonic() - started
        page.get_by_text("Embedding 'pile': done").wait_for()
        steps["read and embedded (s)"] = time.monotonic() - started
        idle(page)
        page.screenshot(path=str(shots / "1-upload-report.png"), full_page=True)

        jobs = context.new_page()  # another tab: the failures are named there too
        jobs.set_default_timeout(WAIT)
        jobs.goto(f"{url}/jobs")
        jobs.get_by_role("heading", name="Jobs").wait_for()
        idle(jobs)
        jobs.screenshot(path=str(shots / "2-jobs-other-tab.png"), full_page=True)

        page.goto(f"{url}/search?corpus=pile")
        for number, (question, relevant) in enumerate(asked, 1):
            started = time.monotonic()
            box = page.get_by_label("Query")
            box.fill(question)
            box.press("Enter")
            page.wait_for_function(
                "q => new URLSearchParams(location.search).get('q') === q", arg=question)
            idle(page)
            page.locator(".st-key-hit-1").wait_for()
            seconds = time.monotonic() - started
            top = [page.locator(f".st-key-hit-{i}").inner_text() for i in (1, 2, 3)
                   if page.locator(f".st-key-hit-{i}").count()]
            hit = next((i + 1 for i, text in enumerate(top)
                        if any(r in text for r in relevant)), None)
            found.append({"question": question, "relevant": sorted(relevant), "rank": hit,
                          "seconds": round(seconds, 2)})
            if number == 1:
                page.screenshot(path=str(shots / "3-search.png"), full_page=True)
        opener = page.locator(".st-key-hit-1").get_by_role("link", name="Open at").first
        if opener.count():
            with context.expect_page() as opened:
                opener.click()
            view = opened.value
            view.wait_for_load_state()
            view.screenshot(path=str(shots / "4-open-at-section.png"))
        page.goto(f"{url}/clusters?corpus=pile")
        page.get_by_role("heading", name="Clusters").wait_for()
        idle(page)
        started = time.monotonic()
        page.get_by_role("button", name="Compute clusters").click()
        if poll(page, PAINTED, WAIT / 1000) is not None:
            steps["clusters computed and drawn (s)"] = time.monotonic() - started
        idle(page)
        page.screenshot(path=str(shots / "5-clusters.png"), full_page=True)
        browser.close()
    return {"steps": steps, "questions": found}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--sources", type=Path, default=Path("/tmp/pilesrc"))
    ap.add_argument("--shots", type=Path, default=ROOT / "docs" / "screenshots" / "walkthrough")
    args = ap.parse_args()
    asked = questions(args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        kinds = build_pile(work / "pile", args.sources, asked)
        pile_zip = zipped(work / "pile", work / "pile.zip")
        zip_bytes = pile_zip.stat().st_size
        started = time.monotonic()
        proc, log, url = serve("serve.py", work / "data", work / "app.log")
        up = time.monotonic() - started
        try:
            result = walk(url, pile_zip, asked, args.shots)
        finally:
            worker = read_worker_pid(work / "data")
            stop(proc.pid)
            if worker:
                stop(worker)
            log.close()
    result["steps"] = {"server up (s)": up, **result["steps"]}
    result["pile"] = {"files": sum(kinds.values()), "by kind": kinds,
                      "zip bytes": zip_bytes}
    top3 = sum(1 for q in result["questions"] if q["rank"])
    first = sum(1 for q in result["questions"] if q["rank"] == 1)
    result["summary"] = {"top 1": first, "top 3": top3, "asked": len(result["questions"])}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "walkthrough.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["| step | seconds |", "| --- | --- |"]
    lines += [f"| {k} | {v:.1f} |" for k, v in result["steps"].items()]
    lines += ["", f"Right file first for {first} of {len(result['questions'])} questions, in the "
              f"top 3 for {top3}.", "", "| question | rank | seconds |", "| --- | --- | --- |"]
    lines += [f"| {q['question']} | {q['rank'] or '-'} | {q['seconds']} |"
              for q in result["questions"]]
    (RESULTS / "walkthrough.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
