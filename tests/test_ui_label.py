"""The Label page, the review tab and the marks through AppTest: answers stored as judgements."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.judgements import service
from searchapp.pairs.threshold import threshold_for
from searchapp.ui.resources import get_app
from tests.test_duplicates import FAQ, make_corpus

PAGES = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages"


@pytest.fixture(autouse=True)
def fresh_resources(ui_resources):
    return ui_resources


@pytest.fixture
def page_app(bundled_encoder):
    app = get_app()  # the same cached App the page script gets (same process)
    make_corpus(app, bundled_encoder, "faq", FAQ)
    return app


def page(name: str) -> AppTest:
    return AppTest.from_file(PAGES / f"{name}.py", default_timeout=60)


def click(at: AppTest, label: str) -> AppTest:
    [button] = [b for b in at.button if b.label == label]
    return button.click().run()


def shown_ids(at: AppTest) -> list[str]:
    return [c.value.removeprefix("id ") for c in at.caption if c.value.startswith("id ")]


def test_yes_no_skip_and_undo_store_and_take_back_judgements_one_item_at_a_time(page_app):
    at = page("label").run()
    assert not at.exception
    at.segmented_control(key="label-kind").set_value("Duplicate pairs").run()
    first = shown_ids(at)
    assert len(first) == 2 and "Are these two duplicates?" in at.markdown[0].value + \
        "".join(m.value for m in at.markdown)
    at = click(at, "Yes")
    [j] = service.list_judgements(page_app, "faq")
    assert (j.a, j.b, j.label, j.source) == (*sorted(first), 1, "label")
    second = shown_ids(at)
    assert second != first
    at = click(at, "Skip")
    third = shown_ids(at)
    assert third not in (first, second) and len(service.list_judgements(page_app, "faq")) == 1
    at = click(at, "No")
    assert [x.label for x in service.list_judgements(page_app, "faq")] == [1, 0]
    at = click(at, "Undo")
    assert shown_ids(at) == third and len(service.list_judgements(page_app, "faq")) == 1
    at = click(at, "Undo")  # the skip: the second item is back
    assert shown_ids(at) == second
    assert any("This session: 1 yes · 0 no · 0 skipped" in c.value for c in at.caption)
    assert any(m.label == "Judgements in this corpus" and m.value == "1" for m in at.metric)


def test_the_search_page_marks_a_hit_relevant_and_remembers_the_query(page_app):
    at = page("search").run()
    at.text_input[0].input("reset my password")
    at.button[0].click().run()  # the form's submit button
    assert not at.exception and not at.error
    marks = [w for w in at.segmented_control if w.key and w.key.startswith("mark-hit-")]
    assert marks, "no relevance marks on the hits"
    marks[0].set_value("Relevant").run()
    [j] = service.list_judgements(page_app, "faq")
    assert (j.kind, j.query, j.label, j.source) == ("query", "reset my password", 1, "search")
    marks = [w for w in at.segmented_control if w.key == marks[0].key]
    marks[0].set_value(None).run()  # choosing it again takes the judgement back
    assert service.list_judgements(page_app, "faq") == []


def duplicates_page(tab: str | None = None) -> AppTest:
    at = page("duplicates")
    if tab:
        at.session_state["dup-tab"] = tab
    return at.run()


def test_the_review_tab_asks_the_borderline_pairs_by_keyboard_buttons(page_app):
    from searchapp.duplicates import review
    from searchapp.jobs.worker import run_until_done

    at = duplicates_page("Review")
    assert not at.exception
    assert any(b.label == "Find them and start reviewing" for b in at.button)
    run_until_done(page_app, review.request_review_mining(page_app, "faq", 0.8, 10))
    at = duplicates_page("Review")
    first = shown_ids(at)
    expected = review.review_queue(page_app, "faq", 0.8, 10, n=1).items[0]
    assert first == [expected.a, expected.b]
    at = click(at, "Duplicate")
    [j] = service.list_judgements(page_app, "faq")
    assert (j.a, j.b, j.label, j.source) == (expected.a, expected.b, 1, "review")
    assert shown_ids(at) != first
    at = click(at, "Undo")
    assert shown_ids(at) == first and service.list_judgements(page_app, "faq") == []


def test_a_pair_is_judged_in_the_pairs_table_and_a_group_is_confirmed(page_app):
    from searchapp import duplicates as dup

    dup.find_duplicates(page_app, "faq", threshold=0.8, k=10)
    at = duplicates_page()
    [table] = [t for t in at.data_editor if t.key == "dup-pairs-marks"]
    row = table.value.iloc[0]
    at.session_state["dup-pairs-marks"] = {"edited_rows": {0: {"judgement": "not duplicate"}},
                                           "added_rows": [], "deleted_rows": []}
    at.run()
    [j] = service.list_judgements(page_app, "faq")
    assert ({j.a, j.b}, j.label, j.source) == ({row["a"], row["b"]}, 0, "duplicates")
    at = click(at, "Confirm this group")
    group = dup.find_duplicates(page_app, "faq", threshold=0.8, k=10).top_groups(1)[0]
    pairs = {(x.a, x.b): x.label for x in service.list_judgements(page_app, "faq")
             if x.source == "review"}
    assert len(pairs) == group.size - 1 and set(pairs.values()) == {1}
    from searchapp.judgements.groups import confirmed_groups
    assert confirmed_groups(page_app, "faq")[0].size == group.size


def test_the_calibration_tab_offers_the_threshold_for_a_precision_from_judgements(page_app):
    from searchapp import duplicates as dup
    from tests.test_review import judge_everything_by_rule

    judge_everything_by_rule(page_app, 0.85)
    dup.find_duplicates(page_app, "faq", threshold=0.6, k=10)
    at = duplicates_page()
    assert any("78 judged pairs" in m.value for m in at.markdown)
    [use] = [b for b in at.button if b.label.startswith("Use ") and "as the threshold" in
             b.label and b.key == "judged-use"]
    threshold = float(use.label.split()[1])
    use.click().run()
    assert threshold_for(page_app, "all-MiniLM-L6-v2") == (threshold, "calibrated")


def test_a_match_of_a_new_question_is_judged_in_its_table(page_app):
    at = duplicates_page()
    at.text_area(key="dup-question").set_value("How can I reset my password?")
    [check] = [b for b in at.button if b.label == "Check"]
    at = check.click().run()
    [table] = [t for t in at.data_editor if t.key == "dup-check-marks"]
    first = table.value.iloc[0]["id"]
    at.session_state["dup-check-marks"] = {"edited_rows": {0: {"judgement": "relevant"}},
                                           "added_rows": [], "deleted_rows": []}
    at.run()
    [j] = service.list_judgements(page_app, "faq")
    assert (j.kind, j.query, j.a, j.label) == ("query", "How can I reset my password?", first, 1)


def test_the_app_lists_the_label_page_and_it_points_to_upload_without_a_corpus():
    at = AppTest.from_file(PAGES.parents[2] / "app.py", default_timeout=60).run()
    at.switch_page("searchapp/ui/pages/label.py").run()
    assert not at.exception and at.title[0].value == "Label"
    assert [link.proto.label for link in at.get("page_link")] == [
        "Guide: Judgements, evaluation and learning", "Upload"]
