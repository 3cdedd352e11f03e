"""The whole path in a real browser: upload a CSV, wait for the worker, search, calibrate.

Starts the app with ``streamlit run`` on a free port (data folder in tmp),
drives Debian's Chromium through Playwright, and leaves a screenshot in
``artifacts/``. Stopping the app must stop the worker it spawned; both are
stopped by pid at the end whatever happens.
Needs /usr/bin/chromium (``apt-get install chromium``); skips without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import (
    ARTIFACTS,
    chromium,
    pick_files,
    playwright_or_skip,
    read_worker_pid,
    served_app,
    stop,
    wait_gone,
)

SENTENCES = [
    "A man is playing a guitar on stage.",
    "The chef is slicing vegetables in the kitchen.",
    "Children are building a sandcastle at the beach.",
    "A dog is chasing a ball across the park.",
    "The stock market fell sharply on Monday.",
    "She is reading a novel by the fireplace.",
    "Heavy rain flooded the streets of the city.",
    "The team celebrated winning the championship.",
    "A plane is taking off from the airport.",
    "He repaired the flat tire on his bicycle.",
    "Students are writing an exam in the classroom.",
    "A woman paints a landscape in watercolours.",
]
QUERY, EXPECTED = "a puppy runs after a ball on the grass", SENTENCES[3]
LABELLED_PAIRS = [  # sentence1, sentence2, label (1 = duplicate) for the calibration upload
    ("How do I reset my password?", "How can I change my forgotten password?", 1),
    ("Where is my parcel?", "How can I track my delivery?", 1),
    ("Can I pay by credit card?", "Do you accept credit cards?", 1),
    ("How do I delete my account?", "How can I close my account for good?", 1),
    ("How do I reset my password?", "Do you ship to Canada?", 0),
    ("Where is my parcel?", "Can I pay by credit card?", 0),
    ("How do I delete my account?", "What are your opening hours?", 0),
    ("Do you accept credit cards?", "How can I track my delivery?", 0),
]


@pytest.mark.browser
def test_upload_embed_and_search_in_chromium(tmp_path, data_dir):
    sync_api = playwright_or_skip()
    csv_path = tmp_path / "sentences.csv"
    csv_path.write_text("text\n" + "\n".join(SENTENCES) + "\n", encoding="utf-8")
    pairs_path = tmp_path / "labelled.tsv"
    pairs_path.write_text("sentence1\tsentence2\tlabel\n" + "".join(
        f"{a}\t{b}\t{y}\n" for a, b, y in LABELLED_PAIRS), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    with served_app(data_dir, tmp_path / "streamlit.log") as (app, url):
        with chromium(sync_api) as browser:
            search_and_calibrate(browser.new_page(viewport={"width": 1280, "height": 1000}),
                                 url, csv_path, pairs_path)
        # Stopping the app stops the worker it started (it has no job left to finish).
        worker_pid = read_worker_pid(data_dir)
        assert worker_pid is not None, "the app should have started a worker"
        stop(app.pid)
        assert wait_gone(worker_pid, timeout=30), "the worker outlived the app that started it"


def search_and_calibrate(page, url: str, csv_path: Path, pairs_path: Path) -> None:
    """Upload, wait for the embedding, search, calibrate; a screenshot if anything fails."""
    try:
        page.goto(url)
        page.get_by_role("heading", name="Upload").wait_for(timeout=30_000)
        pick_files(page, str(csv_path), "Upload and embed")
        page.get_by_role("button", name="Upload and embed").click()
        page.get_by_text("Corpus 'sentences': 12 added.").wait_for(timeout=30_000)
        # The worker starts (importing torch, loading the model) and embeds.
        page.get_by_text("Embedding 'sentences': done").wait_for(timeout=120_000)
        page.get_by_role("link", name="Search 'sentences'").click()
        page.get_by_label("Query").fill(QUERY)
        page.get_by_role("button", name="Search").click()
        first = page.locator(".st-key-hit-1")
        first.wait_for(timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "browser-search.png"), full_page=True)
        assert EXPECTED in first.inner_text()
        calibrate_in_browser(page, pairs_path)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "browser-failure.png"), full_page=True)
        raise


def open_tab(page) -> None:
    page.get_by_role("tab", name="Threshold calibration").click()


def calibrate_in_browser(page, pairs_path: Path) -> None:
    """Duplicates page: upload labelled pairs, let the worker score them, adopt the threshold."""
    page.get_by_role("link", name="Duplicates").click()
    open_tab(page)
    pick_files(page, str(pairs_path), "Compute AP and threshold", reopen=open_tab)
    page.get_by_role("button", name="Compute AP and threshold").click()
    page.get_by_text(f"On {len(LABELLED_PAIRS)} pairs").wait_for(timeout=60_000)
    use = page.get_by_role("button", name="as the threshold of all-MiniLM-L6-v2")
    use.click()
    page.locator("strong", has_text="Calibrated threshold of all-MiniLM-L6-v2").wait_for(
        timeout=30_000)
    use.wait_for(state="detached", timeout=30_000)  # the finished job's panel is gone
    page.locator(".stPlotlyChart").first.wait_for(timeout=30_000)  # the stored curve
    page.screenshot(path=str(ARTIFACTS / "browser-calibration.png"), full_page=True)
