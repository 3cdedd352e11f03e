"""What the pages say and remember, through AppTest on a real database: the first screen,
upload statistics and combined text, the corpus remembered across pages and sessions,
and statuses that clear when they no longer apply."""

from __future__ import annotations

import numpy as np
import pytest

from searchapp.store import repo
from searchapp.ui.url_state import read_last_corpus
from tests.test_clusters import make_corpus
from tests.test_ui_pages import button, page, texts

QUORA = ("qid,question1,question2,is_duplicate\n" + "".join(
    f"q{i},How do I learn topic {i} quickly?,What is the fastest way to learn topic {i}?,"
    f"{i % 2}\n" for i in range(30)))


@pytest.fixture(autouse=True)
def fresh_resources(ui_resources):
    return ui_resources


def unit_vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_the_first_screen_says_what_the_app_is_for_and_what_comes_after_the_upload(app):
    at = page("upload").run()
    said = " ".join(m.value for m in at.markdown)
    assert "nothing you upload leaves it" in said
    for step in ("**Search**", "**Duplicates**", "**Clusters**", "**Models**"):
        assert step in said, step


def test_a_label_column_chosen_as_text_is_warned_about_with_the_columns_statistics(app):
    at = page("upload").run()
    at.file_uploader[0].upload("quora.csv", QUORA.encode(), "text/csv").run()
    assert not at.warning, "the guessed text column is text"
    at.multiselect[0].set_value(["is_duplicate"]).run()
    [warning] = texts(at.warning)
    assert warning.replace("\\", "").startswith(
        "'is_duplicate' looks like a label (2 distinct values, 1 character long on average), "
        "not text: the documents would be made of it.")
    stats = at.dataframe[-1].value.set_index("column")
    assert stats.loc["is_duplicate", "distinct values"] == 2
    assert stats.loc["question1", "distinct values"] == 30
    assert stats.loc["question1", "empty"] == 0.0


def test_two_text_columns_are_joined_into_each_document(app):
    at = page("upload").run()
    at.file_uploader[0].upload("quora.csv", QUORA.encode(), "text/csv").run()
    at.multiselect[0].set_value(["question1", "question2"]).run()
    assert any("question1 + question2, joined" in c for c in texts(at.caption))
    assert any("metadata: is\\_duplicate" in c or "metadata: is_duplicate" in c
               for c in texts(at.caption))
    button(at, "Upload and embed").click().run()
    assert not at.exception and not at.error
    with app.db.session() as s:
        doc = repo.documents_by_id(s, [1])[1]
    assert doc.external_id == "q0"
    assert doc.text == "How do I learn topic 0 quickly?\n\nWhat is the fastest way to learn " \
        "topic 0?"
    assert dict(doc.meta) == {"is_duplicate": "0", "lang": "en"}


def test_the_corpus_chosen_is_the_default_on_every_page_and_for_a_new_session(app):
    make_corpus(app, "alpha", ["a one", "a two", "a three"], unit_vectors(3, 0))
    make_corpus(app, "beta", ["b one", "b two", "b three"], unit_vectors(3, 1))
    search = page("search").run()
    assert search.selectbox(key="corpus-picker").value == "alpha"
    search.selectbox(key="corpus-picker").set_value("beta").run()
    assert search.query_params["corpus"] in ("beta", ["beta"])  # in the address
    assert read_last_corpus(app.settings.data_dir) == "beta"
    clusters = page("clusters").run()  # a new session: the data folder's last-used corpus
    assert clusters.selectbox(key="corpus-picker").value == "beta"
    duplicates = page("duplicates")
    duplicates.query_params["corpus"] = "alpha"  # a link: the address wins
    duplicates.run()
    assert duplicates.selectbox(key="corpus-picker").value == "alpha"


def test_an_invalid_k_does_not_follow_to_another_corpus(app):
    make_corpus(app, "alpha", ["a one", "a two", "a three"], unit_vectors(3, 0))
    make_corpus(app, "beta", ["b one", "b two", "b three"], unit_vectors(3, 1))
    at = page("search").run()
    at.number_input(key="search-k").set_value(0)
    at.button[0].click().run()
    assert any("Results (k) must be a whole number" in e for e in texts(at.error))
    at.selectbox(key="corpus-picker").set_value("beta").run()
    assert not at.error, "the old error is gone with the corpus it was about"
    assert at.number_input(key="search-k").value == 10
