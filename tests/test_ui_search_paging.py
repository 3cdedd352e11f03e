"""The Search page draws one page of hits at any k, and a judgement click does not search
again (Streamlit AppTest on a real corpus, the bundled encoder, SQLite and hnswlib)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import work
from searchapp.judgements import service
from searchapp.ui.paging import PAGE_SIZE

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "search.py"
TOPICS = ["rain", "dogs", "trains", "coffee", "chess", "gardens"]
DOCS = 70
CSV = "id,text\n" + "".join(f"d-{i},Note {i} about {TOPICS[i % 6]} and more {TOPICS[i % 5]}\n"
                            for i in range(DOCS))


@pytest.fixture(autouse=True)
def corpus(ui_resources, app):
    upload(app, read_table(CSV.encode(), "notes.csv"), "notes")
    assert work(app, stop_when_idle=True) == 1


@pytest.fixture
def searches(monkeypatch) -> list[int]:
    """The k of every search the page runs (the real search, counted)."""
    from searchapp.ui import search_view

    calls, real = [], search_view.search_with_answers
    monkeypatch.setattr(search_view, "search_with_answers",
                        lambda *a, **kw: calls.append(kw["k"]) or real(*a, **kw))
    return calls


def shown_ids(at: AppTest) -> list[str]:
    return [c.value.split(" · ")[0].removeprefix("id ").replace("\\", "") for c in at.caption
            if c.value.startswith("id ")]  # the ids as typed (the caption escapes them)


def searched(k: int) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"corpus": "notes", "q": "rain and dogs", "mode": "semantic",
                            "k": str(k)})
    at.run()
    assert not at.exception
    return at


def test_k_results_are_drawn_one_page_at_a_time(searches):
    at = searched(60)
    first = shown_ids(at)
    assert len(first) == PAGE_SIZE and searches == [60]
    assert any(c.value.startswith(f"Results 1–{PAGE_SIZE}. 60 in all") for c in at.caption)
    at.button(key="search-next").click().run()
    second = shown_ids(at)
    assert len(second) == PAGE_SIZE and not set(first) & set(second)
    at.button(key="search-next").click().run()  # the last page: 60 = 3 pages, Next disabled
    assert len(shown_ids(at)) == PAGE_SIZE and at.button(key="search-next").disabled
    assert searches == [60], "turning pages searched again"
    at.query_params["like"] = "d-3"  # "More like this": the id in code, not escaped
    at.run()
    assert any("Documents most like** `d-3`" in m.value for m in at.markdown), \
        [m.value for m in at.markdown][:3]


def test_a_judgement_click_stores_it_without_searching_again(app, searches):
    at = searched(1000)  # the whole corpus: still one page drawn
    assert len(shown_ids(at)) == PAGE_SIZE
    top = shown_ids(at)[0]
    at.button_group(key="mark-hit-1").set_value("Relevant").run()
    assert not at.exception
    assert [(j.query, j.a, j.label) for j in service.list_judgements(app, "notes")] == \
        [("rain and dogs", top, 1)]
    assert searches == [1000], "the click searched again"
    assert shown_ids(at)[0] == top
    at.button(key="FormSubmitter:search-form-Search").click().run()  # a new click: searched
    assert searches == [1000, 1000]
