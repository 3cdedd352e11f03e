"""Stored duplicates and clusters of a corpus survive a switch to another model and back
(its vectors of the first model are unchanged), and are dropped when a document changes
(real SQLite, hnswlib, the bundled encoder and a tiny random BERT; jobs run inline)."""

from __future__ import annotations

import shutil

from searchapp import duplicates as dup
from searchapp.clusters.params import ClusterParams
from searchapp.clusters.service import compute_and_store, stored_for_name
from searchapp.corpora import documents
from searchapp.jobs.worker import run_until_done
from searchapp.training import adoption
from tests.test_duplicates import FAQ, MODEL, make_corpus


def switched(app, corpus: str, model: str) -> None:
    assert run_until_done(app, adoption.switch(app, corpus, model)).status == "succeeded"


def test_switching_to_another_model_and_back_keeps_mined_pairs_and_clusters(
        app, bundled_encoder, tiny_bert):
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    make_corpus(app, bundled_encoder, "faq", FAQ)
    assert run_until_done(app, dup.request_mining(app, "faq", 0.8)).status == "succeeded"
    params = ClusterParams(projection="pca")
    compute_and_store(app, "faq", params)
    assert dup.mined_before(app, "faq") and stored_for_name(app, "faq", params) is not None
    switched(app, "faq", "tiny")
    assert not dup.mined_before(app, "faq")  # never mined with tiny
    switched(app, "faq", MODEL)
    assert dup.mined_before(app, "faq"), "the mined pairs were lost by the switch and back"
    assert stored_for_name(app, "faq", params) is not None, "the clusters were lost"
    documents.upsert(app, "faq", [documents.Doc("p1", "A new text about trains.", {})])
    assert not dup.mined_before(app, "faq")  # a changed text: mined again
    assert stored_for_name(app, "faq", params) is None
