"""The Clusters page in headless Chromium: the map zoomed through two levels of the tree, and a
cluster renamed in the browser keeps its name after the clusters are computed again.

One server on a data folder with a stand-in worker (tests/browser.py): the test stores the
vectors and the clusters itself, as the worker would. Needs /usr/bin/chromium.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from searchapp.clusters import ClusterParams, compute_and_store
from tests.browser import browser_page, served_without_worker
from tests.test_clusters import make_corpus, planted
from tests.test_clusters_hierarchy import add_documents

pytestmark = pytest.mark.browser
WAIT = 90_000  # ms
MAP_LABELS = """() => {
    const gd = document.querySelector('.stPlotlyChart .js-plotly-plot');
    if (!gd || !gd._fullData || !gd._fullData[0].text) return [];
    return [...new Set(gd._fullData[0].text.map(t => t.split(' · ')[1].split('<br>')[0]))];
}"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    vectors, _, texts = planted(sizes=(60, 50, 40, 30), n_outliers=0)

    def prepare(app):
        make_corpus(app, "planted", texts, vectors)
        compute_and_store(app, "planted", ClusterParams(projection="pca"))

    with served_without_worker(tmp_path_factory.mktemp("browser-clusters"), prepare) as served:
        yield (*served, vectors, texts)


@pytest.fixture
def page(served, request):
    _url, browser, *_ = served
    with browser_page(browser, request) as page:
        page.set_default_timeout(WAIT)
        yield page


def map_labels_become(page, want) -> list[str]:
    """Wait until the map's clusters (the names in its points' hover text) satisfy ``want``."""
    deadline = time.monotonic() + WAIT / 1000
    labels: list[str] = []
    while time.monotonic() < deadline:
        labels = page.evaluate(MAP_LABELS)
        if want(labels):
            return labels
        page.wait_for_timeout(100)
    raise AssertionError(f"the map shows {labels}")


def open_map(page, url: str) -> None:
    page.goto(f"{url}/clusters?corpus=planted")
    page.get_by_text("PCA (fast)").click()
    page.locator(".stPlotlyChart .js-plotly-plot").first.wait_for(timeout=WAIT)


def test_the_map_zooms_through_levels_and_a_rename_survives_recomputing(served, page):
    url, _browser, app, vectors, texts = served
    open_map(page, url)
    assert len(map_labels_become(page, lambda labels: len(labels) == 4)) == 4  # chosen: 4
    slider = page.get_by_role("slider")
    slider.focus()
    slider.press("End")  # the finest level of the tree
    fine = map_labels_become(page, lambda labels: len(labels) > 8)
    slider.press("Home")  # the broadest
    broad = map_labels_become(page, lambda labels: len(labels) == 2)
    assert len(set(fine)) == len(fine) and not set(broad) & set(fine)
    slider.press("ArrowRight")  # back up to the level the method chose: 2 → 4 clusters
    map_labels_become(page, lambda labels: len(labels) == 4)

    page.get_by_role("textbox", name="Rename this cluster").fill("Fruit notes")
    page.get_by_role("button", name="Rename", exact=True).click()
    map_labels_become(page, lambda labels: "Fruit notes" in labels)

    # New documents near the first group: a new generation, the clusters computed again.
    rng = np.random.default_rng(7)
    extra = vectors[:15] + 0.05 * rng.normal(size=(15, vectors.shape[1]))
    add_documents(app, "planted", texts[:15], extra / np.linalg.norm(extra, axis=1,
                                                                    keepdims=True))
    again = compute_and_store(app, "planted", ClusterParams(projection="pca"))
    assert again.size == len(texts) + 15
    open_map(page, url)
    labels = map_labels_become(page, lambda labels: len(labels) == 4)
    assert "Fruit notes" in labels


def test_a_cluster_saved_as_a_filter_opens_a_search_within_it(served, page):
    """Save the open cluster as a filter, follow its link: the Search page opens on the
    corpus with the filter set, and a search there finds only that cluster's documents."""
    from tests.test_clusters import TOPICS

    url, *_ = served
    open_map(page, url)
    page.get_by_role("textbox", name="Keep as a search filter named").fill("Kept group")
    page.get_by_role("button", name="Save as a filter").click()
    page.get_by_text('documents now have cluster="Kept group"').wait_for()
    page.get_by_role("link", name="Search in 'Kept group'").click()
    page.wait_for_url("**/search?**")
    assert "where=cluster" in page.url and "corpus=planted" in page.url
    box = page.get_by_label("Query")
    box.fill("today")
    box.press("Enter")
    page.locator(".st-key-hit-10").wait_for()  # k = 10: the cluster has more than 10
    texts = [page.locator(f".st-key-hit-{i}").inner_text() for i in range(1, 11)]
    topics = {t for t in TOPICS if any(set(t) & set(text.split()) for text in texts)}
    assert len(topics) == 1, f"hits from {len(topics)} groups: {texts}"
