"""The Streamlit pages through ``streamlit.testing.v1.AppTest``, on a real database.

Each test has its own data folder (autouse fixture) and a fresh process-wide
App (the resource cache is cleared around each test). The background worker
is not spawned here (``ensure_worker`` is replaced by a recorder), except in
the one test about spawning it; jobs run inline with ``work``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.context import App
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs import queue
from searchapp.jobs.worker import work, worker_pid
from searchapp.store import repo
from searchapp.ui.resources import get_app
from searchapp.vectors.handle import open_corpus

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "searchapp" / "ui" / "pages"
TIMEOUT = 60  # seconds per script run: the first search loads the bundled model
ANIMALS = ("id,text,kind\n"
           "a1,A dog is chasing a ball across the park.,pet\n"
           "a2,The stock market fell sharply on Monday.,news\n"
           "a3,A chef is slicing vegetables in the kitchen.,food\n"
           "a4,Heavy rain flooded the streets of the city.,news\n")


@pytest.fixture(autouse=True)
def fresh_resources(ui_resources):
    return ui_resources


def page(name: str) -> AppTest:
    return AppTest.from_file(PAGES / f"{name}.py", default_timeout=TIMEOUT)


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def store(app: App, csv: str, corpus: str, **kw):
    return upload(app, read_table(csv.encode(), f"{corpus}.csv"), corpus, **kw)


def button(at: AppTest, label: str):
    matches = [b for b in at.button if b.label == label]
    assert matches, f"no button {label!r}; buttons: {[b.label for b in at.button]}"
    return matches[0]


# ---- navigation ------------------------------------------------------------------
def test_app_opens_on_upload_and_navigates_to_each_page(fresh_resources):
    at = AppTest.from_file(REPO / "app.py", default_timeout=TIMEOUT).run()
    assert not at.exception
    assert at.title[0].value == "Upload"
    for path, title in [("searchapp/ui/pages/search.py", "Search"),
                        ("searchapp/ui/pages/jobs.py", "Jobs")]:
        at.switch_page(path).run()
        assert not at.exception
        assert at.title[0].value == title
        if title == "Search":  # no corpus yet: a real link to the Upload page
            assert [link.proto.label for link in at.get("page_link")] == ["Guide: Search", "Upload"]
    assert fresh_resources, "a page should make sure a background worker runs"


# ---- upload -------------------------------------------------------------------------
def test_first_run_offers_the_sample_with_its_attribution_and_loads_it(app):
    at = page("upload").run()
    assert not at.exception
    assert any("CC BY-SA 4.0" in c for c in texts(at.caption))
    button(at, "Load the sample corpus (3,025 image captions)").click().run()
    assert not at.exception and not at.error
    with app.db.session() as s:
        [summary] = repo.summaries(s)
    assert (summary.name, summary.documents) == ("captions", 3025)
    assert "Corpus 'captions': 3025 added." in texts(at.success)
    job = queue.active_for(app.db, "embed", "corpus", "captions")
    assert job is not None and job.status == "queued"
    assert "Queued" in at.get("progress")[0].proto.text  # its progress is on the page
    assert any("CC BY-SA 4.0" in c for c in texts(at.caption)), "attribution stays visible"


def test_upload_a_csv_through_the_page_then_search_it(app):
    at = page("upload").run()
    at.file_uploader[0].upload("animals.csv", ANIMALS.encode(), "text/csv").run()
    assert not at.exception and not at.error
    assert at.dataframe[0].value.shape == (4, 3)  # the preview
    assert (at.multiselect[0].value, at.selectbox[0].value) == (["text"], "id")  # guessed
    assert at.text_input[0].value == "animals"  # the corpus name comes from the file name
    assert any("metadata: kind" in c for c in texts(at.caption))
    button(at, "Upload and embed").click().run()
    assert not at.exception and not at.error
    assert "Corpus 'animals': 4 added." in texts(at.success)
    assert not at.file_uploader[0].value, "the file picker is cleared after an upload"

    # The embed job, with the bundled model, run here through the pages' own App (so the
    # model is loaded once for the job and the search).
    assert work(get_app(), stop_when_idle=True) == 1
    at.run()
    assert any("done" in s for s in texts(at.success))
    assert "Search 'animals': open it from the sidebar." in texts(at.caption)

    search = page("search").run()
    assert not search.exception and not search.error
    search.text_input[0].input("a puppy runs after a ball")
    search.button[0].click().run()  # the form's submit button
    assert not search.exception and not search.error
    first = search.markdown[0].value  # "**1.** <text>" inside the first result box
    assert first.startswith("**1.**") and "dog is chasing a **ball**" in first  # words in bold
    assert any("id a1" in c and "kind: pet" in c for c in texts(search.caption))


@pytest.mark.parametrize(("content", "id_column", "expected"), [
    ("id,text\n1,first\n2,second\n1,third\n", "id",
     "line 4 repeats id '1' (first seen at line 2). Ids must be unique."),
    ("", None, "bad.csv is empty: there is nothing to upload."),
    ("id,text\n1,\n2, \n", None, "Every row has an empty 'text': nothing to upload."),
    ('text\n"never closed\nnext\n', None, "starts on line 2 is never closed"),
])
def test_a_bad_file_shows_what_to_fix_and_stores_nothing(app, content, id_column, expected):
    at = page("upload").run()
    at.file_uploader[0].upload("bad.csv", content.encode(), "text/csv").run()
    if not at.error:  # this problem shows when the rows become documents
        if id_column:
            at.selectbox[0].set_value(id_column).run()
        button(at, "Upload and embed").click().run()
    assert not at.exception
    assert any(expected in e for e in texts(at.error)), texts(at.error)
    with app.db.session() as s:
        assert repo.summaries(s) == []


def test_a_tab_separated_csv_is_read_and_an_id_column_with_repeats_is_an_error(app):
    """A column named id is the id even with repeats: the upload names the lines (never a
    silent switch to ids from the text); choosing no id makes ids from the text."""
    at = page("upload").run()
    at.file_uploader[0].upload("tabs.csv", b"id\ttext\n1\thello\n", "text/csv").run()
    assert at.multiselect[0].value == ["text"]
    at.file_uploader[0].set_value(("ids.csv", b"id,text\n1,a\n1 ,b\n", "text/csv")).run()
    assert at.selectbox[0].value == "id"
    button(at, "Upload and embed").click().run()
    assert any("line 3 repeats id '1' (first seen at line 2)" in e for e in texts(at.error))
    at.selectbox[0].set_value(at.selectbox[0].options[0]).run()
    assert any("Column 'id' is not used as the id" in c for c in texts(at.caption))


def test_a_gzipped_csv_is_previewed_with_guessed_columns(app):
    from searchapp.sample import SAMPLE_FILE

    at = page("upload").run()
    at.file_uploader[0].upload("captions.csv.gz", SAMPLE_FILE.read_bytes(),
                               "application/gzip").run()
    assert not at.error
    # the page reads the first 1,000 rows to preview; the upload streams the rest
    assert any(c.startswith("captions.csv.gz: more than 1,000 rows") for c in texts(at.caption))
    assert (at.multiselect[0].value, at.selectbox[0].value) == (["text"], "id")
    assert at.text_input[0].value == "captions"


def test_choosing_no_id_column_makes_ids_from_the_text(app):
    at = page("upload").run()
    at.file_uploader[0].upload("animals.csv", ANIMALS.encode(), "text/csv").run()
    at.selectbox[0].set_value("(none: make ids from the text)").run()
    button(at, "Upload and embed").click().run()
    assert not at.error
    with app.db.session() as s:
        corpus = repo.get_corpus(s, "animals")
        assert repo.document_by_external_id(s, corpus.id, "a1") is None
        doc = repo.documents_by_id(s, [1])[1]
        assert len(doc.external_id) == 16 and doc.meta == {"id": "a1", "kind": "pet",
                                                        "lang": "en"}


def test_invalid_utf8_is_reported_with_its_line(app):
    at = page("upload").run()
    at.file_uploader[0].upload("latin1.csv", "text\nok\ncaf\xe9\n".encode("latin-1"),
                               "text/csv").run()
    assert any("line 3, column 4 is not valid UTF-8 (byte 0xe9)" in e for e in texts(at.error))


def test_the_next_upload_goes_to_the_corpus_in_use_by_default(app):
    """A second upload offered "A new corpus" named after its file while the user's corpus
    existed: a newcomer split the pile and searched the wrong half. The corpus in use (this
    session's, or after a reload the data folder's last) is the default, documents and
    tables alike."""
    from searchapp.ui.url_state import write_last_corpus

    store(app, ANIMALS, "animals")
    store(app, ANIMALS, "zoo")
    write_last_corpus(app.settings.data_dir, "zoo")  # used last, before this session
    at = page("upload").run()
    at.file_uploader[0].upload("handbook.md", b"# Pets\n\nDogs and cats.", "text/markdown")
    at.run()
    assert at.radio[0].value == "An existing corpus"
    assert next(s for s in at.selectbox if s.label == "Corpus").value == "zoo"
    at.file_uploader[0].set_value(("more.csv", b"id,text\nz9,A giraffe.\n", "text/csv")).run()
    assert at.radio[0].value == "An existing corpus"
    assert next(s for s in at.selectbox if s.label == "Corpus").value == "zoo"


def test_rows_are_added_to_an_existing_corpus(app):
    store(app, ANIMALS, "animals")
    at = page("upload").run()
    more = "id,text,kind\na1,A dog is chasing a ball across the park.,pet\na5,A cat sleeps.,pet\n"
    at.file_uploader[0].upload("animals.csv", more.encode(), "text/csv").run()
    # The corpus in use is the default target: no second corpus beside it by accident.
    assert at.radio[0].value == "An existing corpus"
    assert next(s for s in at.selectbox if s.label == "Corpus").value == "animals"
    at.radio[0].set_value("A new corpus").run()
    # The same name for a new corpus: a warning, no upload.
    assert any("already exists" in w for w in texts(at.warning))
    assert button(at, "Upload and embed").disabled
    at.radio[0].set_value("An existing corpus").run()
    assert next(s for s in at.selectbox if s.label == "Corpus").value == "animals"
    button(at, "Upload and embed").click().run()
    assert not at.error
    assert "Corpus 'animals': 1 added, 1 already stored." in texts(at.success)
    with app.db.session() as s:
        assert [(c.name, c.documents) for c in repo.summaries(s)] == [("animals", 5)]


def test_delete_asks_for_confirmation_and_waits_for_the_embedding_job(app):
    summary = store(app, ANIMALS, "animals")
    at = page("upload").run()
    assert button(at, "Delete").disabled  # not confirmed yet
    at.checkbox[0].check().run()
    button(at, "Delete").click().run()
    assert any("is being embedded (job" in e for e in texts(at.error))
    queue.cancel(app.db, summary.job_id)
    at.checkbox[0].check().run()
    button(at, "Delete").click().run()
    assert not at.exception and not at.error
    assert "Deleted corpus 'animals'." in texts(at.success)
    with app.db.session() as s:
        assert repo.summaries(s) == []
    assert at.button[0].label.startswith("Load the sample corpus")


def _embed_first(app: App, corpus: str, count: int) -> None:
    """Vectors for the first ``count`` documents, as a batch of the embed job commits them."""
    handle = open_corpus(app, corpus, require_vectors=False)
    with app.db.session() as s:
        rows = repo.documents_missing_embedding(s, handle.corpus_id, handle.model.id, 0, count)
    vectors = app.encoder(handle.model.name).encode([text for _, text in rows])
    with app.db.session() as s:
        repo.save_embeddings(s, handle.corpus_id, handle.model.id, [d for d, _ in rows],
                             vectors)


def _table_row(at: AppTest, corpus: str) -> dict:
    [table] = [t.value for t in at.table]  # one table of corpora: the bar's
    return table[table["corpus"] == corpus].iloc[0].to_dict()


def test_the_upload_bar_and_the_corpora_table_show_the_same_counts(app):
    """The table of corpora and the bar above it say the same (the bar read 25% beside a
    table at 38.74%): a batch's vectors are committed before the job reports them, and
    the two are drawn together from one read, the row counted as the job counts."""
    summary = store(app, ANIMALS, "animals")
    at = page("upload")
    at.query_params["job"] = str(summary.job_id)

    at.run()  # queued: the bar shows the corpus' own counts (none embedded yet)
    assert not at.exception
    [bar] = at.get("progress")
    assert bar.proto.text.startswith("Embedding 'animals': Queued")
    assert (bar.proto.value, _table_row(at, "animals")["embedded %"]) == (0, "0%")

    lease = queue.claim(app.db, "test-worker").lease
    _embed_first(app, "animals", 3)  # committed by the job, which has reported only one
    queue.progress(app.db, lease, 1, 4, "Step 2 of 2: embedded 1 of 4")
    at.run()
    [bar] = at.get("progress")
    assert bar.proto.text == "Embedding 'animals': Running · 1 of 4 (25%) · Step 2 of 2"
    row = _table_row(at, "animals")
    assert (row["embedded"], row["embedded %"], bar.proto.value) == ("1", "25%", 25)

    queue.finish(app.db, lease, "cancelled")
    at.run()  # no bar any more: the table shows the database's count
    assert not at.get("progress")
    assert _table_row(at, "animals")["embedded"] == "3"


# ---- search ----------------------------------------------------------------------
def test_search_without_a_corpus_points_to_upload(app):
    at = page("search").run()
    assert not at.exception and not at.error
    assert "Upload page" in at.info[0].value
    assert not at.text_input


def test_search_while_embedding_shows_progress_instead_of_an_error(app):
    store(app, ANIMALS, "animals")
    lease = queue.claim(app.db, "test-worker").lease
    queue.progress(app.db, lease, 0, 0, "Step 1 of 2: loading the model all-MiniLM-L6-v2")
    at = page("search").run()
    assert not at.exception and not at.error
    [bar] = at.get("progress")
    assert bar.proto.text == ("Search opens when the first 128 documents are embedded; this "
                              "page opens it by itself. Now: loading the model "
                              "all-MiniLM-L6-v2.")
    assert not at.text_input, "no search box before anything is embedded"


def test_search_runs_on_the_embedded_part_and_says_how_much_that_is(app):
    store(app, ANIMALS, "animals")
    lease = queue.claim(app.db, "test-worker").lease
    queue.progress(app.db, lease, 2, 4, "Step 2 of 2: embedded 2 of 4 · 3.0 documents/s · "
                   "about 1 s left")
    handle = open_corpus(app, "animals", require_vectors=False)  # as the embed job does
    with app.db.session() as s:  # the job's first batch: two documents have vectors
        rows = repo.documents_missing_embedding(s, handle.corpus_id, handle.model.id, 0, 2)
    vectors = app.encoder(handle.model.name).encode([text for _, text in rows])
    with app.db.session() as s:
        repo.save_embeddings(s, handle.corpus_id, handle.model.id, [d for d, _ in rows],
                             vectors)
    at = page("search").run()
    assert not at.exception and not at.error
    [bar] = at.get("progress")
    assert bar.proto.text == ("Search covers 2 of 4 documents (50%). Embedding the rest: "
                              "3.0 documents/s · about 1 s left.")
    assert bar.proto.value == 50
    at.text_input[0].input("a puppy runs after a ball")
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert "A dog is chasing" in at.markdown[0].value
    assert not any("embedded so far" in c for c in texts(at.caption)), "one number: the bar's"


def test_an_invalid_k_says_so_inline_and_clears_the_results(app):
    store(app, ANIMALS, "animals")
    work(app, stop_when_idle=True)
    at = page("search").run()
    at.text_input[0].input("a puppy runs after a ball")
    at.button[0].click().run()
    assert "A dog is chasing" in at.markdown[0].value
    at.number_input(key="search-k").set_value(0)
    at.button[0].click().run()
    assert not at.exception
    assert texts(at.error) == ["Results (k) must be a whole number from 1 to 1,000; got 0. "
                               "No search was run."]
    assert not [m for m in at.markdown if not m.value.startswith("<style>")], \
        "the old results are gone (the page's style stays)"


def test_a_cancelled_embedding_can_be_resumed_from_the_search_page(app):
    summary = store(app, ANIMALS, "animals")
    queue.cancel(app.db, summary.job_id)
    at = page("search").run()
    assert any("4 documents have no vector yet" in w for w in texts(at.warning))
    button(at, "Embed the remaining documents").click().run()
    assert not at.exception
    job = queue.active_for(app.db, "embed", "corpus", "animals")
    assert job is not None and job.id != summary.job_id
    assert "Search opens when" in at.get("progress")[0].proto.text


def test_search_problems_are_messages(app):
    store(app, ANIMALS, "animals")
    work(app, stop_when_idle=True)
    at = page("search").run()
    at.button[0].click().run()  # an empty query
    assert "The query is empty: type what you are looking for." in texts(at.error)
    at.text_input[0].input("weather")
    at.slider[0].set_value(0.99)
    at.button[0].click().run()
    assert not at.error
    assert any("No result scores 0.99 or more" in i for i in texts(at.info))


# ---- jobs ---------------------------------------------------------------------------
def test_jobs_page_without_jobs(app):
    at = page("jobs").run()
    assert not at.exception
    assert "No jobs yet" in at.info[0].value


def test_jobs_are_listed_with_status_error_and_a_cancel_button(app):
    failed = queue.enqueue(app.db, "embed", {"corpus": "gone"})
    lease = queue.claim(app.db, "test-worker").lease
    queue.finish(app.db, lease, "failed", error="No corpus named 'gone'.")
    waiting = queue.enqueue(app.db, "embed", {"corpus": "animals"})
    at = page("jobs").run()
    assert not at.exception
    headings = [m.value for m in at.markdown if m.value.startswith("**Job")]
    assert headings == [f"**Job {waiting}: embed** corpus 'animals'",
                        f"**Job {failed}: embed** corpus 'gone'"]
    assert "No corpus named 'gone'." in texts(at.error)
    [cancel] = [b for b in at.button if b.label == "Cancel"]  # only the queued job has one
    cancel.click().run()
    assert not at.exception
    assert queue.get(app.db, waiting).status == "cancelled"
    assert f"Job {waiting} cancelled." in texts(at.success)
    assert not [b for b in at.button if b.label == "Cancel"]


def test_a_running_job_is_asked_to_stop(app):
    job_id = queue.enqueue(app.db, "embed", {"corpus": "animals"})
    queue.claim(app.db, "test-worker")
    at = page("jobs").run()
    button(at, "Cancel").click().run()
    assert f"Job {job_id} will stop after its current step." in texts(at.success)
    job = queue.get(app.db, job_id)
    assert job.cancel_requested and job.status == "running"
    assert button(at, "Cancel").disabled


# ---- the background worker ------------------------------------------------------------
def test_pages_start_one_worker_and_a_new_one_when_it_dies(monkeypatch, data_dir):
    monkeypatch.undo()  # the real ensure_worker: spawn `python -m searchapp worker`
    monkeypatch.setenv("SEARCHAPP_DATA_DIR", str(data_dir))
    monkeypatch.setenv("SEARCHAPP_DEVICE", "cpu")
    monkeypatch.setattr("searchapp.ui.common.warm_up", lambda app: None)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pids = []
    try:
        at = page("jobs").run()
        deadline = time.monotonic() + 60  # the worker takes its lock once it has started
        while worker_pid(App().settings) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        first = worker_pid(App().settings)
        pids.append(first)
        at.run()
        assert first is not None and worker_pid(App().settings) == first  # not a second one
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while worker_pid(App().settings) == first and time.monotonic() < deadline:
            time.sleep(0.1)
        at.run()
        deadline = time.monotonic() + 60
        while worker_pid(App().settings) in (None, first) and time.monotonic() < deadline:
            time.sleep(0.1)
        second = worker_pid(App().settings)
        pids.append(second)
        assert second not in (None, first)
    finally:
        for pid in filter(None, pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_an_embed_job_that_found_everything_embedded_says_so_not_done_in_0_s():
    from datetime import timedelta

    from searchapp.jobs.queue import JobView
    from searchapp.store.schema import utcnow
    from searchapp.ui.common import done_line

    now = utcnow()
    job = JobView(1, "embed", "succeeded", {"corpus": "c"}, {"embedded": 0, "documents": 400},
                  400, 400, None, None, False, None, now, now, now)
    assert done_line(job) == "done: every document was embedded while the files were read."
    ran = JobView(2, "embed", "succeeded", {"corpus": "c"}, {"embedded": 10, "documents": 10},
                  10, 10, None, None, False, None, now, now - timedelta(seconds=42), now)
    assert done_line(ran) == "done in 42 s."
