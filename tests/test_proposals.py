"""Which to ask next: pairs near the threshold, rankings that disagree, cluster borders."""

from __future__ import annotations

import numpy as np
import pytest

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import proposals, service
from searchapp.search.service import search
from searchapp.store import repo
from searchapp.vectors.handle import open_corpus
from searchapp.vectors.index import VectorIndex

MODEL = "all-MiniLM-L6-v2"
FAQ = """id,text
p1,How do I reset my password?
p2,"  how do I   reset my password"
p3,What is the procedure to reset my password?
p4,How can I change my password?
p5,How do I reset my password on my phone?
f1,What is the capital of France?
f2,Which city is the capital of France?
c1,How do I cook pasta?
c2,What is the best way to boil spaghetti?
m1,My cat will not eat its food.
m2,The kitten refuses its dinner.
s1,The stock market fell sharply today.
s2,Shares dropped a lot on the exchange this morning.
r1,How do I reset my router?
r2,How do I restart my router?
w1,Is it going to rain tomorrow?
w2,What is the weather forecast for tomorrow?
"""


@pytest.fixture
def faq(app, bundled_encoder):
    app.install_encoder(MODEL, bundled_encoder)
    summary = upload(app, read_table(FAQ.encode(), "faq.csv"), "faq")
    assert run_until_done(app, summary.job_id).status == "succeeded"
    return app


def cosine(app, a: str, b: str) -> float:
    handle = open_corpus(app, "faq")
    with app.db.session() as s:
        ids = [repo.document_by_external_id(s, handle.corpus_id, x).id for x in (a, b)]
    u, v = handle.index.vectors(np.array(ids))
    return float(u @ v)


def test_pairs_nearest_the_threshold_come_first_and_exact_copies_never(faq):
    batch = proposals.propose(faq, "faq", 6, kind="pair", threshold=0.85)
    assert batch and all(p.kind == "pair" and p.strategy == "threshold" for p in batch)
    gaps = [abs(p.cosine - 0.85) for p in batch]
    assert gaps == sorted(gaps)
    assert all(abs(cosine(faq, p.a, p.b) - p.cosine) < 1e-3 for p in batch)
    assert {"p1", "p2"} not in [{p.a, p.b} for p in batch]  # the same text: never asked
    docs = [d for p in batch for d in (p.a, p.b)]
    assert len(docs) == len(set(docs))  # a document once per batch
    assert all(p.a < p.b and p.a_text and p.b_text for p in batch)
    assert "threshold 0.850" in batch[0].reason
    near_copies = proposals.propose(faq, "faq", 3, kind="pair", threshold=0.99)
    assert near_copies and {"p1", "p2"} not in [{p.a, p.b} for p in near_copies]  # 0.994


def test_a_judged_or_excluded_item_is_never_proposed_again(faq):
    first = proposals.propose(faq, "faq", 3, kind="pair", threshold=0.85)
    service.add(faq, "faq", a=first[0].b, b=first[0].a, label=1, source="label")
    later = proposals.propose(faq, "faq", 50, kind="pair", threshold=0.85,
                              exclude=[first[1], ("pair", None, first[2].b, first[2].a)])
    keys = {p.key for p in later}
    assert not keys & {first[0].key, first[1].key, first[2].key}
    assert len(later) > 3


def test_a_disagreement_is_a_document_the_two_searches_rank_far_apart(faq):
    service.add(faq, "faq", query="kitten food", doc="m1", label=1, source="search")
    batch = proposals.propose(faq, "faq", 8, kind="query")
    assert batch and all(p.kind == "query" and p.b is None for p in batch)
    assert batch[0].query == "kitten food"  # judged queries are asked about first
    for p in batch:
        ranks = {}
        for mode in ("semantic", "lexical"):
            hits = [h.id for h in search(faq, "faq", p.query, k=40, mode=mode)]
            if p.query != "kitten food":  # a document used as a query: itself left out
                hits = [h for h in hits if h not in
                        {d for d, t in service.texts(faq, "faq", hits).items()
                         if p.query == " ".join(t.split())}]
            ranks[mode] = hits.index(p.a) + 1 if p.a in hits else None
        best = min(r for r in ranks.values() if r is not None)
        inverse = [1 / (r or proposals.RANK_DEPTH + 1) for r in ranks.values()]
        assert best <= proposals.TOP and abs(inverse[0] - inverse[1]) >= 0.1, (p, ranks)


def test_the_strategies_take_turns_so_none_starves(faq):
    service.add(faq, "faq", query="kitten food", doc="m1", label=1, source="search")
    handle = open_corpus(faq, "faq")
    with faq.db.session() as s:  # a stored clustering that splits the password questions
        ids = {e: i for i, (e, _) in repo.document_texts(s, handle.corpus_id).items()}
        order = sorted(ids.values())
        cluster = [0 if repo.documents_by_id(s, [i])[i].external_id in ("p1", "p2", "p5")
                   else 1 for i in order]
        repo.save_analysis(s, handle.corpus_id, handle.model.id, "clusters", "test", {},
                           handle.generation, {}, 0.1,
                           {"doc_ids": np.array(order), "cluster": np.array(cluster)})
    batch = proposals.propose(faq, "faq", 6, threshold=0.85)
    assert [p.strategy for p in batch[:3]] == ["threshold", "disagreement", "border"]
    border = [p for p in batch if p.strategy == "border"]
    for p in border:
        inside = {"p1", "p2", "p5"}
        assert (p.a in inside) != (p.b in inside)


def test_the_neighbour_pairs_are_computed_once_per_generation(faq, monkeypatch, bundled_encoder):
    calls = []
    original = VectorIndex.iter_neighbours

    def counted(self, *args, **kwargs):
        calls.append(1)
        yield from original(self, *args, **kwargs)

    monkeypatch.setattr(VectorIndex, "iter_neighbours", counted)
    for _ in range(3):
        proposals.propose(faq, "faq", 5, kind="pair")
    assert len(calls) == 1
    summary = upload(faq, read_table(b"id,text\nz1,How do I reset my modem?\n", "z.csv"), "faq")
    assert run_until_done(faq, summary.job_id).status == "succeeded"
    proposals.propose(faq, "faq", 5, kind="pair")
    assert len(calls) == 2


def test_a_tiny_corpus_gives_what_it_has_and_a_bad_kind_is_refused(faq):
    assert len(proposals.propose(faq, "faq", 1000, kind="pair")) <= 17 // 2
    assert proposals.propose(faq, "faq", 0) == []
    from searchapp.errors import InvalidParameterError
    with pytest.raises(InvalidParameterError, match="query, pair"):
        proposals.propose(faq, "faq", 3, kind="pairs")


def test_a_page_that_cannot_wait_for_the_model_gets_proposals_and_an_estimate_without_it(
        faq, monkeypatch):
    from searchapp.judgements.estimate import estimate

    service.add(faq, "faq", query="kitten food", doc="m1", label=1, source="search")
    monkeypatch.setattr(faq, "encoder", lambda name: pytest.fail("the model was run"))
    batch = proposals.propose(faq, "faq", 5, kind="query", encode=False)
    assert batch and "kitten food" not in {p.query for p in batch}
    now = estimate(faq, "faq", encode=False)
    assert now.waiting and now.queries == 1 and now.query_results == 0
