"""Answers: the sentences of the corpus' own documents that answer a question, above the hits.

Real files ingested through the CLI into a real SQLite database and hnswlib index with the
bundled encoder; the sentences are cut and encoded at embed time and only read at query time.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from searchapp.answers import service, threshold
from searchapp.cli.main import main
from searchapp.judgements import service as judgements
from searchapp.store import repo
from tests.helpers import ingest_files
from tests.test_api import stack as api_stack  # the API in-process, through its door

ROUTER = ("The router sits in the hall cupboard. To reset the router, hold the reset button for "
          "ten seconds until the lights blink. After a reset the default password is printed "
          "on the label under the router.")
FILES = {
    "router.md": "# Router\n\n" + ROUTER + "\n",
    "billing.md": "# Billing\n\nInvoices are sent on the first day of each month. You can "
                  "download past invoices from the account page. Payments by card are charged "
                  "on the fifth day of the month.\n",
    "garden.md": "# Garden\n\nTomatoes need full sun and regular watering. Prune the side shoots "
                 "every week. Harvest the fruit when it is deep red.\n",
    # the answer's sentence again, in other words that mean the same: shown once
    "router-notes.md": "# Notes\n\nThe cupboard also holds the spare cables. To reset the "
                       "router, hold its reset button for 10 seconds until the lights blink. "
                       "Call the helpdesk if it does not come back.\n",
}


@pytest.fixture
def corpus(tmp_path, capsys):
    ingest_files(tmp_path / "docs", FILES, "home")
    capsys.readouterr()
    return "home"


def search_json(capsys, *args: str) -> dict:
    assert main(["search", "--corpus", "home", "--here", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_question_gets_the_sentence_that_answers_it_in_its_context(corpus, capsys):
    out = search_json(capsys, "how do I reset my router?")
    assert out["answer"]["asked"] and not out["answer"]["silent"]
    first = out["answers"][0]
    assert first["text"].startswith("To reset the router, hold")
    assert first["doc_id"] in ("router.md", "router-notes.md")
    if first["doc_id"] == "router.md":
        assert first["context"] == ["The router sits in the hall cupboard.",
                                    "After a reset the default password is printed on the "
                                    "label under the router."]
    assert first["source"]["path"].endswith(first["doc_id"])
    assert first["score"] >= out["answer"]["threshold"]
    # the same instruction in two documents (other words, same meaning) is shown once
    assert sum(a["text"].startswith("To reset the router") for a in out["answers"]) == 1


def test_the_cli_prints_the_answer_before_the_hits(corpus, capsys):
    assert main(["search", "--corpus", "home", "--here", "When are invoices sent?"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Answer 1 (") and "Invoices are sent on the first day" in lines[0]
    assert "billing.md" in lines[1]
    assert lines.index("") < next(i for i, line in enumerate(lines) if line.startswith("  1."))


def test_a_question_the_documents_do_not_answer_gets_silence(corpus, capsys):
    out = search_json(capsys, "What is the capital city of Peru?")
    assert out["answer"]["asked"] and out["answer"]["silent"] and out["answers"] == []
    assert out["results"]  # the hits are still there
    assert main(["search", "--corpus", "home", "--here", "What is the capital city of Peru?"]) == 0
    assert capsys.readouterr().out.startswith("Answer: no clear answer in these documents.")


def test_keywords_get_hits_only_unless_an_answer_is_asked_for(corpus, capsys):
    plain = search_json(capsys, "router reset button")
    assert not plain["answer"]["asked"] and plain["answers"] == []
    asked = search_json(capsys, "router reset button", "--answer")
    assert asked["answers"][0]["text"].startswith("To reset the router")
    never = search_json(capsys, "how do I reset my router?", "--no-answer")
    assert not never["answer"]["asked"]


def test_answers_read_stored_sentences_and_never_split_at_query_time(corpus, app, monkeypatch,
                                                                     capsys):
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        model = repo.find_model(s, state.model_name)
        doc = repo.document_by_external_id(s, state.id, "router.md")
        rows = repo.read_sentences(s, model.id, [(doc.id, 0)])
    spans, vectors = rows[(doc.id, 0)]
    assert [doc.text[a:b] for a, b in spans.tolist()][-3:] == [
        "The router sits in the hall cupboard.",
        "To reset the router, hold the reset button for ten seconds until the lights blink.",
        "After a reset the default password is printed on the label under the router."]
    assert vectors.shape == (len(spans), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-2)

    def no_splitting(text):
        raise AssertionError("a sentence was cut at query time")

    monkeypatch.setattr("searchapp.embedding.sentences.sentence_spans", no_splitting)
    monkeypatch.setattr("searchapp.embedding.passages.sentence_spans", no_splitting)
    out = search_json(capsys, "how do I reset my router?")
    assert out["answers"][0]["text"].startswith("To reset the router")


def test_answer_marks_calibrate_the_threshold_and_travel_with_the_judgements(corpus, app,
                                                                             tmp_path):
    question = "how do I reset my router?"
    _, first = service.search_with_answers(app, corpus, question)
    assert first.threshold_source == "default" and first.threshold == threshold.DEFAULT
    right, wrong = first.candidates[:3], first.candidates[-3:]
    for answers, label in ((right, 1), (wrong, 0)):
        for a in answers:
            judgements.add(app, corpus, query=question, doc=a.doc_id, answer=a.text,
                           label=label, source="search")
    _, again = service.search_with_answers(app, corpus, question)
    assert again.threshold_source == "calibrated on 6 judged answers"
    assert min(a.score for a in wrong) < again.threshold <= min(a.score for a in right)
    exported = tmp_path / "judged.csv"
    judgements.export_csv(app, corpus, exported)
    text = exported.read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("kind,query,doc_id,a_id,b_id,answer,label")
    assert f"answer,{question}," in text
    for j in judgements.list_judgements(app, corpus, kind="answer"):
        judgements.remove(app, corpus, j.id)
    summary = judgements.import_csv(app, corpus, exported)
    assert (summary.added, summary.answer) == (6, 6)
    assert judgements.counts(app, corpus)["right_answer"] == 3


stack = api_stack


def test_the_api_returns_the_answers_with_the_hits(corpus, stack):
    make, _ = stack
    client, _door = make()
    asked = client.post("/api/v1/corpora/home/search", json={"query": "When are invoices sent?"})
    assert asked.status_code == 200, asked.text
    body = asked.json()
    assert body["answer"] == {"asked": True, "silent": False, "threshold": threshold.DEFAULT,
                              "threshold_source": "default"}
    first = body["answers"][0]
    assert first["text"] == "Invoices are sent on the first day of each month."
    assert first["doc_id"] == "billing.md" and first["source"]["path"].endswith("billing.md")
    assert set(first) == {"text", "doc_id", "source", "score", "context", "start", "end", "view"}
    words = client.post("/api/v1/corpora/home/search", json={"query": "invoices month"}).json()
    assert words["answers"] == [] and not words["answer"]["asked"] and words["results"]
    forced = client.post("/api/v1/corpora/home/search",
                         json={"query": "invoices month", "answer": True}).json()
    assert forced["answers"][0]["doc_id"] == "billing.md"


def test_a_question_in_the_documents_is_never_shown_as_its_answer(tmp_path, capsys):
    folder = tmp_path / "faq"
    folder.mkdir()
    (folder / "faq.md").write_text(
        "# Questions\n\nHow do I undo a pushed commit? The usual way is git revert, which "
        "adds a new commit that undoes the old one.\n\nWhere do tickets go? Tickets go to "
        "the support queue and are answered within a day.\n", encoding="utf-8")
    assert main(["ingest", str(folder), "--corpus", "faq", "--wait"]) == 0
    capsys.readouterr()
    assert main(["search", "--corpus", "faq", "--here", "--json",
                 "How do I undo a pushed commit?"]) == 0
    answers = json.loads(capsys.readouterr().out)["answers"]
    assert answers and not any(a["text"].endswith("?") for a in answers)
    assert answers[0]["text"].startswith("The usual way is git revert")
