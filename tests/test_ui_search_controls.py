"""The Search page's mode switch, filter builder and snippets (Streamlit AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.corpora.ingest import read_table
from searchapp.corpora.service import upload
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
    at.text_input(key="search-query").input(query)
    at.radio(key="search-mode").set_value(mode)
    for i, (column, op, value) in enumerate(filters):
        at.selectbox(key=f"filter-col-{i}").set_value(column)
        at.selectbox(key=f"filter-op-{i}").set_value(op)
        at.text_input(key=f"filter-value-{i}").input(value)
    at.button[0].click().run()
    assert not at.exception
    return at


def result_ids(at: AppTest) -> list[str]:
    return [c.value.split(" · ")[0].removeprefix("id ") for c in at.caption
            if c.value.startswith("id ")]


def test_words_mode_with_filters_on_text_and_number(app):
    at = run_search("rain city", "lexical", ("kind", "=", "news"), ("year", ">=", "2023"))
    assert not at.error
    assert result_ids(at) == ["a2"]
    first = at.markdown[0].value
    assert first.startswith("**1.**") and "**rain**" in first and "**city**" in first
    assert any("words #1" in c.value for c in at.caption)


def test_document_markup_stays_text_and_bad_filters_are_messages(app):
    at = run_search("umbrella", "hybrid")
    card = next(m.value for m in at.markdown if "umbrella" in m.value)
    assert "\\<b\\>" in card and "\\*\\*bring\\*\\*" in card  # escaped, never rendered
    at = run_search("rain", "hybrid", ("kind", ">", "news"))
    assert any("compares numbers or dates" in e.value for e in at.error)


def test_marked_markdown_escapes_everything_but_the_marks():
    from searchapp.search.service import SearchHit

    hit = SearchHit("x", "", 1.0, snippet="[link](http://x) ERR-7", highlights=[(17, 20)])
    assert marked_markdown(hit) == "\\[link\\]\\(http\\://x\\) **ERR**\\-7"
