"""Files over the JSON API, through the real door: documents and an archive uploaded as
multipart, the ``ingest`` job run, the hits' ``source``, and each original answered with
the headers that keep it from running script in the app's origin."""

from __future__ import annotations

import io
import zipfile

from searchapp.jobs.worker import work
from tests.document_files import make_pdf
from tests.test_api import stack  # noqa: F401 - the fixture


def test_files_uploaded_over_the_api_are_searchable_with_their_source(stack, app, tmp_path):  # noqa: F811
    make, started = stack
    client, _ = make()
    make_pdf(tmp_path / "guide.pdf", ["Introduction to the tool.",
                                      "Requirements: a machine with two cores and 4 GB."])
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("site/index.html", "<html><head><title>Home</title></head><body><main>"
                   "<h1>Welcome</h1><p>Our shop sells bicycles and spare parts.</p>"
                   "<script>alert(1)</script></main></body></html>")
    files = [("files", ("guide.pdf", (tmp_path / "guide.pdf").read_bytes(), "application/pdf")),
             ("files", ("site.zip", archive.getvalue(), "application/zip"))]
    answer = client.post("/api/v1/corpora/manuals/files", files=files)
    assert answer.status_code == 202, answer.text
    job = answer.json()
    assert job["kind"] == "ingest" and started
    [staged] = (app.settings.work_dir / "uploads").iterdir()  # kept for the job
    assert sorted(p.name for p in staged.iterdir()) == ["000001.pdf", "000002.zip"]  # short
    work(app, stop_when_idle=True, poll_seconds=0.05)
    result = client.get(f"/api/v1/jobs/{job['id']}").json()["result"]
    assert (result["added"], result["failed"]) == (2, 0)
    assert not list((app.settings.work_dir / "uploads").iterdir())  # the staged files went
    hits = client.post("/api/v1/corpora/manuals/search",
                       json={"query": "how much memory does it need", "k": 1}).json()
    assert hits["results"][0]["source"] == {"path": "guide.pdf", "type": "pdf", "page": 2,
                                            "section": None}
    pdf = client.get("/api/v1/corpora/manuals/originals/guide.pdf")
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.content == (tmp_path / "guide.pdf").read_bytes()
    html = client.get("/api/v1/corpora/manuals/originals/site/index.html")
    assert html.headers["content-disposition"].startswith("attachment")
    assert html.headers["content-security-policy"].startswith("sandbox")
    assert html.headers["x-content-type-options"] == "nosniff"
    assert html.headers["content-type"] == "application/octet-stream"


def test_a_document_from_a_table_has_no_original(stack, app):  # noqa: F811
    make, _ = stack
    client, _ = make()
    assert client.post("/api/v1/corpora", json={"name": "faq"}).status_code == 201
    client.put("/api/v1/corpora/faq/documents",
               json={"documents": [{"id": "q1", "text": "How do I log in?"}]})
    answer = client.get("/api/v1/corpora/faq/originals/q1")
    assert answer.status_code == 404 and "not read from a file" in answer.json()["detail"]
