"""A document split into passages ranks by its best passage and its whole vector together
(``searchapp.search.evidence``): a page that mentions every subject once, one per section,
no longer outranks the page about the subject. Real files through the app's ingest, the
bundled encoder, SQLite and hnswlib."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchapp.intake.files_job import request_ingest
from searchapp.jobs.worker import run_until_done
from searchapp.search.evidence import DOCUMENT_WEIGHT, document_score
from searchapp.search.fusion import DEFAULT, Fusion
from searchapp.search.service import open_corpus, search
from searchapp.vectors.passage_index import STRIDE, PassageIndex

QUERY = "restore a database from a backup file"
BACKUPS = [  # the page about the subject: every section on it
    ("Making a backup",
     "A backup is a copy of the whole database kept in a file. Run the dump tool every night "
     "and it writes every table, index definition and role into one file. Keep at least a "
     "week of these files, and copy them to another machine so that a broken disk does not "
     "take them too. Check the size of each file after the dump finishes; a file much smaller "
     "than yesterday's means the dump stopped early."),
    ("Bringing a database back",
     "To bring a database back, create an empty database with the same name, then feed the "
     "dump file to the command-line client, which replays every statement in it. Large dumps "
     "replay faster with several jobs at once. After the replay, run analyze so that the "
     "planner has fresh statistics. Practise bringing a database back once a month on a spare "
     "machine: a backup nobody has tried to bring back is only a hope."),
]
RELEASE_NOTES = [  # a page that mentions everything, one subject per section
    ("Logging", "The server can now write its log as JSON lines, one object per event, with "
     "the time, the process and the message as fields."),
    ("Sorting", "Sorting large tables uses less memory and runs up to twice as fast when many "
     "rows share the same leading column."),
    ("Time zones", "The time zone data was updated to the latest release, which changes the "
     "rules for several countries in South America."),
    ("Restore", "To restore a database from a backup file, the restore tool now reads the "
     "backup file in parallel, so a database comes back from its backup much faster."),
    ("Replication", "A standby server that loses its connection now reconnects by itself and "
     "catches up without a restart."),
    ("JSON", "New functions build JSON arrays from query results and check whether a text is "
     "valid JSON."),
    ("Security", "Passwords are now stored with a stronger hash by default, and old hashes "
     "are upgraded at the next login."),
    ("Vacuum", "Vacuum skips pages that are already frozen, which makes it much cheaper on "
     "large tables that rarely change."),
    ("Indexes", "An index can now be built without locking writes to the table, on "
     "partitioned tables too."),
    ("Connections", "The server accepts more connections at once and spends less memory on "
     "each idle one."),
]
SHORT = {"greeting.txt": "Welcome to the team wiki.",
         "lunch.txt": "Lunch is served at noon in the canteen."}
BEFORE = replace(DEFAULT, document_weight=0.0)  # a split document by its best passage alone


@pytest.fixture
def app(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)  # the session's encoder
    return app


def page(title: str, sections: list[tuple[str, str]]) -> str:
    body = "".join(f"<h2>{h}</h2>\n<p>{t}</p>\n" for h, t in sections)
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1>\n{body}</body></html>"


@pytest.fixture
def manual(app, tmp_path) -> str:
    """Two HTML pages split into passages (one per section) and two short notes, ingested."""
    folder = tmp_path / "manual"
    folder.mkdir()
    (folder / "backups.html").write_text(page("Backups", BACKUPS))
    (folder / "release-notes.html").write_text(page("Release notes", RELEASE_NOTES))
    for name, text in SHORT.items():
        (folder / name).write_text(text)
    job = run_until_done(app, request_ingest(app, "manual", [folder]))
    assert job.status == "succeeded", job.error
    handle = open_corpus(app, "manual")
    assert handle.passages is not None and len(handle.passages.passage_counts) == 2
    return "manual"


def ids(app, corpus: str, mode: str, fusion: Fusion | None = None) -> list[str]:
    return [Path(h.id).name for h in search(app, corpus, QUERY, k=4, mode=mode, fusion=fusion)]


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_the_page_about_the_subject_outranks_the_page_that_mentions_everything(app, manual,
                                                                                mode):
    # by its best passage alone, the release notes' one section on restoring wins ...
    assert ids(app, manual, mode, BEFORE)[0] == "release-notes.html"
    # ... the page as a whole is about backups: that page comes first
    found = ids(app, manual, mode)
    assert found[:2] == ["backups.html", "release-notes.html"], found


def test_the_hit_still_names_its_best_passage_and_scores_between_both_cosines(app, manual):
    hits = {Path(h.id).name: h for h in search(app, manual, QUERY, k=4, mode="semantic")}
    before = {Path(h.id).name: h for h in search(app, manual, QUERY, k=4, mode="semantic",
                                                 fusion=BEFORE)}
    notes, notes_before = hits["release-notes.html"], before["release-notes.html"]
    assert notes.passage == notes_before.passage  # the "Restore" section, shown as before
    assert "restore tool" in notes.text[notes.span[0]:notes.span[1]]
    assert notes.score < notes_before.score  # the page as a whole counts
    for name in SHORT:  # a text that fits the window: its cosine, as before
        if name in hits and name in before:
            assert hits[name].score == before[name].score


def test_short_texts_rank_exactly_as_before(app, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for i, text in enumerate(["Restore the dump with the client.", "Backups run nightly.",
                              "The canteen opens at noon.", "Reset a password by mail."]):
        (folder / f"{i}.txt").write_text(text)
    assert run_until_done(app, request_ingest(app, "notes", [folder])).status == "succeeded"
    for mode in ("semantic", "hybrid"):
        now = [(h.id, h.score) for h in search(app, "notes", QUERY, k=4, mode=mode)]
        assert now == [(h.id, h.score) for h in search(app, "notes", QUERY, k=4, mode=mode,
                                                      fusion=BEFORE)]


@given(best=st.floats(-1, 1), whole=st.floats(-1, 1), weight=st.floats(0, 10))
def test_a_split_documents_score_lies_between_its_two_cosines(best, whole, weight):
    score = document_score(best, whole, weight)
    assert min(best, whole) - 1e-9 <= score <= max(best, whole) + 1e-9
    assert document_score(best, best, weight) == pytest.approx(best)
    assert document_score(best, whole, 0.0) == best


def test_the_whole_cosine_is_that_of_the_mean_of_the_passages():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(5, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = PassageIndex(dim=8)
    index.add(9 * STRIDE + np.arange(5), vectors)
    query = vectors[2]
    number, best, whole = index.passage_evidence(query, [9])[9]
    mean = vectors.mean(axis=0)
    assert number == 2 and best == pytest.approx(1.0, abs=1e-5)
    assert whole == pytest.approx(float(mean @ query / np.linalg.norm(mean)), abs=1e-5)


def test_a_fusion_stored_before_the_document_weight_gets_todays():
    stored = {"semantic_weight": 2.0, "digit_weight": 1.0, "rrf_k": 10, "depth": 50,
              "source": "fitted"}
    assert Fusion.from_dict(stored).document_weight == DOCUMENT_WEIGHT
    assert Fusion.from_dict(Fusion(document_weight=0.0).as_dict()).document_weight == 0.0
