"""A long-lived App never serves what the database no longer holds.

The app process keeps indexes, handles and stored analyses in memory; the
changes come from another App on the same data folder (a CLI command, the
worker). Real encoder, real SQLite, real index.
"""

from __future__ import annotations

import pytest

from searchapp import duplicates as dup
from searchapp.context import App
from searchapp.corpora import service as corpora
from searchapp.intake import table_upload
from searchapp.intake.ingest import read_table
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search

MODEL = "all-MiniLM-L6-v2"
FAQ = "id,text\na,How do I reset my password?\nb,Where is my invoice?\nc,The printer jams.\n"


@pytest.fixture
def apps(app, bundled_encoder):
    """(the long-lived app, another process's App), sharing the bundled encoder."""
    other = App()
    for a in (app, other):
        a.install_encoder(MODEL, bundled_encoder)
    yield app, other
    other.db.dispose()


def ingest(app: App, csv: str, corpus: str = "faq") -> None:
    summary = table_upload.upload(app, read_table(csv.encode(), "faq.csv"), corpus)
    if summary.job_id is not None:
        assert run_until_done(app, summary.job_id).status == "succeeded"


def test_a_re_uploaded_newest_document_is_found_with_its_new_text(apps):
    server, cli = apps
    ingest(cli, FAQ)
    assert search(server, "faq", "The printer jams.", k=1)[0].semantic_score == \
        pytest.approx(1, abs=1e-4)  # the cosine (the default mode scores by fused rank)
    ingest(cli, "id,text\nc,Bananas are yellow and sweet.\n")  # the newest id, new text
    [hit] = search(server, "faq", "Bananas are yellow and sweet.", k=1)
    assert (hit.id, hit.text) == ("c", "Bananas are yellow and sweet.")
    assert hit.semantic_score == pytest.approx(1.0, abs=1e-4)
    assert all(h.text != "The printer jams." for h in search(server, "faq", "printer", k=3))


def test_a_corpus_deleted_and_created_again_is_served_fresh(apps):
    server, cli = apps
    ingest(cli, FAQ)
    search(server, "faq", "password", k=3)  # the server now caches this corpus' index
    corpora.delete(cli, "faq")
    ingest(cli, "id,text\nz,A cat sleeps on the sofa.\ny,The train leaves at noon.\n")
    hits = search(server, "faq", "A cat sleeps on the sofa.", k=3)
    assert [h.id for h in hits] == ["z", "y"]
    assert hits[0].semantic_score == pytest.approx(1.0, abs=1e-4)


def test_stored_duplicates_are_not_shown_for_changed_text(apps):
    server, cli = apps
    ingest(cli, FAQ + "d,how do I reset my password\n")
    report = dup.find_duplicates(server, "faq", threshold=0.9, k=3)
    assert {(p.a, p.b) for p in report.pairs} == {("a", "d")}
    ingest(cli, "id,text\nd,Is the shop open on Sunday?\n")
    assert dup.find_duplicates(server, "faq", threshold=0.9, k=3, compute=False) is None
    assert dup.find_duplicates(server, "faq", threshold=0.9, k=3).pairs == []
