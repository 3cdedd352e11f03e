"""The Clusters page through AppTest, on a real database (jobs run inline)."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from searchapp.jobs import queue
from searchapp.jobs.worker import work
from searchapp.ui.resources import get_app
from tests.test_clusters import TOPICS, make_corpus, planted

PAGE = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages" / "clusters.py"


@pytest.fixture(autouse=True)
def fresh_resources(ui_resources):
    return ui_resources


def page() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=120)


def values(array) -> list:
    """A figure's array as a list: plotly sends numpy arrays as base64 (``bdata``)."""
    if isinstance(array, dict) and "bdata" in array:
        return np.frombuffer(base64.b64decode(array["bdata"]), np.dtype(array["dtype"])).tolist()
    return list(array)


def point_colours(trace: dict) -> list[str]:
    """Each point's colour: its cluster id looked up in the trace's stepped colour scale."""
    scale = trace["marker"]["colorscale"]
    return [scale[2 * int(c)][1] for c in values(trace["marker"]["color"])]


def figure(at: AppTest, index: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def computed(at: AppTest, projection: str = "pca") -> AppTest:
    """Open the page with PCA, queue the job by the button, run it here, show the result."""
    at.run()
    at.radio(key="clusters.projection").set_value(projection).run()
    at.button(key="clusters.compute").click().run()
    assert not at.exception and not at.error
    assert work(get_app(), stop_when_idle=True) == 1
    return at.run()


def test_without_a_corpus_points_to_upload():
    at = page().run()
    assert not at.exception
    assert "Upload page" in at.info[0].value


def test_compute_map_list_and_open_a_cluster(app):
    vectors, truth, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    at = page().run()
    assert not at.exception and not at.error
    assert "No clusters for these settings yet" in at.info[0].value
    at.selectbox(key="clusters.method").set_value("community").run()  # it keeps outliers apart
    at.radio(key="clusters.projection").set_value("pca").run()
    at.button(key="clusters.compute").click().run()
    [job] = queue.recent(app.db)
    assert (job.kind, job.status) == ("clusters", "queued")
    assert "Queued" in at.get("progress")[0].proto.text  # the page polls the job
    assert work(get_app(), stop_when_idle=True) == 1
    at.run()
    assert not at.exception and not at.error
    assert [m.value for m in at.metric] == [f"{len(texts)}", "4", "6 (5.0%)"]
    assert not any(m.proto.delta for m in at.metric), "a count, not a change: no arrow"

    spec = figure(at)
    clustered, outliers, names, chosen = spec["data"]
    assert (clustered["type"], outliers["type"], names["mode"]) == ("scattergl", "scattergl",
                                                                    "text")
    assert outliers["name"] == "outliers (6)" and len(outliers["text"]) == 6
    assert len(clustered["text"]) + 6 == len(texts) and not chosen.get("text")  # all drawn
    # A colour for every cluster, and each cluster's name written on the map.
    assert len(set(point_colours(clustered))) == 4
    labels = {t.split(" · ", 1)[1].split("<br>")[0] for t in clustered["text"]}
    assert len(labels) == 4 and len(names["text"]) == 4
    assert all(any(name in label for label in labels) for name in names["text"])
    doc_id, label_and_text = clustered["text"][0].split(" · ", 1)
    hover_text = label_and_text.split("<br>", 1)[1]
    assert doc_id.startswith("<b>d") and hover_text in texts

    # Choosing a cluster lists its documents; its top terms are the planted words.
    options = at.selectbox(key="clusters.open").options
    assert len(options) == 5 and options[-1] == "outliers (6)"
    at.selectbox(key="clusters.open").set_value(1).run()
    members = at.dataframe[-1].value
    assert len(members) == 30
    assert any(set(t) <= set(members.text.str.cat(sep=" ").split()) for t in TOPICS)
    at.selectbox(key="clusters.open").set_value(-1).run()
    outliers = at.dataframe[-1].value
    assert sorted(outliers.id) == sorted(f"d{i}" for i in range(len(truth)) if truth[i] < 0)


def test_large_maps_are_sampled_per_cluster_and_say_so(app, monkeypatch):
    from searchapp import clusters as cl

    monkeypatch.setattr(cl, "MAP_MAX_POINTS", 60)
    monkeypatch.setattr(cl, "SAMPLE_FLOOR", 5)
    monkeypatch.setattr("searchapp.clusters.views.SAMPLE_FLOOR", 5)
    vectors, _, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    at = computed(page())
    assert not at.exception
    spec = figure(at)
    clustered, outliers = spec["data"][:2]
    drawn = [*Counter(values(clustered["marker"]["color"])).values(),
             *([len(outliers["text"])] if outliers.get("text") else [])]  # auto: none
    assert sum(drawn) < len(texts)
    assert min(drawn) >= 5, "every cluster stays visible"
    assert any(f"Showing {sum(drawn)} of {len(texts)} documents" in c.value for c in at.caption)
    [image] = spec["layout"]["images"]  # every document, aggregated behind the sample
    assert image["source"].startswith("data:image/png;base64,")


def test_a_large_corpus_gets_a_first_view_while_the_job_runs(app, monkeypatch):
    monkeypatch.setattr("searchapp.clusters.preview.PREVIEW_MIN_DOCUMENTS", 100)
    vectors, _, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    at = page().run()
    at.button(key="clusters.compute").click().run()
    assert not at.exception and not at.error
    assert "Queued" in at.get("progress")[0].proto.text
    assert any(c.value.startswith(f"First view while the full map is computed: {len(texts)} "
                                  f"of {len(texts)} documents") for c in at.caption)
    traces = [t for t in figure(at)["data"] if t["type"] == "scattergl"]
    assert sum(len(t.get("text") or []) for t in traces) == len(texts)
    assert len(set(point_colours(traces[0]))) >= 2
    monkeypatch.setattr("searchapp.clusters.preview.PREVIEW_MIN_DOCUMENTS", 10_000)
    at.run()
    assert not at.get("plotly_chart"), "a small corpus waits for the job alone"


@pytest.mark.slow  # embeds with the bundled model and loads it again for the query
def test_a_search_is_ringed_on_the_map(app):
    """The bundled encoder embeds the corpus and the query; hits get their own trace."""
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from tests.test_clusters import SENTENCES

    rows = [s for group in SENTENCES.values() for s in group]
    csv = "text\n" + "".join(f"\"{s}\"\n" for s in rows)
    upload(app, read_table(csv.encode(), "t.csv"), "topics")
    assert work(get_app(), stop_when_idle=True) == 1
    at = page().run()
    at.selectbox(key="clusters.method").set_value("kmeans").run()
    at.number_input(key="clusters.k").set_value(3).run()
    at = computed(at)
    at.text_input(key="clusters.query").input("who won the game").run()
    assert not at.exception and not at.error
    hits = figure(at)["data"][-1]
    assert hits["name"] == "chosen" and len(hits["text"]) == len(rows)  # k clamps to 12
    table = at.dataframe[0].value
    assert "match" in table.text.iloc[0] or "game" in table.text.iloc[0] \
        or "goals" in table.text.iloc[0]


def test_errors_show_as_messages(app):
    import numpy as np

    make_corpus(app, "one", ["alone"], np.ones((1, 384), np.float32) / np.sqrt(384))
    at = page().run()
    at.radio(key="clusters.projection").set_value("pca").run()
    at.button(key="clusters.compute").click().run()
    assert not at.exception
    assert any("at least 3 embedded documents" in e.value for e in at.error)


def test_a_cluster_is_saved_as_a_search_filter_listed_and_removed(app):
    from searchapp.errors import InvalidParameterError
    from searchapp.search.refine import facet_values

    vectors, _, texts = planted(n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    at = computed(page())
    at.selectbox(key="clusters.open").set_value(1).run()
    size = len(at.dataframe[-1].value)
    at.text_input(key="clusters.filter-name.1").set_value("Second group")
    at.button(key="FormSubmitter:clusters.filter-form.1-Save as a filter").click().run()
    assert not at.exception and not at.error
    assert f'{size:,} documents now have cluster="Second group"' in at.success[0].value
    assert [e.label for e in at.expander] == ["Saved filters (1)"]
    assert facet_values(app, "planted", "cluster") == [("Second group", size)]
    at.button(key="clusters.filter-remove.0").click().run()
    assert not at.exception and not at.error and not at.expander
    with pytest.raises(InvalidParameterError, match="no metadata column 'cluster'"):
        facet_values(app, "planted", "cluster")  # no document has the column any more
    # a column name that a filter cannot be written with is refused, nothing is saved
    at.text_input(key="clusters.filter-column.1").set_value("a=b")
    at.button(key="FormSubmitter:clusters.filter-form.1-Save as a filter").click().run()
    assert "Nothing was saved" in at.error[0].value and not at.expander


def test_new_pair_judgements_are_offered_and_applied_by_computing_again(app):
    from searchapp.judgements import service as judgements

    vectors, _, texts = planted(n_outliers=0)
    make_corpus(app, "planted", texts, vectors)
    at = page().run()
    at.selectbox(key="clusters.method").set_value("kmeans").run()
    at = computed(at)
    assert not at.warning
    judgements.add(app, "planted", a="d0", b="d100", label=1, source="duplicates")
    at.run()
    assert "changed since these clusters were computed" in at.warning[0].value
    at.button(key="clusters.apply-judgements").click().run()
    assert not at.exception and not at.error
    assert "with the new judgements" in at.get("progress")[0].proto.text
    assert work(get_app(), stop_when_idle=True) == 1
    at.run()
    assert not at.warning and not at.get("progress")
    assert any("1 judged pair of documents acted as constraints" in c.value for c in at.caption)
