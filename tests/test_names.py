"""Names from inside files become ids by one rule that every front end names again: e-mail
attachments (RFC 2231 newlines, bidi overrides, twins), archive members that collide with
attachments, uploads with a 300-byte name and NFC/NFD twins; each id fetched and deleted
through the CLI and the API; the rule itself by hypothesis."""

from __future__ import annotations

import io
import json
import tarfile
import time
import unicodedata
import zipfile
from email.message import EmailMessage
from urllib.parse import quote

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from searchapp.cli.main import main
from searchapp.corpora import documents as docs
from searchapp.corpora.names import MAX_ID_CHARS, MAX_SEGMENT_BYTES, fit_id, path_id, segment
from searchapp.jobs.worker import work
from tests.test_api import stack  # noqa: F401 - the fixture

ANY_NAME = st.text(st.characters(), max_size=400)  # controls, bidi, surrogates, any plane


@hsettings(max_examples=400, deadline=None)
@given(name=ANY_NAME)
def test_any_name_becomes_a_stable_id_the_front_ends_accept(name):
    one = segment(name)
    assert docs.check_id(one) == one, "accepted as it is, spaces and all"
    assert segment(one) == one and "/" not in one and len(one.encode()) <= MAX_SEGMENT_BYTES
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in one)


@hsettings(max_examples=200, deadline=None)
@given(name=st.lists(st.one_of(ANY_NAME, st.text(st.characters(), min_size=100, max_size=300)),
                    max_size=8).map("/".join))
def test_any_path_becomes_a_stable_id_within_the_column(name):
    path = path_id(name)
    assert docs.check_id(path) == path and path_id(path) == path and fit_id(path) == path
    assert len(path) <= MAX_ID_CHARS and "" not in path.split("/")
    assert not {".", ".."} & set(path.split("/")), "no URL path can name a dot segment"


@hsettings(max_examples=100, deadline=None)
@given(stem=st.text(st.characters(codec="utf-8"), min_size=1, max_size=40),
       tails=st.lists(st.text("abc", min_size=1, max_size=3), min_size=2, max_size=2,
                      unique=True))
def test_long_names_differing_in_their_tail_stay_two(stem, tails):
    a, b = (segment(stem * 60 + t + ".md") for t in tails)
    assert a != b and a.endswith(".md") and b.endswith(".md")
    assert len(a.encode()) <= MAX_SEGMENT_BYTES >= len(b.encode())


def eml(*attachments: tuple[str, bytes], rfc2231: str | None = None) -> bytes:
    """A message with a body and ``attachments``; ``rfc2231``: one more attachment whose
    file name is given as ``filename*=utf-8''...`` (percent-encoded, as mail clients do)."""
    msg = EmailMessage()
    msg["Subject"], msg["From"], msg["To"] = "Quarterly notes", "a@example.org", "b@example.org"
    msg.set_content("The body of the message.")
    for name, data in attachments:
        msg.add_attachment(data, maintype="text", subtype="markdown", filename=name)
    raw = msg.as_bytes()
    if rfc2231:
        msg.add_attachment(b"# Newline\nThe RFC 2231 attachment.\n", maintype="text",
                           subtype="markdown", filename="placeholder.md")
        raw = msg.as_bytes().replace(b'filename="placeholder.md"',
                                     f"filename*=utf-8''{rfc2231}".encode())
    return raw


def ingest(path, corpus: str, capsys) -> dict:
    capsys.readouterr()
    assert main(["ingest", str(path), "--corpus", corpus, "--wait", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def ids(app, corpus: str) -> set[str]:
    from searchapp.store import repo

    with app.db.session() as s:
        return set(repo.stored_files(s, repo.corpus_state(s, corpus).id))


def cli_round_trip(corpus: str, doc_id: str, capsys) -> None:
    """``documents get`` shows the id; ``documents delete`` deletes it (``--`` before ids,
    which may start with '-')."""
    capsys.readouterr()
    assert main(["documents", "get", "--corpus", corpus, "--json", "--", doc_id]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in shown["documents"]] == [doc_id] and shown["missing"] == []
    assert main(["documents", "delete", "--corpus", corpus, "--json", "--", doc_id]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == 1


def test_hostile_attachment_names_come_back_through_the_cli(app, tmp_path, capsys):
    mail = tmp_path / "mail.eml"
    mail.write_bytes(eml(("a.md", b"# One\nThe first a.md.\n"),
                         ("a.md", b"# Two\nThe second a.md.\n"),
                         ("rev\u202egnp.md", b"# Bidi\nA name with an override.\n"),
                         ("../../up.md", b"# Up\nA name with a path.\n"),
                         ("..", b"# Dots\nNamed dot dot.\n"),
                         rfc2231="new%0Aline.md"))
    report = ingest(mail, "mail", capsys)
    assert report["failed"] == 0
    got = ids(app, "mail")
    assert got == {"mail.eml", "mail.eml/a.md", "mail.eml/a (2).md",
                   "mail.eml/rev%E2%80%AEgnp.md", "mail.eml/up.md", "mail.eml/new%0Aline.md"}
    assert any("'mail.eml/a.md'" in n and "'mail.eml/a (2).md'" in n for n in report["notes"])
    assert "The second a.md" in docs.get(app, "mail", "mail.eml/a (2).md").text
    for doc_id in sorted(got):
        cli_round_trip("mail", doc_id, capsys)
    assert ids(app, "mail") == set()


def test_an_attachment_and_an_archive_member_with_one_path_are_both_kept(app, tmp_path,
                                                                          capsys):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("mail.eml", eml(("report.md", b"# Attached\nThe attached report.\n")))
        z.writestr("mail.eml/report.md", "# Member\nThe archive's own report.\n")
    report = ingest(archive, "bundle", capsys)
    texts = {i: docs.get(app, "bundle", i).text for i in ids(app, "bundle")}
    assert len(texts) == 3, texts
    assert {t.split("\n")[-1] for t in texts.values()} >= {"The attached report.",
                                                           "The archive's own report."}
    [note] = [n for n in report["notes"] if "mail.eml/report (2).md" in n]
    assert "'mail.eml/report.md'" in note and " mail.eml" in note, "both are named"
    assert ingest(archive, "bundle", capsys)["unchanged"] == 2, "stable: nothing read again"
    assert len(ids(app, "bundle")) == 3


def test_nfc_and_nfd_twins_in_a_tar_are_both_kept(app, tmp_path, capsys):
    archive = tmp_path / "twins.tar"
    with tarfile.open(archive, "w") as tar:
        for name, text in (("caf\u00e9.md", b"# NFC\nComposed."),
                           ("cafe\u0301.md", b"# NFD\nDecomposed."),
                           ("tab\there.md", b"# Tab\nNot a twin: refused.")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    report = ingest(archive, "twins", capsys)
    assert ids(app, "twins") == {"caf\u00e9.md", "caf\u00e9 (2).md"}
    assert any("'caf\u00e9 (2).md'" in n for n in report["notes"])
    assert {docs.get(app, "twins", i).text.split("\n")[-1] for i in ids(app, "twins")} == {
        "Composed.", "Decomposed."}


def test_uploads_with_a_long_name_and_nfc_nfd_twins_come_back_through_the_api(
        stack, app, capsys):  # noqa: F811
    make, _ = stack
    client, _ = make()
    long = "\u00e9" * 145 + ".md"  # 294 bytes: more than a file name may have on disk
    files = [("files", (long, b"# Long\nA very long name.\n", "text/markdown")),
             ("files", ("caf\u00e9.md", b"# NFC\nComposed.\n", "text/markdown")),
             ("files", ("cafe\u0301.md", b"# NFD\nDecomposed.\n", "text/markdown")),
             ("files", ("-dash\r\n.md", b"# Dash\nStarts with a dash.\n", "text/markdown"))]
    answer = client.post("/api/v1/corpora/up/files", files=files)
    assert answer.status_code == 202, answer.text
    [staged] = (app.settings.work_dir / "uploads").iterdir()
    assert sorted(p.name for p in staged.iterdir()) == [f"00000{i}.md" for i in (1, 2, 3, 4)]
    work(app, stop_when_idle=True, poll_seconds=0.05)
    job = client.get(f"/api/v1/jobs/{answer.json()['id']}").json()
    assert job["status"] == "succeeded", job
    result = job["result"]
    assert (result["added"], result["failed"], result["skipped"]) == (4, 0, 0), result
    got = ids(app, "up")
    [shortened] = [i for i in got if i.startswith("\u00e9")]
    assert len(shortened.encode()) == MAX_SEGMENT_BYTES and shortened == segment(long)
    assert got == {shortened, "caf\u00e9.md", "caf\u00e9 (2).md", "-dash%0D%0A.md"}
    assert any("'caf\u00e9 (2).md'" in n and "'caf\u00e9.md'" in n for n in result["notes"])
    assert any(shortened in n and "longer than" in n for n in result["notes"])
    # (Starlette's TestClient decodes a URL's path twice, so ids holding "%" are sent in
    # bodies here; the real server's routes by path are the next test's)
    fetched = client.post("/api/v1/corpora/up/documents/get", json={"ids": sorted(got)})
    assert [d["id"] for d in fetched.json()["documents"]] == sorted(got), fetched.text
    cli_round_trip("up", "-dash%0D%0A.md", capsys)
    deleted = client.post("/api/v1/corpora/up/documents/delete",
                          json={"ids": sorted(got - {"-dash%0D%0A.md"})})
    assert deleted.json()["deleted"] == 3, deleted.text
    assert ids(app, "up") == set()


def test_the_real_server_serves_and_deletes_every_id_by_its_url(tmp_path):
    import httpx

    from tests.browser import served_app

    names = ["\u00e9" * 145 + ".md", "caf\u00e9.md", "cafe\u0301.md", "-dash\r\n.md",
             "50%.md", "q?#.md", "..x.md"]
    with served_app(tmp_path / "data", tmp_path / "server.log") as (_p, url), \
            httpx.Client(base_url=url, timeout=60) as client:
        files = [("files", (n, f"# {i}\nDocument {i}.\n".encode(), "text/markdown"))
                 for i, n in enumerate(names)]
        job = client.post("/api/v1/corpora/up/files", files=files).json()
        for _ in range(600):  # the server's worker runs the job; its state is polled
            job = client.get(f"/api/v1/jobs/{job['id']}").json()
            if job["status"] in ("succeeded", "failed"):
                break
            time.sleep(0.2)
        assert job["status"] == "succeeded" and job["result"]["added"] == len(names), job["result"]
        want = {segment(names[0]), "caf\u00e9.md", "caf\u00e9 (2).md", "-dash%0D%0A.md",
                "50%.md", "q?#.md", "x.md"}
        got = set()
        for doc_id in sorted(want):
            path = quote(doc_id, safe="")
            answer = client.get(f"/api/v1/corpora/up/documents/{path}")
            assert answer.status_code == 200, (doc_id, answer.text)
            got.add(answer.json()["id"])
            assert client.get(f"/api/v1/corpora/up/originals/{path}").status_code == 200
            assert client.delete(f"/api/v1/corpora/up/documents/{path}").json()["deleted"] == 1
        assert got == want
