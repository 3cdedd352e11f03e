"""The Duplicates page through AppTest: a real database, the bundled encoder, jobs run inline."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.duplicates import calibration as cal
from searchapp.jobs import queue
from searchapp.jobs.worker import work
from searchapp.pairs.threshold import threshold_for
from searchapp.ui.resources import get_app
from tests.test_duplicates import FAQ, MODEL, make_corpus

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "duplicates.py"
PAIRS = ("sentence1,sentence2,label\n"
         "How do I reset my password?,How can I change my password?,1\n"
         "What is the capital of France?,Which city is the capital of France?,1\n"
         "How do I reset my router?,How do I restart my router?,1\n"
         "How do I cook pasta?,What is the best way to boil spaghetti?,1\n"
         "How do I reset my password?,How do I reset my router?,0\n"
         "My cat will not eat its food.,The stock market fell sharply today.,0\n"
         "What is the capital of France?,What is the capital of Spain?,0\n"
         "How do I cook pasta?,How do I cook rice?,0\n")


@pytest.fixture(autouse=True)
def fresh_resources(ui_resources):
    return ui_resources


@pytest.fixture
def page_app(bundled_encoder):
    app = get_app()  # the same cached App the page script gets (same process)
    make_corpus(app, bundled_encoder, "faq", FAQ)
    return app


def page() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=60)


def button(at: AppTest, label: str):
    found = [b for b in at.button if b.label.startswith(label)]
    assert found, f"no button {label!r}; buttons: {[b.label for b in at.button]}"
    return found[0]


def test_no_corpus_says_where_to_start():
    at = page().run()
    assert not at.exception
    assert "Upload page" in at.info[0].value


def test_mine_through_a_job_then_filter_without_one(page_app, fresh_resources):
    at = page().run()
    assert not at.exception
    assert at.slider[0].value == 0.8  # the bundled model's default threshold
    assert "default threshold of all-MiniLM-L6-v2: **0.800**" in at.caption[0].value
    button(at, "Find duplicates").click().run()
    assert fresh_resources, "enqueuing must make sure a worker runs"
    [job] = [j for j in queue.recent(page_app.db) if j.kind == "duplicates"]
    assert job.status == "queued" and job.payload == {"corpus": "faq", "threshold": 0.8, "k": 10}
    assert work(page_app, stop_when_idle=True) == 1
    at.run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Pairs"] == "11" and metrics["Exact duplicates"] == "1"
    assert metrics["Groups"] == "3"
    pairs = at.dataframe[0].value
    assert len(pairs) == 11 and pairs["exact"].iloc[0] and not pairs["exact"].iloc[1:].any()
    assert pairs["score"].iloc[1:].is_monotonic_decreasing
    _, groups, members = (frame.value for frame in at.dataframe)  # pairs, groups, one group
    assert groups["size"].tolist() == [5, 2, 2] and len(members) == 5
    assert at.selectbox(key="dup-group-open").options[0].startswith("1 · 5 · ")
    at.selectbox(key="dup-group-open").set_value(2).run()
    assert len(at.dataframe[2].value) == 2
    assert len(at.get("download_button")) == 2
    at.slider[0].set_value(0.9).run()  # above the stored floor: filtered, no new job
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Pairs"] == "4"
    assert [j.kind for j in queue.recent(page_app.db)].count("duplicates") == 1
    button(at, "Back to 0.80").click().run()
    assert at.slider[0].value == 0.8


def test_a_lower_threshold_mines_again_by_itself_keeping_the_old_results(page_app):
    at = page().run()
    button(at, "Find duplicates").click().run()
    work(page_app, stop_when_idle=True)
    at.run()
    assert {m.label: m.value for m in at.metric}["Pairs"] == "11"
    at.slider[0].set_value(0.6).run()  # below the stored floor: needs mining, no click
    assert not at.exception and not at.error
    jobs = [j for j in queue.recent(page_app.db) if j.kind == "duplicates"]
    assert len(jobs) == 2 and jobs[0].status == "queued" and jobs[0].payload["threshold"] == 0.6
    assert "Finding duplicates in 'faq' at 0.600" in at.get("progress")[0].proto.text
    assert any("Until they arrive, the results at threshold 0.800" in c.value
               for c in at.caption)
    assert {m.label: m.value for m in at.metric}["Pairs"] == "11", "old results stay visible"
    work(page_app, stop_when_idle=True)
    at.run()
    assert not at.get("progress")
    assert int({m.label: m.value for m in at.metric}["Pairs"]) > 11


def test_check_a_question_and_add_it(page_app, bundled_encoder):
    page_app.install_encoder(MODEL, bundled_encoder)
    at = page().run()
    at.text_area(key="dup-question").input("How can I reset my password?")
    button(at, "Check").click().run()
    assert not at.exception
    assert "likely duplicate" in at.warning[0].value
    found = next(t.value for t in at.dataframe if "p1" in set(t.value["id"]))
    assert {"p1", "p2", "p3"} <= set(found["id"]) and (found["score"] >= 0.8).all()
    at.text_area(key="dup-question").input("Do penguins live at the north pole?")
    button(at, "Check").click().run()
    assert "looks new" in at.success[0].value
    # the closest ones still show, with their cosines below the threshold, best first
    assert any("Closest below the threshold" in m.value for m in at.markdown)
    near = at.dataframe[-1].value
    assert len(near) == 3 and (near["score"] < 0.8).all()
    assert near["score"].tolist() == sorted(near["score"], reverse=True)
    button(at, "Add it to the corpus").click().run()
    assert not at.exception
    assert "embedding job" in at.success[-1].value
    assert queue.recent(page_app.db, 1)[0].kind == "embed"


def test_errors_are_shown_not_raised(bundled_encoder):
    app = get_app()
    make_corpus(app, bundled_encoder, "tiny", "id,text\na,Only one question here\n")
    at = page().run()
    assert not at.exception
    assert "only 1 embedded document" in at.error[0].value


def test_calibration_result_shows_the_curve_and_can_be_used(page_app, bundled_encoder, tmp_path):
    page_app.install_encoder(MODEL, bundled_encoder)
    path = tmp_path / "pairs.csv"
    path.write_text(PAIRS, encoding="utf-8")
    job_id = queue.enqueue(page_app.db, "calibrate",
                           {"model": MODEL, "path": str(path), "filename": "pairs.csv"})
    work(page_app, stop_when_idle=True)
    at = page()
    at.session_state["dup-calibrate-job"] = job_id
    at.run()
    assert not at.exception
    assert any("AP **" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) >= 1
    use = button(at, "Use ")
    best = cal.Calibration(**queue.get(page_app.db, job_id).result).threshold
    assert f"{best:.3f}" in use.label
    use.click().run()
    assert not at.exception
    assert threshold_for(page_app, MODEL) == (best, "calibrated")
    assert at.slider[0].value == round(best, 3)  # the slider starts at the calibrated value
    assert "calibrated threshold of all-MiniLM-L6-v2" in at.caption[0].value
