"""The waits and dead ends a person meets, in headless Chromium against one app server.

The module's data folder has a stand-in worker (a process that only waits, holding the
worker lock on ``worker.pid``), so the app starts none: the tests play the worker themselves
(claim the embedding job, store vectors batch by batch, report progress) and see
each state in the browser exactly when they choose. Needs /usr/bin/chromium.
"""

from __future__ import annotations

import numpy as np
import pytest

from searchapp.clusters import ClusterParams, compute_and_store
from searchapp.context import App
from searchapp.duplicates import mine_corpus
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs import queue
from searchapp.jobs.worker import work
from searchapp.store import repo
from searchapp.vectors.handle import open_corpus
from tests.browser import browser_page, served_without_worker
from tests.test_clusters import make_corpus as corpus_with_vectors
from tests.test_duplicates import FAQ
from tests.test_duplicates import make_corpus as embedded_corpus

pytestmark = pytest.mark.browser
WAIT = 60_000  # ms: the first search in the app loads the bundled model
NOTES = [f"Note {i}: {t}" for i in range(10) for t in (
    "a dog chases a ball in the park", "the market fell on Monday",
    "rain flooded the city streets", "a chef slices vegetables", "children build sandcastles",
    "a plane takes off at dawn", "she reads a novel by the fire", "the team won the cup",
    "he fixed a flat bicycle tyre", "students sit an exam", "a woman paints in watercolour",
    "the orchestra tunes its instruments", "a cat sleeps on the sofa", "snow covers the hills",
    "farmers harvest wheat in august", "a diver explores a coral reef", "the bakery sells bread",
    "a child flies a red kite", "the museum opens a new wing", "fishermen mend their nets")]
# 200 tight groups of 10 synthetic unit vectors each: k-means with k = 200 finds them.
TOPICS, PER_TOPIC, DIM = 200, 10, 384  # the model's dimension


@pytest.fixture(scope="module")
def served(tmp_path_factory, bundled_encoder):
    """(url, browser, App on the same data folder): one server for the module."""
    with served_without_worker(
            tmp_path_factory.mktemp("browser-ux"),
            lambda app: app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)) as served:
        yield served


@pytest.fixture
def page(served, request):
    """A new browser session per test; a screenshot in artifacts/ if the test fails."""
    _url, browser, _app = served
    with browser_page(browser, request) as page:
        yield page


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the Streamlit selectbox labelled ``label``.

    A corpus choice is in the address once its rerun has drawn the page (the
    script state alone can still read 'notRunning' before that rerun starts):
    type only after it, or the redraw takes the typed text away.
    """
    page.get_by_label(label, exact=True).first.click()
    page.get_by_role("option", name=option).first.click()
    if label == "Corpus":
        name = option.split(" (")[0]
        page.wait_for_function("""name => new URLSearchParams(location.search)
            .get('corpus') === name""", arg=name, timeout=WAIT)
    page.wait_for_function("""() => document.querySelector('[data-testid="stApp"]')
        ?.dataset.testScriptState === 'notRunning'""", timeout=WAIT)


def faq_corpus(app: App) -> None:
    """The small embedded FAQ corpus of the duplicates tests, made once for the module."""
    with app.db.session() as s:
        if "faq" in {c.name for c in repo.summaries(s)}:
            return
    embedded_corpus(app, app.encoder("all-MiniLM-L6-v2"), "faq", FAQ)


def bar_text(page) -> str:
    main = '[data-testid="stMain"] [data-testid="stProgress"]'  # not the sidebar's bars
    return page.locator(main).first.inner_text(timeout=WAIT)


def test_an_embedding_shows_rate_and_time_left_and_search_opens_at_the_first_batch(
        served, page):
    url, _browser, app = served
    summary = upload(app, read_table(("text\n" + "\n".join(NOTES) + "\n").encode(), "n.csv"),
                     "notes")
    lease = queue.claim(app.db, "test-worker").lease
    queue.progress(app.db, lease, 0, 0, "Step 1 of 2: loading the model all-MiniLM-L6-v2")

    page.goto(f"{url}/search")
    choose(page, "Corpus", "notes (200 documents, 0 embedded)")
    page.get_by_text("Search opens when the first 128 documents are embedded").wait_for(
        timeout=WAIT)
    assert page.get_by_label("Query").count() == 0, "no search box before the first batch"

    handle = open_corpus(app, "notes", require_vectors=False)
    with app.db.session() as s:
        rows = repo.documents_missing_embedding(s, handle.corpus_id, handle.model.id, 0, 128)
    vectors = app.encoder(handle.model.name).encode([t for _, t in rows])
    with app.db.session() as s:
        repo.save_embeddings(s, handle.corpus_id, handle.model.id, [d for d, _ in rows],
                             vectors)
    queue.progress(app.db, lease, 128, 200, "Step 2 of 2: embedded 128 of 200 · "
                   "64 documents/s · about 1 s left")
    # The bar's fragment notices the first batch and opens search by itself.
    page.get_by_label("Query").wait_for(timeout=WAIT)
    assert bar_text(page) == ("Search covers 128 of 200 documents (64%). Embedding the rest: "
                              "64 documents/s · about 1 s left.")
    page.get_by_label("Query").fill("a puppy runs after a ball")
    page.get_by_label("Query").press("Enter")
    page.locator(".st-key-hit-1").wait_for(timeout=WAIT)
    assert "dog chases a ball" in page.locator(".st-key-hit-1").inner_text()

    # The Jobs page and the Upload page (reloaded: a new session) show rate and time left.
    page.goto(f"{url}/jobs")
    page.get_by_text("64 documents/s · about 1 s left").first.wait_for(timeout=WAIT)
    page.goto(f"{url}/?job={summary.job_id}")
    page.get_by_test_id("stMain").get_by_text(  # the sidebar shows the same line
        "Embedding 'notes': Running · 128 of 200 (64%) · Step 2 of 2 · "
        "64 documents/s · about 1 s left").wait_for(timeout=WAIT)
    queue.finish(app.db, lease, "cancelled")


def test_an_invalid_k_says_so_and_clears_the_results(served, page):
    url, _browser, app = served
    faq_corpus(app)
    page.goto(f"{url}/search")
    choose(page, "Corpus", "faq (13 documents)")
    page.get_by_label("Query").fill("forgot my password")
    page.get_by_label("Query").press("Enter")
    page.locator(".st-key-hit-1").wait_for(timeout=WAIT)
    page.get_by_label("Results (k)", exact=True).fill("0")
    page.get_by_label("Results (k)", exact=True).press("Enter")
    page.get_by_text("Results (k) must be a whole number from 1 to 1,000; got 0.").wait_for(
        timeout=WAIT)
    page.locator(".st-key-hit-1").wait_for(state="detached", timeout=WAIT)


def test_a_lower_threshold_mines_again_keeping_the_old_results(served, page):
    url, _browser, app = served
    faq_corpus(app)
    mine_corpus(app, "faq", 0.8)
    page.goto(f"{url}/duplicates")
    choose(page, "Corpus", "faq")
    page.get_by_text("Download pairs (CSV)").wait_for(timeout=WAIT)
    slider = page.get_by_role("slider")
    slider.focus()
    slider.press("Home")  # the lowest threshold: below what was mined
    page.get_by_text("Until they arrive, the results at threshold 0.800").wait_for(
        timeout=WAIT)
    assert "Finding duplicates in 'faq' at 0.400" in bar_text(page)
    assert page.get_by_text("Download pairs (CSV)").first.is_visible(), "old results stay"
    assert work(app, stop_when_idle=True) == 1  # the job the page queued by itself
    page.get_by_text("Until they arrive").wait_for(state="detached", timeout=WAIT)
    page.get_by_text("Download pairs (CSV)").wait_for(timeout=WAIT)


def test_a_200_cluster_map_has_a_short_legend(served, page):
    url, _browser, app = served
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(TOPICS, DIM))
    vectors = np.repeat(centres, PER_TOPIC, axis=0) + 0.05 * rng.normal(
        size=(TOPICS * PER_TOPIC, DIM))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    texts = [f"topic{t} word{t} item {i}" for t in range(TOPICS) for i in range(PER_TOPIC)]
    corpus_with_vectors(app, "topics", texts, vectors)
    result = compute_and_store(app, "topics", ClusterParams("kmeans", TOPICS, projection="pca"))
    assert len(result.clusters) >= 190
    page.goto(f"{url}/clusters")
    choose(page, "Corpus", "topics (2,000 documents)")
    choose(page, "Method", "k-means (fixed number)")
    page.get_by_label("Clusters (k), 0 = automatic").fill(str(TOPICS))
    page.get_by_label("Clusters (k), 0 = automatic").press("Enter")
    page.get_by_text("PCA (fast)").click()
    page.locator(".legend").first.wait_for(timeout=WAIT)
    entries = page.locator(".stPlotlyChart").first.locator(".legend .traces").count()
    assert 2 <= entries <= 21, entries
