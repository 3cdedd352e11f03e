"""Every original is the bytes its hash names, and only the app's record leads to one.

- A file replaced while it is read never leaves an original holding other bytes than its
  name says, and the text stored comes from the same bytes as the original (the file is
  copied and verified against its hash first, and read from that copy).
- A planted original heals the next time the genuine file is read.
- Which original belongs to a document is the app's record per corpus: no metadata value
  (``sha256``, ``type``, ``path``; from the API, a table or a file's own front matter)
  chooses a file or its type, and every original is served in the sandbox.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import zipfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.cli.main import main
from searchapp.corpora.originals import OriginalChangedError, keep
from searchapp.intake import files_job
from searchapp.jobs.worker import work
from searchapp.store import repo
from tests.document_files import make_pdf
from tests.test_api import stack  # noqa: F401 - the fixture

ALPHA = b"# Report\nThe alpha version of the quarterly report.\n"
BETA = b"# Report\nThe beta version, rewritten by someone else entirely.\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ingest(path: Path, capsys, *flags: str, corpus: str = "docs") -> dict:
    capsys.readouterr()
    assert main(["ingest", str(path), "--corpus", corpus, "--wait", "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def originals_are_honest(app) -> int:
    """Assert every stored original holds the bytes its name says; how many there are."""
    files = [f for f in app.settings.originals_dir.rglob("*") if f.is_file()]
    for f in files:
        assert sha(f.read_bytes()) == f.name, f"{f.name} holds other bytes"
    return len(files)


def stored(app, corpus: str = "docs") -> dict[str, tuple[str, str | None]]:
    """external id → (text, original) of the corpus' documents."""
    with app.db.session() as s:
        c = repo.find_corpus(s, corpus)
        texts = repo.document_texts(s, c.id)
        files = repo.stored_files(s, c.id)
        return {e: (t, files[e].original if e in files else None) for e, t in texts.values()}


def test_keep_stores_nothing_when_the_bytes_are_not_those_hashed(tmp_path):
    (tmp_path / "a.md").write_bytes(BETA)
    try:
        keep(tmp_path / "originals", tmp_path / "a.md", sha(ALPHA))
        raise AssertionError("kept bytes that are not the ones hashed")
    except OriginalChangedError as exc:
        assert "changed while it was read" in str(exc)
    assert not [f for f in (tmp_path / "originals").rglob("*") if f.is_file()]


def test_a_file_replaced_after_its_hash_is_read_from_the_bytes_hashed(app, tmp_path, capsys,
                                                                     monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.md").write_bytes(ALPHA)
    real = files_job.iter_rooted
    change = {"how": "rename"}

    def changed_after_hashing(*args, **kwargs):  # another program changes the file just then
        for number, item in real(*args, **kwargs):
            if getattr(item, "path", None) == "report.md" and change["how"] == "rename":
                (folder / "new.tmp").write_bytes(BETA)
                os.replace(folder / "new.tmp", folder / "report.md")
            elif getattr(item, "path", None) == "report.md":  # rewritten in place
                with open(folder / "report.md", "r+b") as f:
                    f.write(ALPHA.upper())
                    f.truncate()
            yield number, item

    monkeypatch.setattr(files_job, "iter_rooted", changed_after_hashing)
    report = ingest(folder, capsys, "--sync")  # renamed over: the bytes hashed are read
    assert (report["added"], report["waiting"]) == (1, 0)
    assert originals_are_honest(app) == 1
    assert stored(app)["report.md"][1] == sha(ALPHA) and "alpha" in stored(app)["report.md"][0]
    change["how"] = "in place"
    report = ingest(folder, capsys, "--sync")  # B, hashed, then rewritten: left for later
    assert (report["changed"], report["waiting"]) == (0, 1)
    assert "changed while it was read" in report["problems"][0]["reason"]
    assert originals_are_honest(app) == 1 and stored(app)["report.md"][1] == sha(ALPHA)
    monkeypatch.setattr(files_job, "iter_rooted", real)
    assert ingest(folder, capsys, "--sync")["changed"] == 1
    assert originals_are_honest(app) == 2
    text, original = stored(app)["report.md"]
    assert original == sha(ALPHA.upper()) and "ALPHA" in text


def test_originals_and_texts_agree_while_a_file_is_swapped_by_rename(app, tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "other.md").write_text("# Other\nA file nobody touches.\n", encoding="utf-8")
    target, stop = folder / "report.md", threading.Event()
    target.write_bytes(ALPHA)

    def swap() -> None:
        turn = 0
        while not stop.is_set():
            (folder / f".swap{turn % 2}").write_bytes(BETA if turn % 2 else ALPHA)
            os.replace(folder / f".swap{turn % 2}", target)
            turn += 1
            stop.wait(0.002)

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        for _ in range(8):
            ingest(folder, capsys, "--sync")
            originals_are_honest(app)
            for text, original in stored(app).values():  # the text is of the kept bytes
                kept = app.settings.originals_dir / original[:2] / original
                assert text.split()[-1] in kept.read_text(encoding="utf-8")
    finally:
        stop.set()
        swapper.join()


def test_a_planted_original_heals_when_the_genuine_file_is_read(app, tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.md").write_bytes(ALPHA)
    planted = app.settings.originals_dir / sha(ALPHA)[:2] / sha(ALPHA)
    planted.parent.mkdir(parents=True)
    planted.write_bytes(b"<script>planted</script>")
    assert ingest(folder, capsys)["added"] == 1
    assert planted.read_bytes() == ALPHA and originals_are_honest(app) == 1


def _upload(client, corpus: str, tmp_path: Path) -> None:
    make_pdf(tmp_path / "guide.pdf", ["The guide's first page.", "Its second page."])
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("page.html", "<html><body><h1>Shop</h1><p>Bicycles and parts."
                   "</p><script>alert(1)</script></body></html>")
        z.writestr("notes.md", "---\ntitle: Notes\ntype: pdf\npath: elsewhere.md\n"
                   f"sha256: {'0' * 64}\n---\n# Notes\nThe front matter lies.\n")
    files = [("files", ("guide.pdf", (tmp_path / "guide.pdf").read_bytes(), "application/pdf")),
             ("files", ("site.zip", archive.getvalue(), "application/zip"))]
    assert client.post(f"/api/v1/corpora/{corpus}/files", files=files).status_code == 202


def test_no_metadata_value_chooses_an_original_or_its_type(stack, app, tmp_path):  # noqa: F811
    make, _ = stack
    client, _ = make()
    _upload(client, "manuals", tmp_path)
    work(app, stop_when_idle=True, poll_seconds=0.05)
    pdf = client.get("/api/v1/corpora/manuals/originals/guide.pdf")
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.headers["content-security-policy"].startswith("sandbox")  # the PDF's too
    digest = sha(pdf.content)
    notes = client.post("/api/v1/corpora/manuals/documents/get",
                        json={"ids": ["notes.md"]}).json()["documents"][0]
    assert (notes["meta"]["type"], notes["meta"]["path"]) == ("md", "notes.md")
    assert notes["meta"]["sha256"] != "0" * 64
    # a row of another corpus naming the PDF's hash is served nothing
    assert client.post("/api/v1/corpora", json={"name": "other"}).status_code == 201
    client.put("/api/v1/corpora/other/documents", json={"documents": [
        {"id": "guide.pdf", "text": "a row", "meta": {"sha256": digest, "type": "pdf",
                                                      "path": "guide.pdf"}}]})
    assert client.get("/api/v1/corpora/other/originals/guide.pdf").status_code == 404


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(meta=st.dictionaries(st.sampled_from(["sha256", "type", "path", "file", "original",
                                             "source", "title"]),
                            st.sampled_from(["pdf", "md", "txt", "html", "0" * 64,
                                             "../../etc/passwd", "guide.pdf"]), max_size=5))
def test_metadata_sent_for_a_file_document_never_changes_what_is_served(
        stack, app, tmp_path_factory, meta):  # noqa: F811
    make, _ = stack
    client, _ = make()
    if client.get("/api/v1/corpora/manuals").status_code != 200:
        _upload(client, "manuals", tmp_path_factory.mktemp("files"))
        work(app, stop_when_idle=True, poll_seconds=0.05)
    before = client.get("/api/v1/corpora/manuals/originals/page.html")
    [doc] = client.post("/api/v1/corpora/manuals/documents/get",
                        json={"ids": ["page.html"]}).json()["documents"]
    client.put("/api/v1/corpora/manuals/documents",  # the same text: metadata only
               json={"documents": [{"id": "page.html", "text": doc["text"], "meta": meta}]})
    after = client.get("/api/v1/corpora/manuals/originals/page.html")
    assert after.status_code == 200 and after.content == before.content
    assert after.headers["content-type"] == "application/octet-stream"
    assert after.headers["content-disposition"].startswith("attachment")
    assert after.headers["content-security-policy"].startswith("sandbox")
