"""The Search page's mode switch, filter builder and snippets (Streamlit AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import work
from searchapp.ui.search_controls import marked_markdown

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "search.py"
CSV = ("id,text,kind,year\n"
       "a1,A dog is chasing a ball across the park.,pet,2021\n"
       "a2,Heavy rain flooded the streets of the city.,news,2024\n"
       "a3,Rain is expected in the city tomorrow; <b>**bring**</b> an umbrella.,news,2022\n"
       "a4,Our cat hides from the rain under the porch.,pet,2024\n")


@pytest.fixture(autouse=True)
def corpus(ui_resources, app):
    upload(app, read_table(CSV.encode(), "weather.csv"), "weather")
    assert work(app, stop_when_idle=True) == 1


def run_search(query: str, mode: str, *filters: tuple[str, str, str]) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    for i, (column, op, value) in enumerate(filters):  # live: each change reruns
        at.selectbox(key=f"filter-col-{i}").set_value(column).run()
        at.selectbox(key=f"filter-op-{i}").set_value(op)
        at.selectbox(key=f"filter-value-{i}").set_value(value)  # one of the offered values
    at.text_input(key="search-query").input(query)
    at.radio(key="search-mode").set_value(mode)
    at.button[0].click().run()
    assert not at.exception
    return at


def result_ids(at: AppTest) -> list[str]:
    return [c.value.split(" · ")[0].removeprefix("id ") for c in at.caption
            if c.value.startswith("id ")]


def test_words_mode_with_filters_on_text_and_number(app):
    at = run_search("rain city", "lexical", ("kind", "=", "news"), ("year", ">", "2022"))
    assert not at.error
    assert result_ids(at) == ["a2"]
    first = at.markdown[0].value
    assert first.startswith("**1.**") and "**rain**" in first and "**city**" in first
    assert any("BM25" in m.value for m in at.markdown), "words alone: the BM25 score"


def test_filter_values_are_offered_with_their_counts(app):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.selectbox(key="filter-col-0").set_value("kind").run()
    values = at.selectbox(key="filter-value-0")
    assert values.options == ["news (2)", "pet (2)"]
    at.selectbox(key="filter-col-0").set_value("year").run()
    assert at.selectbox(key="filter-value-0").options == ["2024 (2)", "2021 (1)", "2022 (1)"]


def test_document_markup_stays_text_and_bad_filters_are_messages(app):
    at = run_search("umbrella", "hybrid")
    card = next(m.value for m in at.markdown if "umbrella" in m.value)
    assert "\\<b\\>" in card and "\\*\\*bring\\*\\*" in card  # escaped, never rendered
    at = run_search("rain", "hybrid", ("kind", ">", "news"))
    assert any("compares numbers or dates" in e.value for e in at.error)


def test_marked_markdown_escapes_everything_but_the_marks():
    from searchapp.search.service import SearchHit

    hit = SearchHit("x", "", 1.0, snippet="[link](http://x) ERR-7", highlights=[(17, 20)])
    assert marked_markdown(hit) == "\\[link\\](http\u2060&#58;//x) **ERR**\\-7"


def test_the_rerank_toggle_asks_for_the_corpus_reranker(app):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="search-query").input("rain")
    at.toggle(key="search-rerank").set_value(True)
    at.button[0].click().run()
    assert not at.exception
    assert any("no reranker" in e.value and "train-reranker" in e.value for e in at.error)
    assert result_ids(at) == []
