"""The learn job's recipe levers in the trainer: the gradient cache and early stopping.

On the tiny random BERT (``tiny_bert``): seconds each.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.embedding.encoder import SiameseEncoder
from searchapp.training.data import load_training_data
from searchapp.training.recipe import recipe_named
from searchapp.training.trainer import TrainConfig, Trainer
from tests.test_training import rows_for


def _trainer(tiny_bert, work, **config) -> Trainer:
    torch.manual_seed(0)
    data = load_training_data(rows_for("triplet", 32).encode(), "t.csv")
    encoder = SiameseEncoder.load(tiny_bert, device="cpu")
    return Trainer(encoder, data, data.subset([0, 1, 2, 3]),
                   TrainConfig(batch_size=16, **config), work)


def _gradients(trainer: Trainer) -> list[torch.Tensor]:
    return [p.grad.clone() for p in trainer.encoder.parameters() if p.grad is not None]


@pytest.mark.parametrize("mini", [3, 8])
def test_the_gradient_cache_gives_the_gradient_of_one_pass_over_the_batch(tiny_bert, tmp_path,
                                                                           mini):
    rows = np.arange(16)
    losses, grads = [], []
    for cache in (0, mini):
        trainer = _trainer(tiny_bert, tmp_path / f"c{cache}", cache_mini=cache)
        trainer.encoder.eval()  # no dropout: both ways must give the same numbers
        texts = [t for col in trainer.train_data.texts for t in (col[i] for i in rows)]
        if cache:
            loss = trainer._cached_backward(texts, len(rows), None, on_cuda=False)
        else:
            loss = trainer.loss(list(trainer._embed(texts, len(rows), False).split(len(rows))))
            loss.backward()
        losses.append(float(loss.detach()))
        grads.append(_gradients(trainer))
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    assert len(grads[0]) == len(grads[1]) > 0
    for plain, cached in zip(*grads, strict=True):
        torch.testing.assert_close(cached, plain, rtol=1e-4, atol=1e-6)


def test_the_cache_replays_dropout_so_the_second_pass_matches_the_first(tiny_bert, tmp_path):
    """In training mode the recomputed pass must draw the same dropout masks as the cached
    one, or the cached gradients belong to other vectors: with the RNG state replayed, the
    cached step's gradient equals the plain step's under the same masks."""
    trainer = _trainer(tiny_bert, tmp_path, cache_mini=4)
    trainer.encoder.train()
    texts = [t for col in trainer.train_data.texts for t in col[:8]]
    seen = []
    original = trainer._forward

    def recording(batch, on_cuda):
        out = original(batch, on_cuda)
        seen.append(out.detach().clone())
        return out

    trainer._forward = recording
    trainer._cached_backward(texts, 8, None, on_cuda=False)
    half = len(seen) // 2
    for first, again in zip(seen[:half], seen[half:], strict=True):
        torch.testing.assert_close(first, again)


def test_early_stopping_ends_training_when_the_dev_metric_stops_rising(tiny_bert, tmp_path):
    trainer = _trainer(tiny_bert, tmp_path, epochs=30, evals_per_epoch=1, patience=1, lr=1e-8)
    result = trainer.run()
    assert result["stopped_early"] and result["steps"] < trainer.total
    patient = _trainer(tiny_bert, tmp_path / "no-patience", epochs=3, lr=1e-8)
    assert not patient.run()["stopped_early"]


def test_recipes_by_name_and_from_a_payload():
    assert recipe_named(None).levers() == []  # the first recipe: no lever measured better
    assert recipe_named("all").levers() == ["cached", "lexical", "passages"]
    assert recipe_named("passages").levers() == ["passages"]
    assert recipe_named({"cached": True, "lexical": False, "passages": 0}).levers() == ["cached"]
    with pytest.raises(Exception, match="Unknown recipe 'fast'; use one of"):
        recipe_named("fast")


# ---- mining: the lexical list and passage positives, on a real corpus --------------------
LONG = {
    "manual": ("Installing the server takes a few minutes on most machines. " * 12
               + "Backups are written with pg_dump every night and kept for a week. " * 12
               + "Vacuum reclaims the space of deleted rows and updates statistics. " * 12),
    "birds": "Sparrows and finches visit the garden feeder in winter mornings.",
    "dumps": "A dump file of the whole cluster can be restored with psql on any machine.",
    "words": "Nightly backups pg_dump week: a glossary entry listing words only.",
    "tea": "Green tea is brewed at eighty degrees for two minutes.",
}


@pytest.fixture
def long_corpus(app, bundled_encoder):
    import pandas as pd

    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done

    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    csv = pd.DataFrame([{"id": k, "text": v} for k, v in LONG.items()]).to_csv(index=False)
    job = run_until_done(app, upload(app, read_table(csv.encode(), "docs.csv"), "docs").job_id)
    assert job.status == "succeeded", job.error
    return app


def test_the_best_passage_of_a_long_document_is_the_one_about_the_query(long_corpus):
    from searchapp.training.mining import CorpusView

    view = CorpusView(long_corpus, "docs", "all-MiniLM-L6-v2")
    [query] = view.encode(["how are nightly backups made"])
    passage = view.best_passage(query, "manual")
    assert "pg_dump" in passage and len(passage) < len(LONG["manual"]) / 2
    assert view.best_passage(query, "tea") == LONG["tea"].strip()  # one passage: the whole text


def test_passage_positives_replace_the_whole_document_in_the_triplets(long_corpus):
    from searchapp.evaluation.judged import Items, JudgedQuery
    from searchapp.training.mining import mine
    from searchapp.training.recipe import Recipe

    items = Items([JudgedQuery("how are nightly backups made", {"manual": 1})])
    whole = mine(long_corpus, "docs", "all-MiniLM-L6-v2", items, lambda *a: None,
                 Recipe(cached=False, lexical=False, passages=False))
    short = mine(long_corpus, "docs", "all-MiniLM-L6-v2", items, lambda *a: None,
                 Recipe(cached=False, lexical=False, passages=True))
    assert whole["examples"][0]["positive"] == LONG["manual"].strip()
    assert "pg_dump" in short["examples"][0]["positive"]
    assert len(short["examples"][0]["positive"]) < len(LONG["manual"]) / 2
    assert short["summary"]["passages"] >= 1


def test_lexical_negatives_come_from_the_words_list_through_the_guard():
    from searchapp.training.negatives import Anchor, mine_examples

    texts = {"pos": "answer", "near": "semantic neighbour", "words": "shares the words",
             "copy": "answer"}
    vectors = {"pos": [1.0, 0.0], "near": [0.99, 0.14], "words": [0.6, 0.8],
               "copy": [1.0, 0.0]}
    anchor = Anchor("the query", None, "pos", "query\x1fthe query")

    def vectors_of(ids):
        return np.array([vectors[i] for i in ids], dtype=np.float32)

    def encode(queries):
        return np.array([[1.0, 0.0]] * len(queries), dtype=np.float32)

    def neighbours(matrix, k):  # the semantic list: only a near-copy the guard drops
        return [[("pos", 1.0), ("near", 0.99)] for _ in matrix]

    def lexical(queries):
        return [["copy", "words"] for _ in queries]  # a copy of the positive, then a safe one

    with_words, summary = mine_examples([anchor], texts, vectors_of, encode, neighbours,
                                        lexical=lexical)
    assert with_words[0].negative == "shares the words" and summary.lexical == 1
    without, summary = mine_examples([anchor], texts, vectors_of, encode, neighbours)
    assert without[0].negative != "shares the words" or summary.random == 1
    assert summary.lexical == 0 and summary.random == 1


# ---- the job: vectors kept for the switch, training on all after the verdict -------------
def test_the_verdict_keeps_the_new_models_vectors_so_the_switch_embeds_nothing(app, tiny_bert):
    import shutil

    from searchapp.evaluation.encoded import is_stored
    from searchapp.jobs.worker import run_until_done
    from searchapp.training.adoption import accept
    from searchapp.training.learn_job import request_learning
    from tests.learning_data import make_learning_corpus

    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    make_learning_corpus(app, model="tiny")
    job = run_until_done(app, request_learning(app, "topics", name="kept", max_steps=3,
                                               batch_size=8, recipe="all").job_id)
    assert job.status == "succeeded", job.error
    assert is_stored(app, "topics", "kept")
    fusion = job.result["fusion"]  # fitted on the held-out queries only, the new model's
    assert fusion["model"] == "kept" and 0 < fusion["queries"] < 40
    # a few held-out queries: fitted leave-one-query-out, kept only when the gain is shown
    assert fusion["kept"] == (fusion["verdict"] == "better"), fusion["sentence"]
    switch = run_until_done(app, accept(app, "topics", "kept", force=True))
    assert switch.status == "succeeded" and switch.result["embedded"] == 0


def test_training_on_all_judgements_replaces_the_weights_after_the_verdict(app, tiny_bert):
    import shutil

    from searchapp.embedding.models import read_card
    from searchapp.evaluation.encoded import is_stored
    from searchapp.jobs.worker import run_until_done
    from searchapp.training.learn_job import request_learning
    from tests.learning_data import make_learning_corpus

    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    make_learning_corpus(app, model="tiny")
    started = request_learning(app, "topics", name="all-in", max_steps=3, batch_size=8,
                               train_on_all=True)
    job = run_until_done(app, started.job_id)
    assert job.status == "succeeded", job.error
    card = read_card(app.settings.models_dir / "all-in")
    final = card["trained_on_all"]
    assert final["examples"] > card["data"]["examples"]  # the held-out part trained on too
    assert card["verdict"]["verdict"] and "measured before" in final["note"]
    assert job.result["trained_on_all"] == final
    assert not is_stored(app, "topics", "all-in")  # the verdict's vectors are not its vectors


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdehiklnpsx+_-", max_size=30))
def test_any_recipe_name_is_a_recipe_or_a_clear_error(name):
    from searchapp.errors import TrainingDataError

    try:
        recipe = recipe_named(name)
    except TrainingDataError as exc:
        assert "Unknown recipe" in str(exc) and "joined by '+'" in str(exc)
    else:
        assert set(recipe.levers()) <= {"cached", "lexical", "passages"}
        if "+" in name:
            assert set(recipe.levers()) == set(name.split("+"))
