"""The parts of learning from judgements: held-out split, negatives and their guard, batches
without repeated texts, the cross-encoder, silver pairs, thresholds that follow the model."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.errors import TrainingDataError
from searchapp.evaluation.judged import Items, JudgedPair, JudgedQuery
from searchapp.training import augment, holdout, thresholds
from searchapp.training.batching import unique_text_order
from searchapp.training.negatives import (
    RELATIVE_MARGIN,
    Anchor,
    anchors_of,
    guard,
    mine_examples,
)


# ---- the held-out split ----------------------------------------------------------------------
def pairs(n: int, start: int = 0) -> list[JudgedPair]:
    return [JudgedPair(f"a{i}", f"b{i}", i % 2) for i in range(start, start + n)]


def test_what_was_held_out_stays_held_out_as_judgements_grow():
    """A later fine-tuning must never train on what an earlier one was judged on."""
    _, held_before = holdout.split(Items(pairs=pairs(300)))
    train_after, held_after = holdout.split(Items(pairs=pairs(900)))
    assert set(held_before.pairs) <= set(held_after.pairs)
    assert not set(held_before.pairs) & set(train_after.pairs)
    assert 0.15 < len(held_after.pairs) / 900 < 0.25


def test_a_query_and_all_its_judgements_go_to_one_side():
    queries = [JudgedQuery(f"query {i}", {f"d{i}": 1, f"e{i}": 0}) for i in range(200)]
    train, held = holdout.split(Items(queries=queries))
    assert {q.query for q in train.queries}.isdisjoint({q.query for q in held.queries})
    assert all(len(q.grades) == 2 for q in train.queries + held.queries)


def test_a_pair_is_the_same_item_whichever_way_round():
    assert holdout.pair_key("x", "y") == holdout.pair_key("y", "x")


def test_too_few_judgements_are_refused_with_how_many_are_needed():
    train, held = holdout.split(Items(pairs=pairs(12)))
    with pytest.raises(TrainingDataError, match="at least 16 are needed"):
        holdout.check(train)
    train, held = holdout.split(Items(pairs=[JudgedPair(f"a{i}", f"b{i}", 1) for i in range(80)]))
    holdout.check(train)  # enough to train on, but the held-out part cannot judge
    assert "lack a query and a pair judged not duplicate" in holdout.unmeasurable(held)
    assert holdout.unmeasurable(Items(queries=[JudgedQuery("q", {"d": 1})])) is None


# ---- negatives -------------------------------------------------------------------------------
candidates = st.lists(st.tuples(st.sampled_from([f"d{i}" for i in range(20)]),
                                st.floats(-1, 1)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(candidates, st.floats(-1, 1), st.sets(st.sampled_from([f"d{i}" for i in range(20)])))
def test_the_guard_keeps_no_candidate_that_may_be_a_positive(near, positive, exclude):
    kept = guard(near, positive, exclude)
    bound = positive - abs(positive) * RELATIVE_MARGIN
    scores = {}
    for doc, score in near:
        scores.setdefault(doc, []).append(score)
    assert all(doc not in exclude for doc in kept)
    assert all(min(scores[doc]) <= bound for doc in kept)
    assert [d for d, s in near if s <= bound and d not in exclude] == kept


def test_pairs_become_anchors_both_ways_with_their_judged_negatives():
    items = Items(pairs=[JudgedPair("a", "b", 1), JudgedPair("a", "c", 0),
                         JudgedPair("a", "d", 1)])
    got = {(x.doc, x.positive): (x.judged_negatives, x.known_positives) for x in anchors_of(items)}
    assert got[("a", "b")] == (("c",), ("b", "d"))
    assert got[("b", "a")] == ((), ("a",))
    assert ("a", "c") not in got


def fake_corpus():
    """Ten documents on a line: cosine falls with distance; d9 a copy of d0's text."""
    angles = np.linspace(0, 1.2, 9)
    vectors = {f"d{i}": np.array([np.cos(a), np.sin(a)]) for i, a in enumerate(angles)}
    vectors["d9"] = vectors["d0"]
    texts = {d: f"text {d}" for d in vectors}
    texts["d9"] = "Text d0!"  # the same text as d0 once normalised

    def vectors_of(ids):
        return np.stack([vectors[i] for i in ids])

    def neighbours(matrix, k):
        out = []
        for v in matrix:
            scored = sorted(((d, float(v @ w)) for d, w in vectors.items()), key=lambda x: -x[1])
            out.append(scored[:k])
        return out

    return texts, vectors_of, neighbours


def test_mined_negatives_pass_the_guard_and_judged_ones_come_first():
    texts, vectors_of, neighbours = fake_corpus()
    anchors = [Anchor("", "d0", "d1", "doc\x1fd0", (), ("d1",)),
               Anchor("", "d0", "d2", "doc\x1fd0", ("d8",), ("d2",))]
    examples, summary = mine_examples(anchors, texts, vectors_of, lambda t: None, neighbours,
                                      seed=0)
    bound = float(vectors_of(["d0"])[0] @ vectors_of(["d1"])[0]) * (1 - RELATIVE_MARGIN)
    mined = examples[0]
    assert mined.negative_source == "mined" and mined.anchor == "text d0"
    negative = next(d for d, t in texts.items() if t == mined.negative)
    # not the judged positive d1, the anchor itself, nor its copy d9 and d2: within the margin
    assert negative not in {"d0", "d1", "d2", "d9"}
    assert float(vectors_of(["d0"])[0] @ vectors_of([negative])[0]) <= bound
    assert examples[1].negative == "text d8" and examples[1].negative_source == "judged"
    assert summary.mined == 1 and summary.judged == 1 and summary.guarded == 2


# ---- batches ---------------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=4, max_size=120), st.integers(2, 8),
       st.integers(0, 1000))
def test_batches_hold_no_text_twice_when_that_is_possible(groups, batch, seed):
    texts = [[f"anchor {g}" for g in groups], [f"positive {i}" for i in range(len(groups))]]
    order = np.random.default_rng(seed).permutation(len(groups))
    out = unique_text_order(order, texts, batch)
    assert sorted(out.tolist()) == list(range(len(groups)))  # a permutation
    repeats = [len({texts[0][i] for i in out[s:s + batch]}) < len(out[s:s + batch])
               for s in range(0, len(out), batch)]
    # the greedy pass can only be forced into a repeat once fewer distinct anchors remain
    # than a batch holds: from then on (the tail), not before
    first = repeats.index(True) if True in repeats else len(repeats)
    tail = out[first * batch:]
    assert first == len(repeats) or len({texts[0][i] for i in tail}) < batch


def test_the_trainer_uses_the_order_without_repeats(tiny_bert, tmp_path):
    from searchapp.embedding.encoder import SiameseEncoder
    from searchapp.training.negatives import Example, training_data
    from searchapp.training.trainer import TrainConfig, Trainer

    examples = [Example(f"query {i // 2}", f"answer {i}", f"other {i}", "g", "mined")
                for i in range(16)]
    data = training_data(examples)
    encoder = SiameseEncoder.load(tiny_bert, device="cpu")
    trainer = Trainer(encoder, data, data.subset([0, 1]),
                      TrainConfig(batch_size=4, unique_texts=True), tmp_path)
    order = trainer._order(0)
    for start in range(0, 16, 4):
        anchors = [data.texts[0][i] for i in order[start:start + 4]]
        assert len(set(anchors)) == 4


# ---- cross-encoder and silver pairs ------------------------------------------------------------
def test_the_cross_encoder_learns_pairs_and_resumes_from_its_checkpoint(tiny_bert, tmp_path):
    from searchapp.embedding.cross_encoder import CrossEncoder
    from searchapp.training.cross_train import CHECKPOINT, CrossConfig, train

    rows = [(f"item {i} is red", f"item {i} is red indeed", 1) for i in range(12)] + \
        [(f"item {i} is red", f"weather report {i}", 0) for i in range(12)]
    config = CrossConfig(epochs=20, min_steps=0, batch_size=8, lr=1e-3, checkpoint_every=8)

    class Stop(Exception):
        pass

    def stop_at(n):
        def report(done, total, message):
            if done == n:
                raise Stop()
        return report

    first = CrossEncoder.from_bi_encoder(tiny_bert, device="cpu")
    before = first.predict([(a, b) for a, b, _ in rows])
    with pytest.raises(Stop):
        train(first, rows, tmp_path / "resumed", config, progress=stop_at(10))
    assert (tmp_path / "resumed" / CHECKPOINT).is_file()
    resumed = CrossEncoder.from_bi_encoder(tiny_bert, device="cpu")
    result = train(resumed, rows, tmp_path / "resumed", config)
    assert result["resumed_from"] == 8
    straight = CrossEncoder.from_bi_encoder(tiny_bert, device="cpu")
    train(straight, rows, tmp_path / "straight", config)
    pairs_ = [(a, b) for a, b, _ in rows]
    np.testing.assert_allclose(resumed.predict(pairs_), straight.predict(pairs_), atol=1e-5)
    after = straight.predict(pairs_)
    labels = np.array([y for *_, y in rows])
    gap_before = before[labels == 1].mean() - before[labels == 0].mean()
    gap_after = after[labels == 1].mean() - after[labels == 0].mean()
    assert gap_after > gap_before + 0.3

    straight.save(tmp_path / "saved")
    loaded = CrossEncoder.load(tmp_path / "saved", device="cpu")
    np.testing.assert_allclose(loaded.predict(pairs_), after, atol=1e-6)


def test_the_cross_encoder_starts_from_the_bi_encoders_transformer(tiny_bert):
    from transformers import AutoModel

    from searchapp.embedding.cross_encoder import CrossEncoder

    ce = CrossEncoder.from_bi_encoder(tiny_bert, device="cpu")
    original = AutoModel.from_pretrained(tiny_bert).state_dict()
    for key, tensor in ce.transformer.state_dict().items():
        assert torch.equal(tensor, original[key]), key


def test_silver_rows_keep_only_what_the_cross_encoder_is_sure_of():
    from searchapp.training.negatives import Example

    texts = {"p": "close", "q": "closer", "n": "far", "m": "mid"}
    scores = {("a question", "close"): 0.9, ("a question", "closer"): 0.95,
              ("a question", "far"): 0.05, ("a question", "mid"): 0.5,
              ("a document", "close"): 0.85, ("a document", "far"): 0.1,
              ("a document", "mid"): 0.5, ("gold query", "far"): 0.9}
    gold = [Example("gold query", "gold answer", "far", "query\x1fgold", "mined")]
    out, summary = augment.augment(
        gold, [("query\x1fq", "a question"), ("doc\x1fd", "a document"),
               ("query\x1fgold", "gold query")],
        lambda anchors: [["p", "q", "n", "m"], ["p", "n", "m"], ["n", "m"]], texts,
        lambda pairs: np.array([scores.get(p, 0.1) for p in pairs]),
        judged={("gold query", "far")})  # a judged pair is never a silver candidate
    silver = sorted((e.anchor, e.positive, e.negative, e.label) for e in out
                    if e.negative_source == "silver")
    assert silver == [
        ("a document", "close", "", 1), ("a document", "far", "", 0),  # pairs, sure ones only
        ("a question", "close", "far", -1), ("a question", "closer", "far", -1)]  # triplets
    # the gold triplet's mined negative looked relevant to the cross-encoder: swapped for the
    # query's lowest-scored candidate
    assert (out[0].negative, out[0].negative_source) == ("mid", "checked")
    assert summary.negatives_replaced == 1 and summary.silver == 4


# ---- thresholds -----------------------------------------------------------------------------
def unit(m):
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_expected_pairs_with_every_document_sampled_is_the_exact_count():
    m = unit(np.random.default_rng(0).normal(size=(120, 6)))
    sims = m @ m.T
    exact = int((sims[np.triu_indices(120, 1)] >= 0.6).sum())
    assert thresholds.expected_pairs(m, 0.6, sample=120) == exact


def test_the_carried_threshold_keeps_the_number_of_pairs_a_model_that_inflates_cosines_finds():
    rng = np.random.default_rng(1)
    centres = unit(rng.normal(size=(40, 16)))
    old = unit(np.repeat(centres, 10, axis=0) + 0.35 * rng.normal(size=(400, 16)))
    new = unit(old + 0.7 * np.eye(16)[0])  # everything drawn one way: cosines go up
    at_old = thresholds.expected_pairs(old, 0.8, sample=400)
    assert thresholds.expected_pairs(new, 0.8, sample=400) > 3 * at_old
    carried, counts = thresholds.by_count(old, new, 0.8, sample=400)
    assert carried > 0.8 and counts["old"] == round(at_old)
    assert abs(thresholds.expected_pairs(new, carried, sample=400) - at_old) <= 1


def test_the_precision_of_the_old_threshold_is_matched_on_judged_pairs():
    labels = np.array([1, 1, 1, 0, 0, 0])
    old = np.array([0.9, 0.85, 0.7, 0.82, 0.5, 0.4])  # at 0.8: 2 of 3 right
    new = np.array([0.97, 0.95, 0.93, 0.94, 0.9, 0.6])
    t = thresholds.by_precision(old, new, labels, 0.8)
    predicted = new >= t
    assert labels[predicted].mean() >= 2 / 3 and predicted.sum() == 4
    assert thresholds.by_precision(old, new, labels, 0.99) is None
