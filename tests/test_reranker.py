"""The reranker: kept only when it beats no reranking on held-out judgements, reorders the
first hits by its own scores when asked, and a clear error where a corpus has none.

Real components throughout: SQLite, hnswlib, the bundled encoder, the learning corpus of
``tests/learning_data.py`` (40 topics, a judged query each); training is cut to a few
steps of a one-layer cross-encoder so each test takes seconds.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from searchapp.cli import main
from searchapp.errors import NoRerankerError
from searchapp.jobs.worker import run_until_done
from searchapp.search import rerank
from searchapp.search.service import search
from searchapp.store import repo
from searchapp.training.reranker import RerankerConfig, keep, new_cross_encoder
from searchapp.training.reranker_job import request_reranker
from searchapp.vectors.handle import open_corpus
from tests.learning_data import make_learning_corpus
from tests.test_api import stack  # noqa: F401 - the fixture

QUERY = "where is the cat near the tree 0"


@pytest.fixture
def topics(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    make_learning_corpus(app, kinds=("query",))
    return app


def attach_untrained(app) -> rerank.Reranker:
    """A one-layer reranker with an untrained head, attached as if it had won its verdict."""
    handle = open_corpus(app, "topics")
    model = new_cross_encoder(app, handle, RerankerConfig(layers=1, max_length=64))
    keep(app, handle, model, "topics-rr", {"kind": "reranker"})
    return rerank.attached(app, "topics")


def test_a_reranker_that_does_not_beat_no_reranking_is_not_attached(topics):
    job = run_until_done(topics, request_reranker(topics, "topics", layers=1, max_steps=2,
                                                  max_length=64))
    assert job.status == "succeeded", job.error
    result = job.result
    # two steps of a fresh head know nothing: at best the blend keeps the search's order
    assert result["comparison"]["verdict"] != "better" and not result["kept"]
    assert "not kept" in result["reason"]
    with topics.db.session() as s:
        assert repo.corpus_reranker(s, "topics") is None
    assert not rerank.reranker_folder(topics.settings, result["name"]).exists()
    with pytest.raises(NoRerankerError):
        search(topics, "topics", QUERY, rerank=True)


def test_reranking_orders_the_first_candidates_by_the_cross_encoders_scores(topics):
    scorer = attach_untrained(topics)
    plain = search(topics, "topics", QUERY, k=rerank.DEPTH)
    logits = scorer.scores(QUERY, [rerank.passage_text(h) for h in plain])
    expected = [plain[i].id for i in np.argsort(-logits, kind="stable")[:5]]
    reranked = search(topics, "topics", QUERY, k=5, rerank=True)
    assert [h.id for h in reranked] == expected
    assert expected != [h.id for h in plain[:5]]  # it did reorder
    assert all(0.0 <= h.score <= 1.0 for h in reranked)  # the reranker's probability


def test_asking_to_rerank_without_a_reranker_says_how_to_get_one(topics, capsys, monkeypatch,
                                                                 stack):  # noqa: F811
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: topics)
    assert main(["search", "--corpus", "topics", "--rerank", QUERY]) == 1
    err = capsys.readouterr().err
    assert "no reranker" in err and "searchapp judge train-reranker --corpus topics" in err
    client, _ = stack[0]()
    response = client.post("/api/v1/corpora/topics/search", json={"query": QUERY,
                                                                  "rerank": True})
    assert response.status_code == 409, response.text
    assert response.json()["type"].endswith("no-reranker")
    assert "train-reranker" in response.json()["detail"]


def test_the_api_field_and_the_cli_flag_rerank(topics, capsys, monkeypatch, stack):  # noqa: F811
    attach_untrained(topics)
    expected = [h.id for h in search(topics, "topics", QUERY, k=5, rerank=True)]
    client, _ = stack[0]()
    body = client.post("/api/v1/corpora/topics/search",
                       json={"query": QUERY, "k": 5, "rerank": True}).json()
    assert body["rerank"] is True and [h["id"] for h in body["results"]] == expected
    plain = client.post("/api/v1/corpora/topics/search", json={"query": QUERY, "k": 5}).json()
    assert [h["id"] for h in plain["results"]] != expected
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: topics)
    assert main(["search", "--corpus", "topics", "--rerank", "--json", "-k", "5", QUERY]) == 0
    assert [h["id"] for h in json.loads(capsys.readouterr().out)["results"]] == expected


def test_the_blend_keeps_the_search_order_where_the_cross_encoder_knows_nothing(topics):
    from searchapp.training import holdout
    from searchapp.training.judged_items import corpus_items
    from searchapp.training.reranker import compare, fit_blend

    handle = open_corpus(topics, "topics")
    fit_on, judged = holdout.split(corpus_items(topics, "topics"), 0.5)
    untrained = rerank.Reranker(new_cross_encoder(topics, handle, RerankerConfig(layers=1)))
    alone = compare(topics, handle, untrained, judged)
    untrained.blend = fit_blend(topics, handle, untrained, fit_on)
    blended = compare(topics, handle, untrained, judged)
    assert alone["b"]["value"] < alone["a"]["value"] - 20  # a random head scrambles the list
    assert blended["b"]["value"] >= blended["a"]["value"] - 2  # the blend trusts the search


def test_the_attached_reranker_scores_through_its_int8_graph_close_to_float32(topics):
    """On the CPU the reranker runs ONNX Runtime's int8 graph (cached in its folder), whose
    logits stay within the check's tolerance of float32 torch; a graph whose logits drift
    past it is refused and the reranker keeps torch."""
    from searchapp.embedding import cross_graph
    from searchapp.embedding.cross_encoder import CrossEncoder
    from searchapp.errors import ModelError

    handle = open_corpus(topics, "topics")
    folder = keep(topics, handle, new_cross_encoder(topics, handle, RerankerConfig(layers=1)),
                  "topics-rr", {"kind": "reranker"})
    graph = list(folder.glob("*-int8.onnx"))
    assert graph, "keep makes the graph, so the first reranked search only loads it"
    made = graph[0].stat().st_mtime_ns
    scorer = rerank.attached(topics, "topics")
    assert scorer.path == "onnx-int8" and graph[0].stat().st_mtime_ns == made
    exact = CrossEncoder.load(folder, device="cpu")
    hits = search(topics, "topics", QUERY, k=30)
    passages = [rerank.passage_text(h) for h in hits]
    with torch_inference():
        reference = exact(exact.tokenize([QUERY] * len(passages), passages)).numpy()
    gap = np.abs(scorer.logits(QUERY, passages) - reference).max()
    assert gap <= cross_graph.TOLERANCE + 0.02 * np.abs(reference).max()

    class Drifting(cross_graph.CrossGraph):  # a graph whose logits are off by 1
        def logits(self, features):
            return super().logits(features) + 1.0

    with pytest.raises(ModelError, match="moves its logits"):
        cross_graph.check(Drifting(next(folder.glob("*-int8.onnx"))), exact)


def torch_inference():
    import torch

    return torch.inference_mode()


def test_a_reranked_search_orders_its_answers_by_the_reranker_reading_their_context(
        topics, monkeypatch):
    from searchapp.answers import service as answering
    from searchapp.answers import threshold

    scorer = attach_untrained(topics)
    monkeypatch.setattr(threshold, "DEFAULT", -1.0)  # every candidate clears it: three shown
    reordered = 0
    for n in range(6):
        query = f"where is the cat near the tree {n}"
        _, ranked = answering.search_with_answers(topics, "topics", query, answer=True,
                                                  rerank=True)
        best = ranked.candidates[:answering.MAX_ANSWERS]  # by score: the answers' own order
        read = [" ".join(p for p in (a.before, a.text, a.after) if p) for a in best]
        logits = scorer.scores(query, read)
        expected = [best[i].text for i in sorted(range(len(best)),
                                                 key=lambda i: (-float(logits[i]), i))]
        assert [a.text for a in ranked.answers] == expected
        reordered += expected != [a.text for a in best]
    assert reordered  # the reranker's order is not the answers' own
