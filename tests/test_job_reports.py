"""An ingest's report wherever its job is shown: every file chosen is named (read,
unchanged, or left out with why and what to do) in the job's stored report, on the Jobs
page (a table whose reasons wrap), in `searchapp jobs --json` and `jobs show ID`, in the
API's job, and once per session in a notice under the corpus picker."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.cli.main import main
from searchapp.intake.files_job import request_ingest
from searchapp.intake.staging import stage_uploads
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from tests.test_api import stack  # noqa: F401 - the fixture

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "searchapp" / "ui" / "pages"
BROKEN_PDF = b"%PDF-1.4 this is not really a pdf"
LOGO = b"MZ\x90\x00" + bytes(64)  # a program: no type we read (an image is read by OCR)


def run_ingest(app, job_id: int) -> dict:
    """The ingest job run here, alone (its embed job stays queued)."""
    job = queue.claim(app.db, "test-worker", kinds=("ingest",))
    assert job is not None and job.id == job_id
    assert run_job(app, job) == "succeeded", queue.get(app.db, job_id).error
    return queue.get(app.db, job_id).result


def upload(app, files: list[tuple[str, bytes]], corpus: str = "docs") -> int:
    """Files staged as the Upload page and the API stage them, and their ingest queued."""
    staged = stage_uploads(app.settings.work_dir, [(n, io.BytesIO(b)) for n, b in files],
                           1 << 20)
    return request_ingest(app, corpus, staged.paths, staged=staged.folder, overlap=False,
                          options=staged.options())


def uploaded_with_failures(app) -> int:
    job_id = upload(app, [("notes.md", b"# Notes\nThe office opens at nine.\n"),
                          ("broken.pdf", BROKEN_PDF), ("tool.exe", LOGO),
                          ("faq.csv", b"id,text\n1,hello\n")])
    run_ingest(app, job_id)
    return job_id


# ---- the report: every chosen file named ---------------------------------------------------
def test_every_uploaded_file_is_in_the_report_even_one_not_of_a_type_we_read(app):
    job_id = uploaded_with_failures(app)
    report = queue.get(app.db, job_id).result
    assert (report["added"], report["failed"], report["skipped"]) == (1, 1, 2)
    reasons = {p["path"]: (p["kind"], p["reason"]) for p in report["problems"]}
    assert set(reasons) == {"broken.pdf", "tool.exe", "faq.csv"}
    assert reasons["tool.exe"][0] == "skipped"
    assert reasons["tool.exe"][1].startswith("is not a type we read (.exe); save it as PDF")
    assert reasons["faq.csv"][1].startswith("is a table (CSV); a table is added on its own")
    assert reasons["broken.pdf"][0] == "failed"
    # the refused files were never copied into the work folder
    assert not list((app.settings.work_dir / "uploads").glob("*/*.exe"))


def test_a_folder_and_an_archive_name_every_file_left_out_with_its_reason(app, tmp_path):
    folder = tmp_path / "pile"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# A\nText.\n")
    (folder / "sub" / "setup.exe").write_bytes(b"MZ")
    (folder / "README").write_text("no ending")
    (folder / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0")
    with zipfile.ZipFile(folder / "more.zip", "w") as z:
        z.writestr("in/b.md", "# B\nMore.\n")
        z.writestr("in/chart.exe", LOGO)
        z.writestr("in/table.tsv", "id\ttext\n")
    result = run_ingest(app, request_ingest(app, "pile", [folder], overlap=False))
    reasons = {p["path"]: p["reason"] for p in result["problems"]}
    assert set(reasons) == {"sub/setup.exe", "README", "old.doc", "more.zip/in/chart.exe",
                            "more.zip/in/table.tsv"}, reasons
    assert reasons["README"].startswith("is not a type we read: its name has no ending")
    assert "File > Save As > Word Document (.docx)" in reasons["old.doc"]
    assert reasons["more.zip/in/table.tsv"].startswith("is a table (TSV)")
    assert result["added"] == 2 and result["skipped"] == 5


def test_a_file_a_watched_folders_filters_leave_out_says_so(app, tmp_path):
    folder = tmp_path / "notes"
    (folder / "drafts").mkdir(parents=True)
    (folder / "a.md").write_text("# A\nText.\n")
    (folder / "drafts" / "b.md").write_text("# B\nDraft.\n")
    job_id = request_ingest(app, "notes", [folder], overlap=False,
                            options={"exclude": ["drafts/*"]})
    [problem] = run_ingest(app, job_id)["problems"]
    assert problem["path"] == "drafts/b.md"
    assert problem["reason"] == ("is left out by the folder's filters (exclude 'drafts/*'); "
                                 "change them to read it")


# ---- the command line ----------------------------------------------------------------------
def cli(capsys, *args: str) -> str:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_jobs_show_lists_every_file_not_read_with_its_reason(app, capsys):
    job_id = uploaded_with_failures(app)
    out = cli(capsys, "jobs", "show", str(job_id))
    lines = out.splitlines()
    assert lines[0] == (f"Job {job_id}: ingest · corpus 'docs' · model 'all-MiniLM-L6-v2' · "
                        "succeeded")
    assert "Corpus 'docs': 1 files added, 0 changed, 0 unchanged, 0 removed, 2 skipped, " \
           "1 failed." in lines
    assert "Files not read (3):" in lines
    assert any(x.startswith("  tool.exe: is not a type we read (.exe)")
               and x.endswith("[skipped]") for x in lines), out
    assert any(x.startswith("  broken.pdf") and x.endswith("[failed]") for x in lines), out
    shown = json.loads(cli(capsys, "jobs", "show", str(job_id), "--json"))["job"]
    assert shown["id"] == job_id and shown["status"] == "succeeded"
    assert {p["path"]: p["kind"] for p in shown["failures"]} == {
        "broken.pdf": "failed", "tool.exe": "skipped", "faq.csv": "skipped"}


def test_jobs_json_carries_each_jobs_failures(app, capsys):
    job_id = uploaded_with_failures(app)
    listed = {j["id"]: j for j in json.loads(cli(capsys, "jobs", "--json"))["jobs"]}
    assert sorted(p["path"] for p in listed[job_id]["failures"]) == [
        "broken.pdf", "faq.csv", "tool.exe"]
    embed = next(j for j in listed.values() if j["kind"] == "embed")
    assert embed["failures"] == []


def test_jobs_show_without_an_id_says_how(app, capsys):
    capsys.readouterr()
    assert main(["jobs", "show"]) != 0
    assert "searchapp jobs show ID" in capsys.readouterr().err


# ---- the API -------------------------------------------------------------------------------
def test_the_apis_job_names_its_failures_and_the_openapi_document_says_so(stack, app):  # noqa: F811
    from searchapp.api.app import build_api

    client, _ = stack[0]()
    answer = client.post("/api/v1/corpora/docs/files", files=[
        ("files", ("notes.md", b"# Notes\nOpen at nine.\n", "text/markdown")),
        ("files", ("tool.exe", LOGO, "application/octet-stream"))])
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["id"]
    assert answer.json()["failures"] == []  # queued: nothing known yet
    job = queue.claim(app.db, "test-worker", kinds=("ingest",))
    assert run_job(app, job) == "succeeded"
    body = client.get(f"/api/v1/jobs/{job_id}").json()
    [failure] = body["failures"]
    assert failure["path"] == "tool.exe" and failure["kind"] == "skipped"
    assert failure["reason"].startswith("is not a type we read (.exe)")
    assert body["result"]["added"] == 1
    schema = build_api(app=lambda: None).openapi()["components"]["schemas"]
    assert schema["JobOut"]["properties"]["failures"]["items"] == {
        "$ref": "#/components/schemas/FileProblem"}
    assert set(schema["FileProblem"]["required"]) == {"path", "reason", "kind"}


# ---- the pages -----------------------------------------------------------------------------
@pytest.fixture
def pages(ui_resources):
    return ui_resources


def page(name: str) -> AppTest:
    return AppTest.from_file(PAGES / f"{name}.py", default_timeout=60)


def test_the_jobs_page_lists_an_ingests_failures_in_a_table_that_wraps(app, pages):
    job_id = upload(app, [("notes.md", b"# Notes\nOpen at nine.\n"),
                          ("**bold**.pdf", BROKEN_PDF), ("tool.exe", LOGO)])
    run_ingest(app, job_id)
    at = page("jobs").run()
    assert not at.exception
    assert "**2 files not read**" in [m.value for m in at.markdown]
    [table] = at.table
    rows = table.value.to_dict("records")
    assert [r["file"] for r in rows] == ["tool.exe", "\\*\\*bold\\*\\*.pdf"]  # escaped
    assert [r["what happened"] for r in rows] == ["not read", "failed"]
    assert rows[0]["why, and what to do"].startswith("is not a type we read (.exe)")
    assert not at.dataframe  # no grid that cuts the reason at its column's edge


def test_the_corpus_picker_tells_once_per_session_what_the_last_ingest_left_out(app, pages):
    job_id = upload(app, [("notes.md", b"# Notes\nOpen at nine.\n"),
                          ("broken.pdf", BROKEN_PDF), ("tool.exe", LOGO)])
    run_ingest(app, job_id)
    at = page("search").run()
    assert not at.exception
    [notice] = [w.value for w in at.warning]
    assert notice.startswith(f"The last files added to 'docs' (job {job_id}) left 2 files "
                             "out: tool.exe: is not a type we read (.exe); save it as PDF")
    assert "; broken.pdf" in notice and ".." not in notice
    assert notice.endswith("The Jobs page lists every file with why and what to do.")
    at.run()
    assert not at.warning  # told once
    again = upload(app, [("other.md", b"# Other\nText.\n"), ("x.exe", b"MZ")])
    run_ingest(app, again)
    at.run()
    assert next(w.value for w in at.warning).startswith(
        f"The last files added to 'docs' (job {again}) left 1 file out: x.exe")


def test_no_notice_when_the_last_ingest_read_everything(app, pages):
    run_ingest(app, upload(app, [("notes.md", b"# Notes\nOpen at nine.\n")]))
    at = page("search").run()
    assert not at.exception and not at.warning


def test_files_given_by_path_that_none_could_be_read_are_refused_before_a_job(app, tmp_path):
    """`searchapp ingest faq.xls` queued a job that then skipped the one file it had: a file
    named on its own that is no type we read is refused at once, saying what to do."""
    from searchapp.errors import IngestError

    (tmp_path / "faq.xls").write_bytes(b"\xd0\xcf\x11\xe0")
    (tmp_path / "setup.exe").write_bytes(b"MZ")
    for names in (["faq.xls"], ["faq.xls", "setup.exe"]):
        with pytest.raises(IngestError, match=r"^faq\.xls is an old-format Excel workbook.*"
                                              r"Save As.*nothing was queued\.$"):
            request_ingest(app, "docs", [tmp_path / n for n in names])
    assert queue.recent(app.db) == []
    (tmp_path / "notes.md").write_text("# Notes\n\nOpen at nine.")
    assert request_ingest(app, "docs", [tmp_path / "notes.md", tmp_path / "faq.xls"])
