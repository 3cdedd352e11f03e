"""The pages as a returning user meets them, in headless Chromium against one app server:
the address keeps the search, the results are a dense list, the map answers clicks,
statuses follow their jobs, and nothing is fetched from outside the machine.

One server for the module, on a data folder with a stand-in worker (a process that
only waits, named in ``worker.pid``): the tests store vectors and clusters
themselves and play the worker where a job must move. Needs /usr/bin/chromium.
"""

from __future__ import annotations

import contextlib
import time
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from searchapp.clusters import ClusterParams, compute_and_store
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs import queue
from searchapp.store import repo
from searchapp.vectors.handle import open_corpus
from tests.browser import IDLE, browser_page, pick_files, served_without_worker
from tests.test_browser_ux import NOTES
from tests.test_duplicates import make_corpus as embedded_corpus

pytestmark = pytest.mark.browser
WAIT = 90_000  # ms: the first search in the app loads the bundled model
NOTES_CSV = "id,text,kind\n" + "".join(
    f"n{i},{text},{'animal' if i % 3 == 0 else 'other'}\n" for i, text in enumerate(NOTES))
# News items: a headline, then a description that wraps to two lines at 1400 pixels.
_WORDS = tuple(" ".join((
    "river flood warning city council storm coast power cut hospital nurses strike",
    "museum opens art film festival award singer tour tickets football league injury",
    "player transfer weather snow roads closed airport flights cancelled company",
    "profits jobs factory minister plan housing rents students loans science")).split())
NEWS_CSV = "id,text,section,source,author\n" + "".join(  # metadata wider than a hit's row
    f'news{i},"{" ".join(_WORDS[(i + j) % len(_WORDS)] for j in range(8)).capitalize()}\n'
    f'{" ".join(_WORDS[(3 * i + 5 * j) % len(_WORDS)] for j in range(26)).capitalize()}.",'
    f'{("city", "sport")[i % 2]},the-evening-gazette-{i}-online-edition,'
    f'correspondent number {i} of the regional desk\n' for i in range(24))
HIT = '[class*="st-key-hit-"]'
# wholly in view, to a pixel: scrolled "to the top", hit 1 can sit 0.4 px above the window
COUNT_VISIBLE = """() => [...document.querySelectorAll('[class*="st-key-hit-"]')]
  .filter(e => /(^| )st-key-hit-[0-9]+( |$)/.test(e.className))
  .filter(e => { const r = e.getBoundingClientRect();
                 return r.top >= -1 && r.bottom <= window.innerHeight + 1; }).length"""


@pytest.fixture(scope="module")
def served(tmp_path_factory, bundled_encoder):
    """(url, browser, App on the same data folder): one server for the module."""
    with served_without_worker(
            tmp_path_factory.mktemp("browser-pages"),
            lambda app: (embedded_corpus(app, bundled_encoder, "notes", NOTES_CSV),
                         embedded_corpus(app, bundled_encoder, "news", NEWS_CSV))) as served:
        yield served


@pytest.fixture
def page(served, request):
    _url, browser, _app = served
    with browser_page(browser, request) as page:
        page.set_default_timeout(WAIT)  # a loaded machine: the first run loads the model
        yield page


def idle(page) -> None:
    """Wait until no script runs (the app's own state attribute)."""
    page.wait_for_selector(IDLE, timeout=WAIT)


def search_for(page, query: str) -> str:
    """Type a query, press Enter, wait for its first hit; returns that hit's text.

    Done means: no script runs, the address holds the query (the run for it wrote it) and
    the first hit is not the one before (a rerun of the old results also changes the text
    for a moment, so a changed text alone is not enough)."""
    before = page.locator(".st-key-hit-1").inner_text() if page.locator(
        ".st-key-hit-1").count() else None
    box = page.get_by_label("Query")
    box.fill(query)
    box.press("Enter")
    deadline = time.monotonic() + WAIT / 1000
    while time.monotonic() < deadline:
        hit = page.locator(".st-key-hit-1")
        if (page.locator(IDLE).count() and params(page).get("q") == [query]
                and hit.count() and hit.inner_text() != before
                and page.get_by_label("Query").input_value() == query):
            return hit.inner_text()
        page.wait_for_timeout(100)
    raise AssertionError(f"no results for {query!r}")


GRID_ROWS = """(selector) => [...document.querySelectorAll(selector)].map(grid =>
  [...grid.querySelectorAll('[role=row], tr')].map(row =>
    [...row.querySelectorAll('[role=gridcell], td')].map(cell => cell.textContent)))"""


def grid_rows(page, selector: str = '[data-testid="stDataFrame"], [data-testid="stTable"]'
              ) -> list[list[list[str]]]:
    """The cells of every data grid (its accessible table) and static table on the page,
    row by row."""
    return page.evaluate(GRID_ROWS, selector)


def wait_for_row(page, wanted) -> list[str]:
    """The first data-grid row for which ``wanted(row)`` holds, polled until WAIT."""
    deadline = time.monotonic() + WAIT / 1000
    rows: list[list[str]] = []
    while time.monotonic() < deadline:
        rows = [row for grid in grid_rows(page) for row in grid if row]
        found = next((row for row in rows if wanted(row)), None)
        if found is not None:
            return found
        page.wait_for_timeout(200)
    raise AssertionError(f"no such row; the grids hold {rows[:5]}")


def query_is(page, text: str) -> None:
    """Wait until the query box holds ``text``: after a reload the form's widgets can still
    be placeholders when the results are already drawn."""
    page.wait_for_function("""text => document.querySelector('input[aria-label="Query"]')
        ?.value === text""", arg=text, timeout=WAIT)


def params(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_a_reload_and_back_restore_the_query_and_its_results(served, page):
    url, _browser, _app = served
    page.goto(f"{url}/search?corpus=notes")
    ball = search_for(page, "a puppy runs after a ball")
    assert "dog chases a ball" in ball
    snow = search_for(page, "winter weather on the hills")
    assert "snow covers the hills" in snow
    assert params(page)["q"] == ["winter weather on the hills"]
    assert params(page)["corpus"] == ["notes"]

    page.reload()  # a new session: everything from the address
    page.locator(".st-key-hit-1").wait_for(timeout=WAIT)
    idle(page)
    query_is(page, "winter weather on the hills")
    assert "snow covers the hills" in page.locator(".st-key-hit-1").inner_text()

    page.go_back(wait_until="commit")  # the search before; its text below is the wait
    if params(page).get("q") == ["winter weather on the hills"]:
        # Streamlit can echo a reloaded address as an entry of its own (same address, a new
        # history entry, depending on whether a rerun wrote it): one Back more reaches the
        # search before. What counts is that Back reaches it and restores it.
        page.go_back(wait_until="commit")
    page.get_by_text("dog chases a ball").first.wait_for(timeout=WAIT)
    idle(page)
    query_is(page, "a puppy runs after a ball")

    # An action that opens another page, then Back: the search and its results again.
    page.locator(".st-key-hit-1").get_by_role("button", name="On the map").click()
    page.get_by_role("heading", name="Clusters").wait_for(timeout=WAIT)
    assert params(page)["doc"], "the map is asked to ring the hit"
    page.go_back(wait_until="commit")
    page.get_by_text("dog chases a ball").first.wait_for(timeout=WAIT)
    query_is(page, "a puppy runs after a ball")


def test_a_page_load_asks_nothing_that_is_not_there(served, page):
    """No 404 on opening a page: Streamlit's front end asked /<page>/_stcore/health and
    /host-config first (two 404s per load) until the page named its base (web/base_hint)."""
    url, _browser, _app = served
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    health: list[str] = []
    page.on("request", lambda r: health.append(urlsplit(r.url).path)
            if r.url.endswith("/_stcore/health") else None)
    for path in ("search?corpus=notes&q=a+dog", "clusters?corpus=notes"):
        page.goto(f"{url}/{path}")
        page.get_by_test_id("stSidebar").wait_for(timeout=WAIT)
        idle(page)
    assert missing == []
    assert health and set(health) == {"/_stcore/health"}


def test_the_corpus_follows_an_action_and_the_sidebar_to_the_next_page(served, page):
    """With two corpora and "notes" chosen (not the first of the list), a page opened by a
    hit's action ("On the map") and then one from the sidebar show "notes", not "news"."""
    url, _browser, _app = served

    def shows_notes() -> None:
        idle(page)
        assert params(page)["corpus"] == ["notes"]
        picker = page.get_by_test_id("stSelectbox").filter(has_text="Corpus").first
        assert picker.locator("input").input_value().startswith("notes")

    page.goto(f"{url}/search?corpus=notes")
    search_for(page, "a puppy runs after a ball")
    page.locator(".st-key-hit-1").get_by_role("button", name="On the map").click()
    page.get_by_role("heading", name="Clusters").wait_for(timeout=WAIT)
    shows_notes()
    page.get_by_test_id("stSidebar").get_by_role("link", name="Documents").click()
    page.wait_for_function("() => location.pathname === '/documents'", timeout=WAIT)
    shows_notes()


def test_a_url_opened_in_a_second_tab_shows_the_same_search(served, page):
    url, browser, _app = served
    page.goto(f"{url}/search?corpus=notes")
    search_for(page, "students writing a test")
    page.get_by_text("Words (BM25)").click()
    page.get_by_label("Query").press("Enter")
    page.wait_for_function("() => location.search.includes('mode=lexical')", timeout=WAIT)
    idle(page)
    first = page.locator(".st-key-hit-1").inner_text()
    link = page.url
    other = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        tab = other.new_page()
        tab.set_default_timeout(WAIT)
        tab.goto(link)
        tab.locator(".st-key-hit-1").wait_for(timeout=WAIT)
        idle(tab)  # then the form's widgets, which may still be placeholders, hold the query
        tab.wait_for_function("""() => document.querySelector('input[aria-label="Query"]')
            ?.value === 'students writing a test'""", timeout=WAIT)
        assert tab.get_by_label("Words (BM25)").is_checked()
        # the same hit, its actions and judgement switch drawn (they may come a moment later)
        tab.wait_for_function("""first => document.querySelector('.st-key-hit-1')
            ?.innerText === first""", arg=first, timeout=WAIT)
    finally:
        other.close()


def test_the_results_list_shows_at_least_8_hits_in_a_1400x1000_viewport(served, page):
    url, _browser, _app = served
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{url}/search?corpus=notes&q=people+outdoors&k=20")
    page.locator(".st-key-hit-10").wait_for(timeout=WAIT)
    idle(page)
    page.evaluate("document.querySelector('.st-key-hit-1').scrollIntoView({block: 'start'})")
    shown = page.evaluate(COUNT_VISIBLE)
    assert shown >= 8, f"{shown} hits fit in the viewport"
    assert page.get_by_text("Results 1–20.").count() == 1


def test_nine_news_items_of_three_lines_fit_a_1400x1000_viewport(served, page):
    """A headline and a two-line description each, with their actions: the dense list
    (results.results_list) fits 9, where Streamlit's own spacing fits 7."""
    url, _browser, _app = served
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{url}/search?corpus=news&q=flood+warning&k=20")
    page.locator(".st-key-hit-12").wait_for(timeout=WAIT)
    idle(page)
    # the action buttons drawn (until their code has loaded they are taller placeholders)
    page.locator(".st-key-hit-10").get_by_role("button", name="More like this").wait_for(
        timeout=WAIT)
    lines = page.evaluate("""() => { const p = document.querySelector('.st-key-hit-1 p');
        return Math.round(p.getBoundingClientRect().height
                          / parseFloat(getComputedStyle(p).lineHeight)); }""")
    assert lines == 3, f"hit 1 has {lines} lines of text, not a headline and two more"
    # the list's style may reach the hits a moment after they are drawn (a loaded machine):
    # wait for the condition (not a sleep); a list that never fits 9 fails at WAIT
    fits = f"""() => {{ document.querySelector('.st-key-hit-1').scrollIntoView({{block: 'start'}});
        return ({COUNT_VISIBLE})() >= 9; }}"""
    with contextlib.suppress(PlaywrightTimeout):  # the assertion below says how many fit
        page.wait_for_function(fits, timeout=WAIT)
    shown = page.evaluate(COUNT_VISIBLE)
    assert shown >= 9, f"{shown} hits fit in the viewport"


@pytest.mark.parametrize(("where", "at_least"), [("", 5), ("&where=section%3Dsport", 3)])
def test_the_first_screen_of_a_search_shows_its_first_hits(served, page, where, at_least):
    """Opened at 1400×1000, a search shows hits without scrolling, filters open or not: the
    controls took the first 690 px, leaving room for 2 hits, and none with a filter set."""
    url, _browser, _app = served
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{url}/search?corpus=news&q=storm+warning+city&k=20{where}")
    page.locator(".st-key-hit-8").get_by_role("button", name="More like this").wait_for(
        timeout=WAIT)
    idle(page)
    assert page.locator('[data-testid="stExpander"] details[open]').count() == (1 if where
                                                                                 else 0)
    shown = page.evaluate(COUNT_VISIBLE)
    assert shown >= at_least, f"{shown} hits in view without scrolling"
    # a hit's details are cut to the room its buttons leave: the buttons stay on one row
    rows = page.evaluate("""() => [...document.querySelectorAll('[class*="st-key-hit-actions-"]')]
        .map(e => Math.round(e.getBoundingClientRect().height))""")
    assert rows and max(rows) < 48, f"heights of the hits' action rows: {rows}"


def test_clicking_a_map_point_lists_its_documents(served, page):
    url, _browser, app = served
    compute_and_store(app, "notes", ClusterParams(projection="pca"))
    page.goto(f"{url}/clusters?corpus=notes")
    page.get_by_text("PCA (fast)").click()
    page.locator(".stPlotlyChart .js-plotly-plot").first.wait_for(timeout=WAIT)
    idle(page)
    # The pixel of the first clustered point, from plotly's own axes.
    x, y = page.evaluate("""() => {
        const gd = document.querySelector('.stPlotlyChart .js-plotly-plot');
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, points = gd._fullData[0];
        const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
        return [box.left + xa.l2p(points.x[0]), box.top + ya.l2p(points.y[0])];
    }""")
    clicked = page.evaluate("""() => document.querySelector('.stPlotlyChart .js-plotly-plot')
        ._fullData[0].text[0].split('</b>')[0].replace('<b>', '')""")  # the point's document id
    page.mouse.click(x, y)
    page.get_by_role("heading", name="Selected on the map (1)").wait_for(timeout=WAIT)
    idle(page)
    assert page.get_by_text("Download the selection (CSV)").is_visible()
    row = wait_for_row(page, lambda r: r[0] == clicked and len(r) == 4)  # id, cluster, label, text
    assert row[3] in NOTES


def test_the_corpora_table_follows_an_embedding_by_itself(served, page):
    url, _browser, app = served
    upload(app, read_table(("text\n" + "\n".join(f"Row {i} about trains" for i in range(40))
                            + "\n").encode(), "rows.csv"), "rows")
    lease = queue.claim(app.db, "test-worker").lease
    try:
        page.goto(f"{url}/")
        page.get_by_role("heading", name="Upload").wait_for()
        idle(page)
        handle = open_corpus(app, "rows", require_vectors=False)
        with app.db.session() as s:
            docs = repo.documents_missing_embedding(s, handle.corpus_id, handle.model.id, 0, 10)
        vectors = app.encoder(handle.model.name).encode([t for _, t in docs])
        with app.db.session() as s:
            repo.save_embeddings(s, handle.corpus_id, handle.model.id, [d for d, _ in docs],
                                 vectors)
        queue.progress(app.db, lease, 10, 40, "Step 2 of 2: embedded 10 of 40")
        # No click: the table's fragment polls the same count the bars show.
        wait_for_row(page, lambda r: r[:3] == ["rows", "40", "10"])
    finally:
        queue.finish(app.db, lease, "cancelled")


# True once the bar shows ``target`` embedded and the corpus' row the same. Checked on every
# frame; window.longest is the longest run of frames in which the two disagreed.
BAR_AND_ROW = """([corpus, target]) => {
  const bar = document.querySelector('[data-testid="stMain"] [data-testid="stProgress"]');
  const row = [...document.querySelectorAll('[data-testid="stTable"] tr')]
    .map(r => [...r.querySelectorAll('td')].map(c => c.textContent))
    .find(cells => cells[0] === corpus);
  const count = bar && bar.innerText.match(/([0-9,]+) of [0-9,]+ \\(([0-9]+)%\\)/);
  if (!count || !row) return false;
  const same = count[1] === row[2] && count[2] + '%' === row[3];
  window.run = same ? 0 : (window.run || 0) + 1;
  window.longest = Math.max(window.longest || 0, window.run);
  return same && count[1] === target;
}"""
MOST_FRAMES_APART = 2  # the two elements arrive as two messages: on a loaded machine a
# frame can fall between them; a refresh on its own clock lagged 15 frames (0.25 s) to 60


def test_the_upload_bar_and_the_table_beside_it_change_together(served, page):
    """Each batch of an embedding moves the Upload page's bar and its table of corpora
    together: on two clocks they showed a bar at 25% beside a table at 38.74%."""
    url, _browser, app = served
    summary = upload(app, read_table(("text\n" + "\n".join(f"Step {i} of a long walk"
                                                           for i in range(50)) + "\n").encode(),
                                     "walk.csv"), "walk")
    lease = queue.claim(app.db, "test-worker").lease
    handle = open_corpus(app, "walk", require_vectors=False)
    try:
        page.goto(f"{url}/?job={summary.job_id}")
        for done in range(10, 50, 10):  # a batch of 10: vectors committed, then reported
            with app.db.session() as s:
                rows = repo.documents_missing_embedding(s, handle.corpus_id, handle.model.id,
                                                        0, 10)
                repo.save_embeddings(s, handle.corpus_id, handle.model.id,
                                     [d for d, _ in rows], np.ones((len(rows), 384), np.float32))
            queue.progress(app.db, lease, done, 50, f"Step 2 of 2: embedded {done} of 50")
            page.wait_for_function(BAR_AND_ROW, arg=["walk", str(done)], polling="raf",
                                   timeout=WAIT)
        assert page.evaluate("window.longest") <= MOST_FRAMES_APART
    finally:
        queue.finish(app.db, lease, "cancelled")


def test_a_full_session_requests_only_the_app_itself(served, page):
    url, _browser, _app = served
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    page.goto(f"{url}/")
    idle(page)
    for name in ("Search", "Duplicates", "Clusters", "Models", "Jobs", "Upload"):
        page.locator('[data-testid="stSidebarNavLink"]', has_text=name).first.click()
        page.get_by_role("heading", name=name).first.wait_for(timeout=WAIT)
        idle(page)
    page.goto(f"{url}/search?corpus=notes&q=a+cat+on+a+sofa")
    page.locator(".st-key-hit-1").wait_for(timeout=WAIT)
    page.locator(".st-key-hit-1").get_by_role("button", name="Document").click()
    page.get_by_text("Id (the copy button is at the right)").wait_for(timeout=WAIT)
    idle(page)
    hosts = {urlsplit(u).netloc for u in seen if urlsplit(u).scheme in ("http", "https", "ws",
                                                                       "wss")}
    assert hosts == {urlsplit(url).netloc}, sorted(hosts)
    assert any(u.startswith(f"{url}/") for u in seen)


def test_an_address_that_names_no_page_says_so(served, page):
    url, _browser, _app = served
    page.goto(f"{url}/serach?corpus=notes")
    page.get_by_text("There is no page at /serach").wait_for(timeout=WAIT)
    page.goto(f"{url}/search?corpus=notes")  # a page that exists: nothing said
    page.get_by_role("heading", name="Search").wait_for(timeout=WAIT)
    idle(page)
    assert page.get_by_text("There is no page at").count() == 0


def test_a_page_named_in_another_case_opens_that_page(served, page):
    """People type a page's name as the sidebar writes it: /Jobs opens the Jobs page (it
    said "There is no page at /Jobs" and showed the Upload page)."""
    url, _browser, _app = served
    page.goto(f"{url}/Jobs")
    page.get_by_role("heading", name="Jobs").first.wait_for(timeout=WAIT)
    idle(page)
    assert urlsplit(page.url).path.endswith("/jobs")
    assert page.get_by_text("There is no page at").count() == 0


def test_the_next_upload_defaults_to_the_corpus_in_use(served, page, tmp_path):
    """Searched in 'news', then an upload: it offers 'news', not a new corpus named after the
    file (a newcomer split the pile and searched the wrong half)."""
    url, _browser, _app = served
    page.goto(f"{url}/search?corpus=news")
    page.get_by_label("Query").wait_for(timeout=WAIT)
    idle(page)
    note = tmp_path / "meeting.md"
    note.write_text("# Minutes\n\nThe committee met on Tuesday.")
    page.goto(f"{url}/upload")
    page.get_by_role("heading", name="Upload").wait_for(timeout=WAIT)
    idle(page)
    pick_files(page, str(note), "Add and embed")
    assert page.get_by_role("radio", name="An existing corpus").is_checked()
    picker = page.get_by_test_id("stSelectbox").filter(has_text="Corpus").last
    assert picker.locator("input").input_value().startswith("news")
    assert page.get_by_label("New corpus name").count() == 0


def test_a_hit_is_judged_with_the_keyboard_alone(served, page):
    """The Relevant / Not relevant switch of a hit is reached with Tab and set with Space, and
    its name says which hit and which query it judges (every hit's was "Your judgement")."""
    import re

    from searchapp.judgements import service as judgements

    url, _browser, app = served
    page.goto(f"{url}/search?corpus=notes")
    query = "a dog playing fetch"
    search_for(page, query)
    hit = page.locator(".st-key-hit-1")
    group = hit.get_by_role("radiogroup", name=re.compile(
        rf"Your judgement of '.+' for '{query}'"))
    group.wait_for(timeout=WAIT)  # drawn with the hit's other controls, just after its text
    doc = re.search(r"of '(.+)' for", group.get_attribute("aria-label")).group(1)
    hit.get_by_role("button", name="On the map").focus()
    for _ in range(12):  # Tab along the hit's controls to its switch
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.innerText.trim()") == "Relevant":
            break
    assert page.evaluate("document.activeElement.getAttribute('role')") == "radio"
    page.keyboard.press("Space")
    deadline = time.monotonic() + WAIT / 1000
    while time.monotonic() < deadline and not any(
            j.a == doc and j.label == 1 for j in judgements.list_judgements(app, "notes")):
        page.wait_for_timeout(100)
    [judged] = [j for j in judgements.list_judgements(app, "notes") if j.a == doc]
    assert judged.label == 1 and judged.query == query
    judgements.remove(app, "notes", judged.id)
