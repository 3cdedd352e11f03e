"""The query language in real searches: the real encoder, SQLite FTS5 and hnswlib.

A phrase is required of every hit whichever list found it, an exclusion removes
hits by words, field filters narrow by folder, type, file, author, date and any
column, filters alone list the newest documents, and what cannot apply is said.
"""

from __future__ import annotations

import pandas as pd
import pytest

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search, understood

ROWS = [  # id, text, folder, file, type, author, modified, year
    ("lease-a", "The lease ends after a notice period of three months.", "contracts/2024",
     "lease-a.pdf", "pdf", "Jane Doe", "2024-04-02T10:00:00Z", 2024),
    ("lease-b", "A lease may be ended early; the period of notice is one month.",
     "contracts/2023", "lease-b.docx", "docx", "John Roe", "2023-01-10T10:00:00Z", 2023),
    ("lease-draft", "Draft: the lease ends after a notice period of six weeks.",
     "drafts", "lease-draft.md", "md", "Jane Doe", "2024-05-20T10:00:00Z", 2024),
    ("port", "Change the default port in postgresql.conf and restart the server.",
     "manuals", "config.md", "md", "PG team", "2022-07-01T10:00:00Z", 2022),
    ("dog", "A dog runs along the beach chasing a ball.", "misc", "dog.txt", "txt",
     "Ann Lee", "2021-03-03T10:00:00Z", 2021),
    ("mycontracts", "A contract for the notice period of a lease, kept elsewhere.",
     "mycontracts", "other.pdf", "pdf", "Bob", "2024-09-09T10:00:00Z", 2024),
]


@pytest.fixture
def corpus(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    frame = pd.DataFrame(ROWS, columns=["id", "text", "folder", "file", "type", "author",
                                        "modified", "year"])
    summary = upload(app, read_table(frame.to_csv(index=False).encode(), "docs.csv"), "docs")
    assert run_until_done(app, summary.job_id).status == "succeeded"
    return app


def ids(app, query: str, **kw) -> list[str]:
    return [h.id for h in search(app, "docs", query, k=10, **kw)]


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_a_phrase_is_required_of_every_hit(corpus, mode):
    found = ids(corpus, 'when does the lease end "notice period"', mode=mode)
    assert found and set(found) <= {"lease-a", "lease-draft", "mycontracts"}
    # without the quotes, meaning alone brings the other lease too
    assert "lease-b" in ids(corpus, "when does the lease end notice period", mode=mode)


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_an_exclusion_removes_hits_that_hold_the_word(corpus, mode):
    assert "lease-draft" in ids(corpus, "lease notice period", mode=mode)
    found = ids(corpus, "lease notice period -draft", mode=mode)
    assert found and "lease-draft" not in found
    found = ids(corpus, 'lease -"six weeks"', mode=mode)
    assert "lease-draft" not in found and "lease-a" in found


def test_field_filters_narrow_by_folder_type_file_author_date_and_column(corpus):
    assert set(ids(corpus, "lease folder:contracts")) == {"lease-a", "lease-b"}
    assert set(ids(corpus, "lease folder:contracts/2024")) == {"lease-a"}
    assert "mycontracts" not in ids(corpus, "notice folder:contracts")  # whole folder names
    assert set(ids(corpus, "lease type:markdown")) == {"lease-draft", "port"}
    assert set(ids(corpus, "lease file:*.pdf")) == {"lease-a", "mycontracts"}
    assert set(ids(corpus, 'lease author:"jane doe"')) == {"lease-a", "lease-draft"}
    assert set(ids(corpus, "lease after:2024-03 before:2024-06")) == {"lease-a", "lease-draft"}
    assert set(ids(corpus, "lease year>=2024 -type:pdf")) == {"lease-draft"}
    assert set(ids(corpus, "lease -folder:contracts")) == {"lease-draft", "port", "dog",
                                                           "mycontracts"}


def test_filters_alone_list_the_newest_documents_that_pass(corpus):
    assert ids(corpus, "type:pdf") == ["mycontracts", "lease-a"]
    assert ids(corpus, "-draft type:md") == ["port"]


def test_what_cannot_apply_is_said_and_syntax_like_text_is_searched(corpus):
    plan = understood(corpus, "docs", "lease color:red lang:de after:yesterday type:pdf")
    assert plan.chips == ["lang:de", "type:pdf"]  # every document has its lang (intake.language)
    notices = " ".join(plan.notices)
    assert "color: is not a field here" in notices and "Fields: type, folder" in notices
    assert "after: takes a date" in notices
    assert ids(corpus, "lease lang:de") == [] and "lease-a" in ids(corpus, "lease lang:en")
    for query in ("C++", "ERR-40417", 'a-b "unbalanced', "http://x", "std::vector"):
        search(corpus, "docs", query, k=3)  # text, never an error


def test_the_cli_says_what_it_understood(corpus):

    from tests.helpers import cli_json, run_cli

    shown = run_cli("search", "--corpus", "docs", "--here",
                    'lease "notice period" -draft type:pdf color:red').stdout
    assert 'Understood: "notice period" · not: draft · filters: type:pdf' in shown
    assert "Note: color: is not a field here" in shown
    out = cli_json("search", "--corpus", "docs", "--here", "lease folder:contracts/2024")
    assert out["understood"]["filters"] == ["folder:contracts/2024"]
    assert [h["id"] for h in out["results"]] == ["lease-a"]
