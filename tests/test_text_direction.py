"""Issue 48, item 4: text of right-to-left and CJK scripts shown right wherever the app shows it.

Each paragraph of every page takes its own direction (``ui/common.TEXT_DIRECTION``, drawn by
``app.py``), the reader view marks its text ``dir="auto"``, the map's hovers and names isolate
document text (``base/bidi``), a Japanese snippet or title is as long on screen as an English
one (``base/text_width``: limits in columns), and a CSV download opens in Excel as UTF-8 (a
byte order mark). The browser side (an Arabic snippet laid out right to left in Chromium) is
in ``test_browser_languages.py``.
"""

from __future__ import annotations

import ast
import io

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from searchapp.base.bidi import FSI, PDI
from searchapp.base.text_width import char_columns, chars_within, columns
from searchapp.corpora.csv_safe import safe_csv, spreadsheet_bytes
from searchapp.corpora.reading import Reading, layout_blocks
from searchapp.intake.ingest import read_table
from searchapp.search.service import SearchHit
from searchapp.search.snippets import WIDTH, make_snippet
from searchapp.ui.charts_clusters import cluster_map, hover_texts
from searchapp.ui.common import TEXT_DIRECTION, rtl_cells
from searchapp.ui.results import SNIPPET_CHARS, TITLE_CHARS, marked, title_and_body, title_of
from searchapp.web.reader import page_html
from tests.conftest import REPO

ARABIC = "كيف أعيد تعيين كلمة المرور الخاصة بي؟ اضغط على الزر في صفحة الإعدادات."
JAPANESE = ("バックアップは pg_dump で作成し、psql で復元します。データベースの全体を保存するには、"
            "サーバーを停止せずに実行できます。復元の前に、新しいデータベースを作成してください。")
ENGLISH = ("The backup is made with pg_dump and restored with psql. To keep the whole "
           "database, run it without stopping the server. Create a new database first.")


# ---- pages: each paragraph in its own direction --------------------------------------------
def test_every_page_styles_paragraphs_in_their_own_direction(ui_resources):
    at = AppTest.from_file(REPO / "app.py", default_timeout=60).run()
    assert not at.exception
    assert TEXT_DIRECTION in [m.value for m in at.sidebar.markdown]
    assert "unicode-bidi: plaintext" in TEXT_DIRECTION and "text-align: start" in TEXT_DIRECTION
    assert TEXT_DIRECTION not in [m.value for m in at.main.markdown], "no row of the page"


def test_an_arabic_hit_keeps_its_text_whole_and_escaped():
    hit = SearchHit("ar-1", ARABIC + "\n" + ARABIC, 0.8, snippet=ARABIC + "\n" + ARABIC,
                    highlights=[(4, 8)])
    title, body = title_and_body(hit)
    assert "كيف" in title and "**" in title  # the query's word bold inside the Arabic title
    assert body.replace("\\", "").startswith("كيف")


# ---- lengths in columns: Japanese as long on screen as English ------------------------------
def test_a_japanese_snippet_is_as_long_on_screen_as_an_english_one():
    page = (JAPANESE * 40) + "目的の文はここにあります。" + (JAPANESE * 40)
    got = make_snippet(page, ["目的の文はここにあります"])
    assert 100 <= len(got.text) <= 170, len(got.text)  # ~150 characters, not 300, nor 3
    assert columns(got.text) <= WIDTH + 4
    english = make_snippet(ENGLISH * 40, ["server"])
    assert 250 <= len(english.text) <= WIDTH + 2  # English: as before


def test_a_japanese_snippet_starts_after_a_clause_mark_not_inside_a_word():
    filler = "データベースの全体を保存するには、サーバーを停止せずに実行できます。" * 20
    page = filler + "復元には psql を使います。" + filler
    got = make_snippet(page, ["psql"], span=(0, len(page)))
    body = got.text.strip("…")
    assert got.text.startswith("…") and got.text.endswith("…") and "psql" in body
    at = page.find(body)
    assert page[at - 1] in "。、" and body[-1] in "。、", "cut just after clause marks"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([JAPANESE, ENGLISH, ARABIC, "中文的句子很长，没有空格。", "\n"]),
                min_size=1, max_size=30), st.sampled_from(["復元", "server", "كلمة", "空格"]))
def test_a_snippet_never_takes_more_columns_than_its_width(parts, word):
    text = " ".join(parts)
    got = make_snippet(text, [word])
    assert columns(got.text) <= WIDTH + 2  # the text and its two "…"
    assert got.text.strip("…").strip() in text


def test_titles_and_list_snippets_count_columns():
    assert columns(title_of(JAPANESE * 3)) <= TITLE_CHARS + 1
    assert len(title_of(JAPANESE * 3)) >= TITLE_CHARS // 2 - 5
    assert title_of(ENGLISH) == ENGLISH[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"  # as before
    shown = marked(JAPANESE * 5, [])
    assert columns(shown.replace("\\", "")) <= SNIPPET_CHARS + 1


# ---- the map and the reader view --------------------------------------------------------------
def test_the_maps_hovers_and_names_isolate_document_text():
    frame = pd.DataFrame({"id": ["a", "b"], "cluster": [0, 0], "label": ["كلمة المرور"] * 2,
                          "x": [0.0, 1.0], "y": [1.0, 0.0], "text": [ARABIC, "<b>x</b>"],
                          "highlight": [False, False]})
    arabic, english = hover_texts(frame)
    assert arabic == f"<b>a</b> · {FSI}كلمة المرور{PDI}<br>{FSI}{ARABIC}{PDI}"
    assert english == f"<b>b</b> · {FSI}كلمة المرور{PDI}<br>&lt;b&gt;x&lt;/b&gt;"
    fig, _ = cluster_map(frame, {0: 2})
    names = next(t for t in fig.data if t.name == "cluster names")
    assert all(n.startswith(FSI) and n.endswith(PDI) for n in names.text)
    frame["label"] = "backup"
    fig, _ = cluster_map(frame, {0: 2})
    assert next(t for t in fig.data if t.name == "cluster names").text == ("backup",)


def test_the_reader_view_marks_its_text_dir_auto():
    text = "عنوان\n" + ARABIC + "\n\n" + ENGLISH
    reading = Reading("c", "ar-1", "عنوان", text, layout_blocks(text, None), False)
    html = page_html(reading, (6, 9))
    assert '<h1 dir="auto">عنوان</h1>' in html
    assert '<div class="text" dir="auto">' in html and "unicode-bidi: plaintext" in html


# ---- CSV for Excel ----------------------------------------------------------------------------
def test_a_csv_download_is_utf8_with_a_bom_and_reads_back_whole():
    frame = pd.DataFrame({"id": ["ja", "ar"], "text": [JAPANESE, ARABIC]})
    data = spreadsheet_bytes(safe_csv(frame))
    assert data.startswith(b"\xef\xbb\xbf")  # Excel reads UTF-8 only after this mark
    assert data[3:].decode("utf-8").startswith("id,text")
    back = pd.read_csv(io.BytesIO(data))
    assert list(back.columns) == ["id", "text"] and back.text.tolist() == [JAPANESE, ARABIC]


def test_every_csv_download_of_the_pages_carries_the_mark():
    """The pages offer CSV only through ``ui.common.csv_download``, whose one
    ``download_button`` makes its bytes with ``spreadsheet_bytes``."""
    buttons, offers = [], 0
    for path in sorted((REPO / "searchapp" / "ui").rglob("*.py")):
        for call in ast.walk(ast.parse(path.read_text())):
            if not isinstance(call, ast.Call):
                continue
            name = getattr(call.func, "attr", getattr(call.func, "id", ""))
            offers += name == "csv_download"
            if name == "download_button" and "text/csv" in ast.unparse(call):
                buttons.append((path.name, ast.unparse(call.args[1])))
    assert buttons == [("common.py", "lambda: spreadsheet_bytes(make_csv())")]
    assert offers >= 7


def test_a_downloaded_csv_goes_back_in_through_ingest(tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes(spreadsheet_bytes(safe_csv(pd.DataFrame({"id": ["ja"], "text": [JAPANESE]}))))
    table = read_table(path)
    assert table.columns == ["id", "text"] and table.head[0][1] == {"id": "ja", "text": JAPANESE}


# ---- the data grids: drawn on a canvas, their right-to-left cells isolated ---------------------
def test_the_duplicates_page_isolates_right_to_left_cells_only(ui_resources, bundled_encoder):
    from searchapp.jobs.worker import work
    from searchapp.ui.resources import get_app
    from tests.test_duplicates import make_corpus

    app = get_app()
    make_corpus(app, bundled_encoder, "mixed", "id,text\n"
                f"a1,{ARABIC}\na2,\"  {ARABIC}  \"\n"
                "e1,How do I reset my password?\ne2,\"  how do I   reset my password\"\n")
    at = AppTest.from_file(REPO / "searchapp" / "ui" / "pages" / "duplicates.py",
                           default_timeout=60).run()
    next(b for b in at.button if b.label.startswith("Find duplicates")).click().run()
    assert work(app, stop_when_idle=True) == 1
    at.run()
    assert not at.exception
    pairs = at.dataframe[0].value
    texts = {a: (ta, tb) for a, ta, tb in zip(pairs["a"], pairs["a_text"], pairs["b_text"],
                                               strict=True)}
    [arabic] = [t for a, t in texts.items() if a.startswith("a")]
    [english] = [t for a, t in texts.items() if a.startswith("e")]
    assert all(t.startswith(FSI) and t.endswith(PDI) and ARABIC in t for t in arabic), arabic
    assert not any(FSI in t or PDI in t for t in english), english
    shown = at.dataframe[1].value["representative"].tolist()  # the groups
    assert sorted(t.startswith(FSI) for t in shown) == [False, True], shown


def test_rtl_cells_change_only_right_to_left_text():
    frame = pd.DataFrame({"id": ["ar", "ja", "en"], "text": [ARABIC, JAPANESE, ENGLISH],
                          "n": [1, 2, 3]})
    got = rtl_cells(frame, ["text", "n", "missing"])
    assert got.text.tolist() == [FSI + ARABIC + PDI, JAPANESE, ENGLISH]
    assert got.n.tolist() == [1, 2, 3] and frame.text[0] == ARABIC  # a copy


# ---- the CLI: columns of a table line up whatever the script ------------------------------------
def test_the_duplicates_table_lines_up_japanese_and_english(app, bundled_encoder, monkeypatch,
                                                             capsys):
    from searchapp.cli import main
    from tests.test_duplicates import make_corpus

    japanese = "パスワードを忘れたときは、設定画面からリセットしてください。"
    make_corpus(app, bundled_encoder, "mixed", "id,text\n"
                f"j1,{japanese}\nj2,\"  {japanese}  \"\n"
                "e1,How do I reset my password?\ne2,\"  how do I   reset my password\"\n")
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    assert main(["duplicates", "--corpus", "mixed", "--threshold", "0.9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("SCORE"))
    table = lines[head:head + 3]
    starts = {columns(line[:line.rindex(word)]) for line, word in
              zip(table, ["B_TEXT", "パスワード", "how do"], strict=True)}
    assert len(starts) == 1, table  # B_TEXT's column starts at the same place on each line
    assert all(columns(line) <= 130 for line in table), table


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.integers(0, 100))
def test_columns_and_the_characters_within_a_width_agree(text, width):
    assert columns(text) == sum(2 if char_columns(c) == 2 else 1 for c in text)
    fits = chars_within(text, width)
    assert columns(text[:fits]) <= width
    assert fits == len(text) or columns(text[:fits + 1]) > width
