"""One document by id from the CLI (``searchapp documents``) and the Documents page."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from searchapp.cli.main import main
from searchapp.corpora import documents as docs
from searchapp.corpora.service import create_corpus

PAGES = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages"


def test_the_cli_upserts_gets_and_deletes_one_document(app, capsys):
    create_corpus(app, "faq")
    assert main(["documents", "upsert", "--corpus", "faq", "--id", "q7", "--text",
                 "Where is my invoice?", "--meta", "product=billing"]) == 0
    assert capsys.readouterr().out.startswith("Corpus 'faq': 1 added (generation 1); embedding")
    assert main(["documents", "upsert", "--corpus", "faq", "--id", "q7", "--text",
                 "Where is my invoice?", "--meta", "product=accounts"]) == 0
    assert "1 metadata updated" in capsys.readouterr().out
    assert main(["documents", "get", "--corpus", "faq", "q7", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["documents"][0]["meta"] == {"product": "accounts", "lang": "en"}  # told
    assert got["missing"] == []
    assert main(["documents", "delete", "--corpus", "faq", "q7", "q8"]) == 0
    assert "Deleted 1 document from 'faq'" in capsys.readouterr().out
    assert main(["documents", "get", "--corpus", "faq", "q7"]) == 1
    assert capsys.readouterr().err == "error: Corpus 'faq' has no document with id 'q7'.\n"
    assert main(["documents", "upsert", "--corpus", "faq", "--id", "x", "--text", "y",
                 "--meta", "oops"]) == 1
    assert "KEY=VALUE" in capsys.readouterr().err


def test_the_documents_page_adds_changes_and_deletes_a_document(ui_resources):
    from searchapp.ui.resources import get_app

    app = get_app()
    create_corpus(app, "faq")
    at = AppTest.from_file(PAGES / "documents.py", default_timeout=60).run()
    at.text_input(key="documents.id").input("q1").run()
    assert "No document 'q1'" in at.info[0].value
    at.text_area[0].input("How do I reset my password?")
    at.text_area[1].input("lang=en")
    at.button[0].click().run()
    assert not at.exception and "1 added" in at.success[0].value
    assert docs.get(app, "faq", "q1").meta == {"lang": "en"}
    at.text_area[1].input("lang=de")
    at.button[0].click().run()
    assert "1 metadata updated" in at.success[0].value
    docs.upsert(app, "faq", [docs.Doc("q2", "Where is my invoice?", {"product": "billing"})])
    at.text_input(key="documents.id").input("q2").run()  # another document: the form follows
    assert (at.text_area[0].value, at.text_area[1].value) == ("Where is my invoice?",
                                                              "product=billing\nlang=en")
    at.text_input(key="documents.id").input("q1").run()
    assert at.text_area[1].value == "lang=de"
    delete = next(b for b in at.button if b.label == "Delete document")
    assert delete.disabled
    at.checkbox(key="documents.sure").check().run()
    next(b for b in at.button if b.label == "Delete document").click().run()
    assert "Deleted 'q1'" in at.success[0].value
    assert docs.get_many(app, "faq", ["q1"])[1] == ["q1"]
    # the page shows what is stored now: nothing of q1 to see, or to save back
    assert "Embedded." not in [c.value for c in at.caption]
    assert "No document 'q1'" in at.info[0].value and at.text_area[0].value == ""
    at.button[0].click().run()  # Save
    assert "Nothing was saved" in at.error[0].value
    assert docs.get_many(app, "faq", ["q1"])[1] == ["q1"]
