"""Documents end to end: a folder or archive → the ingest job → passages → search hits
that name their file, page and section; ingesting again is incremental; bad files are
report lines, never a stop. The real reader libraries, the bundled encoder, SQLite and
hnswlib throughout (the CLI run in this process)."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from searchapp.cli.main import main
from searchapp.search.service import search
from searchapp.store import repo
from tests.document_files import make_docx, make_pdf

MANUAL = [
    "Installing the server. Download the package and unpack it into a folder of your choice.",
    "Backups and recovery. A nightly dump of the database keeps a copy of every table; "
    "restore it with the recovery tool after a disk failure.",
    "Tuning memory. The shared buffers setting decides how much memory the cache of pages "
    "may take; a quarter of the machine's memory is a good start.",
]


def folder_of_documents(root: Path) -> Path:
    docs = root / "docs"
    (docs / "guide").mkdir(parents=True)
    make_pdf(docs / "guide" / "manual.pdf", MANUAL, title="Server manual", author="Ops")
    (docs / "notes.md").write_text(
        "---\ntitle: Team notes\n---\n# Holidays\nThe office is closed over the winter "
        "holidays.\n\n# Parking\nBicycles go in the courtyard behind the kitchen.\n",
        encoding="utf-8")
    make_docx(docs / "policy.docx")
    return docs


def ingest(*args: str, capsys) -> dict:
    capsys.readouterr()
    assert main(["ingest", *args, "--corpus", "docs", "--wait", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_folder_is_searchable_with_the_page_and_section_of_each_hit(app, tmp_path, capsys):
    docs = folder_of_documents(tmp_path)
    report = ingest(str(docs), capsys=capsys)
    assert (report["added"], report["failed"], report["unchanged"]) == (3, 0, 0)
    [hit] = search(app, "docs", "how much memory should the page cache use", k=1,
                   mode="semantic")
    assert hit.id == "guide/manual.pdf"
    assert hit.source == {"path": "guide/manual.pdf", "type": "pdf", "page": 3, "section": None}
    assert "shared buffers" in hit.text[hit.span[0]:hit.span[1]]  # the page named holds it
    [hit] = search(app, "docs", "where do I leave my bike", k=1, mode="hybrid")
    assert hit.source["path"] == "notes.md" and hit.source["section"] == "Parking"
    assert hit.meta["title"] == "Team notes" and hit.meta["type"] == "md"
    capsys.readouterr()
    assert main(["search", "--corpus", "docs", "nightly dump restore", "--json", "-k", "1"]) == 0
    [out] = json.loads(capsys.readouterr().out)["results"]
    assert out["source"] == {"path": "guide/manual.pdf", "type": "pdf", "page": 2,
                             "section": None}


def test_a_hit_found_by_words_names_the_page_its_snippet_comes_from(app, tmp_path, capsys):
    """A lexical hit has no matched passage: its page is where its snippet is (the densest
    run of the query's words), not where a word first occurs."""
    filler = "The weather was mild and the meeting ran long. " * 8
    docs = tmp_path / "pdfs"
    docs.mkdir()
    make_pdf(docs / "ops.pdf", [
        filler + "A backup is mentioned once here.",
        filler + "Nothing of interest on this page.",
        filler + "Backups: the nightly backup job writes each backup to the backup disk.",
    ])
    ingest(str(docs), capsys=capsys)
    [hit] = search(app, "docs", "backup", k=1, mode="lexical")
    assert hit.source["page"] == 3
    assert "nightly backup job" in hit.snippet


def test_no_passage_spans_two_pages(app, tmp_path, capsys):
    docs = tmp_path / "pdfs"
    docs.mkdir()
    make_pdf(docs / "short.pdf", ["Alpha page.", "Beta page.", "Gamma page."])
    ingest(str(docs), capsys=capsys)
    with app.db.session() as s:
        corpus = repo.corpus_state(s, "docs")
        [doc_id] = [f.id for f in repo.stored_files(s, corpus.id).values()]
        layout = repo.layouts_by_id(s, [doc_id])[doc_id]
        spans = repo.passage_spans(s.connection(), [doc_id])[doc_id]
    pages = [(a, b) for a, b, _page, _section in layout]
    assert len(spans) == 3
    for start, end in spans:  # each passage lies inside one page
        assert any(a <= start and end <= b for a, b in pages)


def test_ingesting_again_skips_unchanged_rereads_changed_and_sync_removes(app, tmp_path,
                                                                          capsys):
    docs = folder_of_documents(tmp_path)
    ingest(str(docs), capsys=capsys)
    again = ingest(str(docs), capsys=capsys)
    assert (again["added"], again["changed"], again["unchanged"]) == (0, 0, 3)
    assert again["embed_job"] is None
    (docs / "notes.md").write_text("# Parking\nCars park in the basement now.\n", "utf-8")
    (docs / "guide" / "manual.pdf").unlink()
    (docs / "faq.md").write_text("# FAQ\nAsk the front desk.\n", "utf-8")
    third = ingest(str(docs), "--sync", capsys=capsys)
    assert (third["added"], third["changed"], third["unchanged"], third["removed"]) == \
        (1, 1, 1, 1)
    with app.db.session() as s:
        ids = sorted(repo.stored_files(s, repo.corpus_state(s, "docs").id))
    assert ids == ["faq.md", "notes.md", "policy.docx"]
    [hit] = search(app, "docs", "where do cars park", k=1, mode="lexical")
    assert "basement" in hit.text


def test_judgements_follow_a_file_that_moved(app, tmp_path, capsys):
    from searchapp.judgements import service as judgements

    docs = folder_of_documents(tmp_path)
    ingest(str(docs), capsys=capsys)
    judgements.add(app, "docs", label=2, query="bike parking", doc="notes.md", source="cli")
    (docs / "archive").mkdir()
    shutil.move(docs / "notes.md", docs / "archive" / "notes.md")
    report = ingest(str(docs), "--sync", capsys=capsys)
    assert report["moved_judgements"] == 1
    [row] = judgements.list_judgements(app, "docs")
    assert row.a == "archive/notes.md"


def _rows(app) -> dict[str, tuple[int, str]]:
    """external id → (row id, meta path) of the corpus' file documents."""
    with app.db.session() as s:
        stored = repo.stored_files(s, repo.corpus_state(s, "docs").id)
    return {e: (f.id, f.meta["path"]) for e, f in stored.items()}


def test_a_moved_file_keeps_its_document_and_vectors_and_is_not_read_again(app, tmp_path,
                                                                           capsys):
    docs = folder_of_documents(tmp_path)
    ingest(str(docs), capsys=capsys)
    before = _rows(app)
    (docs / "old").mkdir()
    shutil.move(docs / "guide" / "manual.pdf", docs / "old" / "server-manual.pdf")
    report = ingest(str(docs), "--sync", capsys=capsys)
    assert (report["moved"], report["added"], report["removed"], report["documents"]) == \
        (1, 0, 0, 0), "a move is neither a new file nor a removal, and nothing is read"
    assert report["embed_job"] is None, "nothing to embed: the vectors are the same"
    after = _rows(app)
    assert after["old/server-manual.pdf"] == (before["guide/manual.pdf"][0],
                                              "old/server-manual.pdf"), "the same row"
    assert "guide/manual.pdf" not in after
    [hit] = search(app, "docs", "how much memory should the page cache use", k=1,
                   mode="semantic")
    assert hit.id == "old/server-manual.pdf" and hit.source["page"] == 3
    assert hit.meta["file"] == "server-manual.pdf" and hit.meta["folder"] == "old"


def test_a_copy_is_read_and_a_rename_to_another_type_is_read_again(app, tmp_path, capsys):
    docs = folder_of_documents(tmp_path)
    ingest(str(docs), capsys=capsys)
    before = _rows(app)
    shutil.copy(docs / "policy.docx", docs / "policy-copy.docx")  # the original stays: a copy
    (docs / "notes.md").rename(docs / "notes.txt")  # read another way: the front matter is text
    report = ingest(str(docs), "--sync", capsys=capsys)
    assert (report["moved"], report["added"], report["removed"]) == (0, 2, 1)
    after = _rows(app)
    assert after["policy.docx"] == before["policy.docx"]
    assert after["policy-copy.docx"][0] not in {i for i, _ in before.values()}, "a new document"


def test_an_ingest_without_sync_reads_a_new_path_even_with_known_bytes(app, tmp_path, capsys):
    docs = folder_of_documents(tmp_path)
    ingest(str(docs), capsys=capsys)
    shutil.move(docs / "notes.md", docs / "moved-notes.md")
    report = ingest(str(docs), capsys=capsys)  # no --sync: nothing is gone, so no move
    assert (report["moved"], report["added"]) == (0, 1)
    assert {"notes.md", "moved-notes.md"} <= set(_rows(app))


def test_an_archive_with_bad_members_ingests_the_rest(app, tmp_path, capsys):
    archive = tmp_path / "upload.zip"
    make_pdf(tmp_path / "ok.pdf", ["Quarterly figures rose by ten percent."])
    with zipfile.ZipFile(archive, "w") as z:
        z.write(tmp_path / "ok.pdf", "reports/ok.pdf")
        z.writestr("reports/broken.pdf", b"%PDF-1.4 this is not really a pdf")
        z.writestr("../escape.md", "# Out\nno")
        z.writestr("reports/fake.docx", b"plain text, not a zip")
        z.writestr("reports/empty.md", b"")
    report = ingest(str(archive), capsys=capsys)
    assert report["added"] == 1 and report["failed"] == 3 and report["skipped"] == 1
    reasons = {p["path"]: p["reason"] for p in report["problems"]}
    assert set(reasons) == {"reports/broken.pdf", "../escape.md", "reports/fake.docx",
                            "reports/empty.md"}
    [hit] = search(app, "docs", "quarterly figures", k=1, mode="hybrid")
    assert hit.source["path"] == "reports/ok.pdf" and hit.source["page"] == 1


def test_the_original_is_kept_once_per_content(app, tmp_path, capsys):
    docs = folder_of_documents(tmp_path)
    shutil.copy(docs / "notes.md", docs / "guide" / "copy.md")
    ingest(str(docs), capsys=capsys)
    stored = sorted(p.name for p in app.settings.originals_dir.rglob("*") if p.is_file())
    assert len(stored) == 3  # notes.md and guide/copy.md share one original
    with app.db.session() as s:
        metas = {e: f.meta for e, f in repo.stored_files(s, repo.corpus_state(s, "docs").id
                                                         ).items()}
    assert metas["notes.md"]["sha256"] == metas["guide/copy.md"]["sha256"]


@pytest.mark.parametrize("bad", ["encrypted", "not-a-pdf"])
def test_a_bad_file_is_one_report_line_and_stores_nothing_of_it(app, tmp_path, capsys, bad):
    docs = tmp_path / "in"
    docs.mkdir()
    (docs / "good.md").write_text("# Hello\nA good file.\n", "utf-8")
    if bad == "encrypted":
        make_pdf(docs / "secret.pdf", ["Hidden text"], password="pw")
    else:
        (docs / "secret.pdf").write_bytes(b"<html><body>I am a web page</body></html>")
    report = ingest(str(docs), capsys=capsys)
    assert report["added"] == 1 and report["failed"] == 1
    [problem] = report["problems"]
    assert problem["path"] == "secret.pdf" and len(problem["reason"]) > 20
    with app.db.session() as s:
        assert list(repo.stored_files(s, repo.corpus_state(s, "docs").id)) == ["good.md"]


def test_a_single_txt_is_read_per_line_unless_whole_files(app, tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("first line\nsecond line\n", "utf-8")
    assert main(["ingest", str(notes), "--corpus", "lines", "--wait"]) == 0
    assert main(["ingest", str(notes), "--corpus", "whole", "--wait", "--whole-files"]) == 0
    with app.db.session() as s:
        assert repo.corpus_state(s, "lines").documents == 2
        assert repo.corpus_state(s, "whole").documents == 1


def test_originals_go_into_backups_and_come_back_on_restore(app, tmp_path, capsys):
    from searchapp.backups.service import backup, restore

    docs = folder_of_documents(tmp_path)
    ingest(str(docs), capsys=capsys)
    kept = sorted(p.relative_to(app.settings.originals_dir)
                  for p in app.settings.originals_dir.rglob("*") if p.is_file())
    made = backup(app, tmp_path / "b.tar")
    assert sum(n.startswith("originals/") for n in made.manifest["members"]) == 3
    restored = restore(made.path, tmp_path / "restored").data_dir
    assert sorted(p.relative_to(restored / "originals")
                  for p in (restored / "originals").rglob("*") if p.is_file()) == kept


def test_an_ingest_killed_mid_way_resumes_with_nothing_lost_or_doubled(app, tmp_path):
    """A worker SIGKILLs itself (``SEARCHAPP_FAULT_KILL_AT``) after a committed batch and
    before the last file; the next worker takes the job over and finds the stored files
    unchanged. Every file is then stored once, whole (text and layout), with one original."""
    import os
    import subprocess
    import sys

    from searchapp.intake.files_job import BATCH_DOCUMENTS, request_ingest
    from searchapp.jobs import queue
    from searchapp.jobs.worker import work

    docs = tmp_path / "many"
    docs.mkdir()
    n = BATCH_DOCUMENTS * 2 + 10
    for i in range(n):
        (docs / f"note-{i:03}.md").write_text(f"# Note {i}\nThe number {i} is written here.\n")
    job_id = request_ingest(app, "docs", [docs])
    env = {**os.environ, "SEARCHAPP_FAULT_KILL_AT": str(BATCH_DOCUMENTS + 20)}
    killed = subprocess.run([sys.executable, "-m", "searchapp", "worker"], env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9 and "fault injection" in killed.stderr
    with app.db.session() as s:
        partial = len(repo.stored_files(s, repo.corpus_state(s, "docs").id))
    assert 0 < partial < n  # it died with some files stored and some not
    work(app, stop_when_idle=True, poll_seconds=0.05)
    job = queue.get(app.db, job_id)
    assert job.status == "succeeded", job.error
    assert job.result["unchanged"] == partial and job.result["added"] == n - partial
    with app.db.session() as s:
        corpus = repo.corpus_state(s, "docs")
        stored = repo.stored_files(s, corpus.id)
        layouts = repo.layouts_by_id(s, [f.id for f in stored.values()])
        assert corpus.documents == len(stored) == n == len(layouts)


def test_a_cancelled_ingest_stops_and_drops_its_uploaded_files(app, tmp_path):
    import os

    from searchapp.intake.files_job import request_ingest
    from searchapp.intake.staging import stage_uploads
    from searchapp.jobs import queue
    from searchapp.jobs.worker import work

    make_pdf(tmp_path / "a.pdf", ["Text of a page."])
    with open(tmp_path / "a.pdf", "rb") as f:
        staged = stage_uploads(app.settings.work_dir, [("a.pdf", f)], 1 << 20).folder
    job_id = request_ingest(app, "docs", sorted(staged.iterdir()), staged=staged)
    queue.cancel(app.db, job_id)  # while queued: the job never runs
    assert queue.get(app.db, job_id).status == "cancelled" and staged.exists()
    os.utime(staged, (0, 0))  # an hour and more ago
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "b.md").write_text("# B\nAnother file.\n")
    request_ingest(app, "docs", [tmp_path / "more"])  # the next ingest sweeps the orphan
    assert not staged.exists()
    running = request_ingest(app, "docs", [tmp_path / "more"])
    queue.cancel(app.db, running)
    work(app, stop_when_idle=True, poll_seconds=0.05)
    assert queue.get(app.db, running).status == "cancelled"


def test_the_job_says_which_scanned_page_ocr_is_on(app, tmp_path, monkeypatch):
    """OCR is the long step of a scan: the job's message names the file and its page."""
    from searchapp.intake.files_job import ingest_task
    from searchapp.intake.job_payloads import IngestPayload
    from tests.test_extract_pool import slow_tesseract

    bin_dir = slow_tesseract(tmp_path / "bin", 0)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    scans = tmp_path / "scans"
    scans.mkdir()
    make_pdf(scans / "letters.pdf", [None, None, None])

    class Recorder:
        job_id = 0

        def __init__(self):
            self.app, self.messages = app, []

        def progress(self, done, total, message=None, **_):
            self.messages.append(message)

    ctx = Recorder()
    report = ingest_task(ctx, IngestPayload("scans", [str(scans)], app.settings.model))
    assert report["added"] == 1
    ocr = [m for m in ctx.messages if "OCR of" in m]
    assert [m.split(" · ")[-1] for m in ocr] == [
        f"OCR of letters.pdf: page {n} of 3" for n in (1, 2, 3)]


@pytest.mark.parametrize("overlap", [True, False])
def test_batches_are_embedded_while_the_files_are_read(app, tmp_path, overlap):
    """With ``overlap`` each stored batch is embedded inside the ingest job, while the next
    files are read: when the job ends every new document has its vector and the embed job
    after it has nothing left. Without it, nothing is embedded until that job runs."""
    from searchapp.intake.files_job import request_ingest
    from searchapp.jobs.worker import run_until_done
    from searchapp.vectors.handle import open_corpus

    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(150):  # three batches of the ingest's 64 documents
        (folder / f"note-{n:03}.md").write_text(f"# Note {n}\nRoom {n} has {n % 7} chairs.\n")
    job = run_until_done(app, request_ingest(app, "notes", [folder], overlap=overlap))
    assert job.status == "succeeded" and job.result["added"] == 150
    handle = open_corpus(app, "notes", require_vectors=False)
    with app.db.session() as s:
        embedded_by_ingest = repo.count_embedded(s, handle.corpus_id, handle.model.id)
    embed = run_until_done(app, job.result["embed_job"])
    assert (embedded_by_ingest, embed.result["embedded"]) == ((150, 0) if overlap else (0, 150))
    [hit] = search(app, "notes", "how many chairs are in room 42", k=1, mode="hybrid")
    assert hit.id == "note-042.md"


def test_the_job_says_it_is_embedding_the_last_batches_after_the_last_file(app, tmp_path,
                                                                            monkeypatch):
    """Every file read, the ingest waits for the thread's last batches: its line says so
    (instead of standing on "Reading files: N of N" for as long as the encoder needs)."""
    import threading

    from searchapp.corpora import embed_alongside
    from searchapp.intake.files_job import ingest_task
    from searchapp.intake.job_payloads import IngestPayload

    said, real = threading.Event(), embed_alongside.embed_rows

    def slow_until_said(*args, **kwargs):  # the encoder still busy when reading ends
        said.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(embed_alongside, "embed_rows", slow_until_said)
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(3):
        (folder / f"n{n}.md").write_text(f"# Note {n}\nShelf {n} holds maps.\n")

    class Recorder:
        job_id = 0

        def __init__(self):
            self.app, self.messages = app, []

        def checkpoint(self):
            pass

        def progress(self, done, total, message=None, **_):
            self.messages.append(message)
            if "embedding the last documents read" in (message or ""):
                said.set()

    ctx = Recorder()
    report = ingest_task(ctx, IngestPayload("notes", [str(folder)], app.settings.model))
    assert report["added"] == 3 and said.is_set()
    assert ctx.messages[-1].endswith("3 documents embedded")
