"""Issue 48: the language of documents upserted by id, the model chosen for a new corpus
(the Upload page, ``ingest --model``, the API's ``POST /corpora``: one service call), and
the multilingual model proposed when a corpus is mostly not in a language its model reads.

Real components: a SQLite App, the API through the door, the Upload and Search pages through
``AppTest``, the ``ingest`` job run inline; the multilingual model is only named here (its
encoder is not loaded: nothing is embedded).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient
from streamlit.testing.v1 import AppTest

from searchapp.api.app import ApiDispatch, build_api
from searchapp.cli.main import main
from searchapp.config import Settings
from searchapp.corpora import documents as docs
from searchapp.corpora.language_advice import advice, switch_command
from searchapp.corpora.service import corpus_status, create_corpus
from searchapp.errors import ModelError
from searchapp.intake.ingest import read_table
from searchapp.intake.report import IngestReport
from searchapp.intake.table_upload import upload
from searchapp.store import repo
from searchapp.web.door import Door
from searchapp.web.middleware import DoorMiddleware
from tests.conftest import REPO

MULTI = "use-multilingual-v3"
GERMAN = ["Die Datei wird gelesen, bevor der Index neu erstellt wird.",
          "Der Server startet neu, wenn die Einstellungen gespeichert werden.",
          "Alle Dokumente eines Ordners werden jede Nacht neu eingelesen."]
ENGLISH = ["The file is read before the index is rebuilt from scratch.",
           "The server restarts when the settings are saved to disk."]
PAGES = REPO / "searchapp" / "ui" / "pages"


@pytest.fixture
def client(app):
    """The API as ``serve.py`` stacks it (the door in front), on the test's App."""
    door = Door(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir)}))
    door.db = app.db
    api = build_api(app=lambda: app, start_worker=lambda _app: None)
    web = Starlette(middleware=[Middleware(DoorMiddleware, door=door),
                                Middleware(ApiDispatch, api=api)])
    return TestClient(web, base_url="http://127.0.0.1")


# ---- 1. lang for documents upserted by id ------------------------------------------------
def test_documents_upserted_through_the_api_get_their_language_unless_they_name_one(client):
    client.post("/api/v1/corpora", json={"name": "faq"})
    sent = [{"id": "de", "text": GERMAN[0]}, {"id": "en", "text": ENGLISH[0]},
            {"id": "own", "text": GERMAN[1], "meta": {"lang": "de-CH"}},
            {"id": "named", "text": GERMAN[2], "meta": {"Language": "Deutsch"}},
            {"id": "short", "text": "git commit -m"}]
    assert client.put("/api/v1/corpora/faq/documents", json={"documents": sent}).json()[
        "added"] == 5
    got = client.post("/api/v1/corpora/faq/documents/get",
                      json={"ids": [d["id"] for d in sent]}).json()["documents"]
    assert {d["id"]: d["meta"] for d in got} == {
        "de": {"lang": "de"}, "en": {"lang": "en"}, "own": {"lang": "de-CH"},
        "named": {"Language": "Deutsch"}, "short": {"lang": "und"}}
    again = client.put("/api/v1/corpora/faq/documents", json={"documents": sent}).json()
    assert again["unchanged"] == 5  # the same documents again change nothing


def test_an_upserted_document_in_two_languages_lists_both(app):
    create_corpus(app, "faq")
    text = " ".join(GERMAN) + "\n\n" + " ".join(ENGLISH) + "\n\n" + " ".join(GERMAN[:2])
    docs.upsert(app, "faq", [docs.Doc("mixed", text)])
    assert docs.get(app, "faq", "mixed").meta == {"lang": "de", "langs": "de,en"}


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=300).filter(str.strip),
       own=st.sampled_from([None, "lang", "LANG", "language"]))
def test_any_text_is_stored_with_a_language_code_or_its_own(text, own):
    meta = {own: "xx"} if own else {}
    try:
        stored = docs.with_language(docs.check_document(docs.Doc("d", text, meta))).meta
    except Exception as exc:  # a text the checks refuse (control characters) is refused
        assert type(exc).__name__ == "InvalidParameterError"
        return
    assert stored == meta if own else set(stored) <= {"lang", "langs"} and stored["lang"]


# ---- 2. the model of a new corpus --------------------------------------------------------
def test_the_api_creates_a_corpus_with_the_model_asked_and_names_the_models_otherwise(client):
    made = client.post("/api/v1/corpora", json={"name": "handbuch", "model": MULTI})
    assert made.status_code == 201 and made.json()["model"] == MULTI
    assert client.post("/api/v1/corpora", json={"name": "faq"}).json()["model"] == \
        "all-MiniLM-L6-v2"
    bad = client.post("/api/v1/corpora", json={"name": "x", "model": "labse"})
    assert bad.status_code == 422
    assert "Known models: all-MiniLM-L6-v2, use-multilingual-v3" in bad.json()["detail"]
    assert client.get("/api/v1/corpora/x").status_code == 404  # nothing was made


def test_ingest_model_and_uploads_share_the_choice(app, tmp_path, capsys):
    page = tmp_path / "seite.md"
    page.write_text("# Seite\n\n" + " ".join(GERMAN) + "\n", encoding="utf-8")
    assert main(["ingest", str(page), "--corpus", "handbuch", "--model", MULTI]) == 0
    assert corpus_status(app, "handbuch").model == MULTI
    assert main(["ingest", str(page), "--corpus", "handbuch", "--model",
                 "all-MiniLM-L6-v2"]) == 1
    assert "searchapp models use --corpus handbuch --model all-MiniLM-L6-v2" in \
        capsys.readouterr().err
    with pytest.raises(ModelError, match="Known models"):
        upload(app, read_table(b"text\nhallo welt\n", "a.csv"), "neu", model="nope")
    with app.db.session() as s:
        assert "neu" not in repo.corpus_names(s)  # nothing was stored


def test_the_upload_page_offers_the_model_of_a_new_corpus(ui_resources):
    from searchapp.ui.resources import get_app

    at = AppTest.from_file(PAGES / "upload.py", default_timeout=60).run()
    rows = "text\n" + "".join(f'"{t}"\n' for t in GERMAN)
    at.file_uploader[0].upload("handbuch.csv", rows.encode(), "text/csv").run()
    model = next(s for s in at.selectbox if s.label == "Model of the new corpus")
    assert model.value == "all-MiniLM-L6-v2"  # the default stays the English model
    assert MULTI in model.options[1] and "16 languages" in model.options[1]
    model.set_value(MULTI).run()
    next(b for b in at.button if b.label == "Upload and embed").click().run()
    assert not at.exception and not at.error
    assert corpus_status(get_app(), "handbuch").model == MULTI
    at.file_uploader[0].upload("mehr.csv", rows.encode(), "text/csv").run()
    assert not [s for s in at.selectbox if s.label == "Model of the new corpus"]  # existing


# ---- 3. the multilingual model proposed ------------------------------------------------------
def test_a_mostly_german_corpus_on_the_english_model_is_told_how_to_switch(app):
    upload(app, read_table(("text\n" + "".join(f'"{t}"\n' for t in ENGLISH)).encode(),
                           "en.csv"), "docs")
    assert advice(app, "docs") is None  # English: nothing to say
    done = upload(app, read_table(("text\n" + "".join(f'"{t}"\n' for t in GERMAN)).encode(),
                                  "de.csv"), "docs")
    note = done.notes[-1]
    assert note.startswith("Most of these documents are in German (3 of 5); the multilingual "
                           "model (use-multilingual-v3) finds them across languages.")
    assert switch_command("docs") in note and switch_command("docs") in done.describe()
    create_corpus(app, "schon", model=MULTI)
    docs.upsert(app, "schon", [docs.Doc(str(i), t) for i, t in enumerate(GERMAN)])
    assert advice(app, "schon") is None  # the multilingual model reads German already


def test_several_languages_together_are_mostly_not_english(app):
    create_corpus(app, "mix")
    docs.upsert(app, "mix", [docs.Doc("de", GERMAN[0]), docs.Doc("en", ENGLISH[0]),
                             docs.Doc("fr", "Le fichier est lu avant que l'index ne soit "
                                      "reconstruit entièrement.")])
    assert advice(app, "mix").startswith("Most of these documents are in other languages than "
                                         "English (German 1, French 1 of 3)")


def test_the_ingest_jobs_report_proposes_the_multilingual_model(app, tmp_path):
    from searchapp.intake.files_job import request_ingest
    from searchapp.jobs.worker import run_until_done

    for i, text in enumerate(GERMAN):
        (tmp_path / f"{i}.txt").write_text(text + " " + text, encoding="utf-8")
    job_id = request_ingest(app, "ordner", [tmp_path], overlap=False)
    report = IngestReport.from_result(run_until_done(app, job_id).result)
    assert any(switch_command("ordner") in n for n in report.notes), report.notes


def test_the_search_page_says_it_under_the_corpus(ui_resources):
    from searchapp.ui.resources import get_app

    app = get_app()
    create_corpus(app, "handbuch")
    docs.upsert(app, "handbuch", [docs.Doc(str(i), t) for i, t in enumerate(GERMAN)])
    at = AppTest.from_file(PAGES / "search.py", default_timeout=60).run()
    captions = " ".join(c.value for c in at.caption)
    assert "Most of these documents are in German" in captions, captions
    assert switch_command("handbuch") in captions.replace("\\", "")
