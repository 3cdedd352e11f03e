"""Fine-tuning: objectives, data detection and errors, the trainer, the job, the CLI.

All on the tiny random BERT (``tiny_bert``), so each test runs in seconds.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from searchapp.embedding.encoder import SiameseEncoder
from searchapp.errors import TrainingDataError
from searchapp.jobs import queue
from searchapp.jobs.kinds import parse_payload
from searchapp.jobs.tasks import TaskContext
from searchapp.training.data import load_training_data, split_dev
from searchapp.training.losses import OBJECTIVES
from searchapp.training.task import finetune, request_finetune, training_history, work_folder
from searchapp.training.trainer import TrainConfig, Trainer
from tests.helpers import KillAfter, Killed

WORDS = ["cat", "dog", "car", "tree", "river", "music", "bread", "phone", "snow", "ship",
         "chair", "lamp", "apple", "train", "book", "cloud"]


def _sentence(i: int, twist: str = "") -> str:
    return f"the {WORDS[i % 16]} is {twist or 'here'} {WORDS[(i * 7 + 3) % 16]}"


def rows_for(kind: str, n: int = 32) -> str:
    """A CSV of ``n`` synthetic examples of a kind (deterministic)."""
    if kind == "triplet":
        lines = ["anchor,positive,negative"]
        lines += [f"{_sentence(i)},{_sentence(i, 'near')},{_sentence(i + 5)}" for i in range(n)]
    elif kind == "regression":
        lines = ["sentence1,sentence2,score"]
        lines += [f"{_sentence(i)},{_sentence(i + i % 3)},{(i % 3) * 2.5}" for i in range(n)]
    elif kind == "classification":
        labels = ["entailment", "neutral", "contradiction"]
        lines = ["premise,hypothesis,label"]
        lines += [f"{_sentence(i)},{_sentence(i + i % 3)},{labels[i % 3]}" for i in range(n)]
    elif kind == "contrastive":
        lines = ["sentence1,sentence2,label"]
        lines += [f"{_sentence(i)},{_sentence(i + (i % 2) * 4)},{1 - i % 2}" for i in range(n)]
    else:  # positive pairs
        lines = ["sentence1,sentence2"] + [f"{_sentence(i)},{_sentence(i, 'near')}"
                                           for i in range(n)]
    return "\n".join(lines) + "\n"


KIND_OF = {"softmax": "classification", "cosine": "regression", "cosent": "regression",
           "angle": "regression", "triplet": "triplet", "mnrl": "pairs",
           "contrastive": "contrastive"}


# ---- objectives ------------------------------------------------------------------------
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_each_objective_lowers_its_loss(objective, tiny_bert, tmp_path):
    data = load_training_data(rows_for(KIND_OF[objective]).encode(), "train.csv",
                              objective=objective, batch_size=16)
    encoder = SiameseEncoder.load(tiny_bert, device="cpu")
    cfg = TrainConfig(batch_size=16, lr=1e-3, warmup_ratio=0.0, epochs=50)
    trainer = Trainer(encoder, data, data.subset([0, 1, 2, 3]), cfg, tmp_path)
    batch = np.arange(16)

    def current_loss() -> float:
        encoder.eval()
        with torch.no_grad():
            cols = [[c[i] for i in batch] for c in data.texts]
            vectors = encoder(encoder.tokenize([t for c in cols for t in c]))
            labels = None if data.labels is None else torch.tensor(
                [data.labels[i] for i in batch])
            return float(trainer.loss(list(vectors.split(16)), labels))

    before = current_loss()
    encoder.train()
    for _ in range(15):
        trainer._step(batch, on_cuda=False)
    assert current_loss() < before * 0.95, objective


def test_cosent_ignores_the_scale_of_scores():
    from searchapp.training.losses import CoSENTLoss

    u, v = torch.randn(6, 8), torch.randn(6, 8)
    gold = torch.tensor([0.1, 0.5, 0.2, 0.9, 0.3, 0.7])
    loss = CoSENTLoss()
    assert torch.isclose(loss([u, v], gold), loss([u, v], gold * 5 + 3))


def test_angle_similarity_is_cosine_plus_a_rotated_term():
    from searchapp.training.losses import AnglELoss, angle_similarity

    u = torch.randn(5, 8)
    assert torch.allclose(angle_similarity(u, u), torch.ones(5), atol=1e-6)  # same angle
    a, b = u.chunk(2, dim=1)
    rotated = torch.cat([-b, a], dim=1)  # multiplied by i: every angle shifted by 90°
    assert torch.allclose(angle_similarity(rotated, u), torch.ones(5), atol=1e-6)
    assert torch.allclose(angle_similarity(u, rotated), torch.ones(5), atol=1e-6)
    v = torch.randn(5, 8)
    gold = torch.tensor([0.0, 0.2, 0.5, 0.9, 1.0])
    only_ibn = AnglELoss(w_cos=0, w_angle=0)
    assert float(only_ibn([u, v], gold)) > 0  # the two top pairs must find their partners
    assert float(only_ibn([u, v], torch.zeros(5) + 0.3)) == 0  # no positives, no term
    from searchapp.errors import InvalidParameterError
    from searchapp.training.losses import make_loss

    with pytest.raises(InvalidParameterError, match="odd dimension"):
        make_loss("angle", dim=7)


def test_softmax_concatenation_is_configurable():
    from searchapp.errors import InvalidParameterError
    from searchapp.training.losses import SoftmaxLoss

    loss = SoftmaxLoss(8, 3, concat=("u", "v", "|u-v|", "u*v"))
    assert loss.classifier.in_features == 32
    assert loss.features(torch.ones(2, 8), torch.ones(2, 8))[:, 16:24].abs().sum() == 0
    with pytest.raises(InvalidParameterError, match="u-v"):
        SoftmaxLoss(8, 3, concat=("u", "u+v"))


# ---- data detection --------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "objective"), [
    ("regression", "cosent"), ("classification", "softmax"), ("triplet", "triplet"),
    ("contrastive", "contrastive"), ("pairs", "mnrl")])
def test_objective_detected_from_columns(kind, objective):
    data = load_training_data(rows_for(kind).encode(), "t.csv")
    assert (data.kind, data.objective, len(data)) == (kind, objective, 32)


def test_scores_in_any_range_are_rescaled_and_the_range_shown():
    data = load_training_data(rows_for("regression").encode(), "t.csv")
    assert data.score_range == (0.0, 5.0)
    assert sorted(set(data.labels)) == [0.0, 0.5, 1.0]
    assert "scores 0–5 rescaled to 0–1" in data.describe()


def test_user_mapping_and_override(tmp_path):
    csv = rows_for("regression").replace("sentence1,sentence2,score", "q,a,sim_value")
    with pytest.raises(TrainingDataError, match="Cannot tell"):
        load_training_data(csv.encode(), "t.csv")
    data = load_training_data(csv.encode(), "t.csv", objective="cosent",
                              columns={"sentence1": "q", "sentence2": "a", "score": "sim_value"})
    assert data.objective == "cosent" and data.columns["score"] == "sim_value"
    with pytest.raises(TrainingDataError, match="Objective triplet needs"):
        load_training_data(rows_for("regression").encode(), "t.csv", objective="triplet")


def test_jsonl_and_mrpc_style_labels():
    lines = [json.dumps({"question1": _sentence(i), "question2": _sentence(i + 1),
                         "is_duplicate": i % 2}) for i in range(20)]
    data = load_training_data("\n".join(lines).encode(), "dups.jsonl")
    assert data.kind == "contrastive" and data.labels[:2] == [0, 1]


def test_split_dev_holds_out_ten_percent():
    data = load_training_data(rows_for("regression", 40).encode(), "t.csv")
    train, dev = split_dev(data, 0.1, seed=1)
    assert (len(train), len(dev)) == (36, 4)
    assert not set(zip(*dev.texts, strict=True)) - set(zip(*data.texts, strict=True))


# ---- bad files -------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "message"), [
    ("premise,hypothesis,label\n" + "a,b,entailment\n" * 20 + "c,d,maybe\n",
     r"unknown label\(s\) \['maybe'\] in line 22; valid labels are: contradiction"),
    ("sentence1,sentence2,score\n" + "a,b,1\n" * 20 + "c,d,high\ne,f,\n",
     r"non-numeric score\(s\) \['', 'high'\] in line 22, line 23"),
    ("premise,hypothesis,label\n" + "a,b,neutral\n" * 20,
     "fewer than 2 classes"),
    ("sentence1,sentence2,label\n" + "a,b,1\n" * 20,
     "fewer than 2 classes"),
    ("sentence1,sentence2,score\n" + "a,b,1\nc,d,2\n" * 10 + ",x,3\n",
     "empty sentence1 text in line 22"),
    ("sentence1,sentence2,score\n" + "a,b,1\nc,d,2\n" * 5,
     "10 usable examples, fewer than one batch of 16"),
])
def test_bad_training_files_name_the_problem_and_rows(text, message):
    with pytest.raises(TrainingDataError, match=message):
        load_training_data(text.encode(), "bad.csv")


def test_bad_file_starts_no_job(app, tiny_bert):
    bad = ("premise,hypothesis,label\n" + "a,b,entailment\n" * 20 + "c,d,maybe\n").encode()
    with pytest.raises(TrainingDataError):
        request_finetune(app, bad, train_filename="bad.csv", name="m1", base=str(tiny_bert))
    assert queue.recent(app.db) == []


# ---- the job ---------------------------------------------------------------------------


def _start(app, tiny_bert, name, **hyper):
    return request_finetune(app, rows_for("regression", 48).encode(), train_filename="t.csv",
                          name=name, base=str(tiny_bert), batch_size=8, **hyper)


@pytest.mark.parametrize("average_decay", [0.0, 0.9])
def test_killed_job_resumes_from_its_checkpoint(app, tiny_bert, average_decay):
    hyper = {"epochs": 2, "checkpoint_every": 3, "average_decay": average_decay}
    job_a = _start(app, tiny_bert, "resumed", **hyper).job_id
    payload = parse_payload("finetune", queue.get(app.db, job_a).payload)
    lease_a = queue.claim(app.db, "test:1").lease
    assert lease_a.job_id == job_a
    with pytest.raises(Killed):
        finetune(KillAfter(app, lease_a, 5), payload)
    assert (work_folder(app, "resumed") / "checkpoint.safetensors").is_file()
    assert not (app.settings.models_dir / "resumed").exists()
    result = finetune(TaskContext(app, lease_a), payload)
    assert result["resumed_from"] == 3
    steps = [e["step"] for e in training_history(app, "resumed")["entries"] if "loss" in e]
    total = training_history(app, "resumed")["total"]
    assert steps == list(range(1, total + 1))  # 4 and 5 were redone from 3, once

    # the same training without the interruption ends with the same weights
    job_b = _start(app, tiny_bert, "straight", **hyper).job_id
    lease_b = queue.claim(app.db, "test:2").lease
    assert lease_b.job_id == job_b
    finetune(TaskContext(app, lease_b), parse_payload("finetune", queue.get(app.db, job_b).payload))
    texts = ["a dog runs", "the cat is here"]
    resumed = SiameseEncoder.load(app.settings.models_dir / "resumed", device="cpu")
    straight = SiameseEncoder.load(app.settings.models_dir / "straight", device="cpu")
    np.testing.assert_allclose(resumed.encode(texts), straight.encode(texts), atol=1e-5)


def _small_trainer(tiny_bert, work_dir, **config) -> Trainer:
    """A Trainer on 32 regression pairs, batch 8, that checkpoints every 2 steps."""
    data = load_training_data(rows_for("regression").encode(), "train.csv", batch_size=8)
    encoder = SiameseEncoder.load(tiny_bert, device="cpu")
    cfg = TrainConfig(batch_size=8, lr=1e-3, checkpoint_every=2, epochs=2, **config)
    return Trainer(encoder, data, data.subset([0, 1, 2, 3]), cfg, work_dir)


def test_checkpoint_restores_optimizer_schedule_and_rng_exactly(tiny_bert, tmp_path):
    """Save after 3 steps, load into a fresh trainer: every part of the state is equal."""
    first = _small_trainer(tiny_bert, tmp_path, average_decay=0.9)
    first.encoder.train()
    for rows in ([0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15], [1, 3, 5, 7, 9, 11,
                                                                           13, 15]):
        first.train_step(rows)
    first.state.step = 3
    torch.manual_seed(123)
    first._save_checkpoint()
    assert not list(tmp_path.glob("*.pt"))  # safetensors plus JSON, no pickle
    second = _small_trainer(tiny_bert, tmp_path, average_decay=0.9)
    torch.manual_seed(0)
    second._resume()
    assert second.state.step == second.state.resumed_from == 3
    assert torch.equal(torch.get_rng_state(), _rng_after_seed(123))
    a, b = first.optimizer.state_dict(), second.optimizer.state_dict()
    assert a["param_groups"] == b["param_groups"]
    for param, values in a["state"].items():
        for name, value in values.items():
            assert torch.equal(value, b["state"][param][name]), (param, name)
    assert first.scheduler.state_dict() == second.scheduler.state_dict()
    for x, y in zip(first.encoder.state_dict().values(), second.encoder.state_dict().values(),
                    strict=True):
        assert torch.equal(x, y)
    for x, y in zip(first.average.average, second.average.average, strict=True):
        assert torch.equal(x, y)
    # and the next step is the same step (both from the restored RNG: same dropout)
    first.encoder.train()
    second.encoder.train()
    restored = torch.get_rng_state()
    loss_first = first.train_step([2, 4, 6, 8, 10, 12, 14, 0])
    torch.set_rng_state(restored)
    assert second.train_step([2, 4, 6, 8, 10, 12, 14, 0]) == loss_first


def _rng_after_seed(seed: int) -> torch.Tensor:
    torch.manual_seed(seed)
    return torch.get_rng_state()


class _Planted:
    """Unpickling this runs ``open(marker, "w")``: proof that a pickle was executed."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("name", ["checkpoint.safetensors", "best.safetensors"])
def test_a_checkpoint_with_a_pickle_payload_is_refused_not_run(tiny_bert, tmp_path, name):
    import pickle

    from searchapp.errors import CheckpointError
    from searchapp.training.trainer import load_weights

    marker = tmp_path / "pwned"
    work = tmp_path / "work"
    work.mkdir()
    planted = work / name
    probe = tmp_path / "probe"
    pickle.loads(pickle.dumps(_Planted(probe)))  # the payload is live: unpickling runs it
    assert probe.exists()
    torch.save({"encoder": _Planted(marker)}, planted)  # what an old .pt checkpoint looks like
    trainer = _small_trainer(tiny_bert, work)
    with pytest.raises(CheckpointError, match=f"{name} is not a training checkpoint"):
        trainer._resume() if name.startswith("checkpoint") else load_weights(planted)
    assert not marker.exists()
    # a raw pickle under the old name is never read: training starts afresh
    (work / name).unlink()
    torch.save({"config": _Planted(marker)}, work / "checkpoint.pt")
    trainer._resume()
    assert trainer.state.step == 0 and not marker.exists()


def test_the_weight_average_is_what_gets_evaluated_and_kept(tiny_bert, tmp_path):
    data = load_training_data(rows_for("regression").encode(), "train.csv", batch_size=8)
    encoder = SiameseEncoder.load(tiny_bert, device="cpu")
    start = [t.clone() for t in encoder.state_dict().values() if t.is_floating_point()]
    config = TrainConfig(batch_size=8, lr=1e-3, max_steps=4, average_decay=0.5)
    trainer = Trainer(encoder, data, data.subset([0, 1, 2, 3]), config, tmp_path)
    raw = {}
    trainer.progress = lambda done, total, message: raw.update(
        {done: [t.clone() for t in encoder.state_dict().values() if t.is_floating_point()]})
    result = trainer.run()
    assert result["best_step"] == 4  # the only evaluation after training
    kept = [t for t in encoder.state_dict().values() if t.is_floating_point()]
    for k, a in zip(kept, trainer.average.average, strict=True):
        torch.testing.assert_close(k, a)
    assert any(not torch.equal(k, r) for k, r in zip(kept, raw[4], strict=True))
    assert any(not torch.equal(k, s) for k, s in zip(kept, start, strict=True))


def test_weight_average_state_round_trip():
    from searchapp.training.averaging import WeightAverage

    layer = torch.nn.Linear(3, 2)
    average = WeightAverage([layer], decay=0.9)
    with torch.no_grad():
        layer.weight.mul_(3.0)
    average.update()
    copy = WeightAverage([torch.nn.Linear(3, 2)], decay=0.9)
    copy.load_state_dict(average.state_dict())
    for a, b in zip(average.average, copy.average, strict=True):
        torch.testing.assert_close(a, b)
    before = layer.weight.clone()
    with average.applied():
        assert not torch.equal(layer.weight, before)
    assert torch.equal(layer.weight, before)  # the raw weights are back


def test_saved_model_loads_in_sentence_transformers(app, tiny_bert):
    from sentence_transformers import SentenceTransformer

    from searchapp.embedding.models import read_card
    from searchapp.jobs.worker import run_until_done

    started = _start(app, tiny_bert, "tuned")
    job = run_until_done(app, started.job_id)
    assert job.status == "succeeded", job.error
    path = app.settings.models_dir / "tuned"
    texts = ["A man is playing a guitar.", "Someone plays music.", "A bowl of soup."]
    ours = SiameseEncoder.load(path, device="cpu", precision="fp32").encode(texts)
    theirs = SentenceTransformer(str(path), device="cpu").encode(texts)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    assert not np.allclose(ours, SiameseEncoder.load(tiny_bert, device="cpu").encode(texts))
    card = read_card(path)
    assert card["base_model"] == str(tiny_bert) and card["objective"] == "cosent"
    assert set(card["metrics"]["before"]) == set(card["metrics"]["after"]) == {"spearman",
                                                                               "pearson"}
    assert card["hyperparameters"]["batch_size"] == 8 and card["data"]["examples"] == 43
    assert card["dev"]["examples"] == 5
    assert not (work_folder(app, "tuned") / "checkpoint.safetensors").exists()


def test_cancel_stops_training(app, tiny_bert):
    from searchapp.jobs.worker import run_job

    job_id = _start(app, tiny_bert, "cancelled", epochs=3).job_id
    claimed = queue.claim(app.db, "test")
    queue.cancel(app.db, job_id)
    assert run_job(app, claimed) == "cancelled"
    assert not (app.settings.models_dir / "cancelled").exists()


# ---- CLI -------------------------------------------------------------------------------
def test_cli_finetune_evaluate_models(app, tiny_bert, tmp_path, capsys):
    from searchapp.cli import main

    train = tmp_path / "train.csv"
    train.write_text(rows_for("regression", 40))
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(rows_for("contrastive", 20).replace(",", "\t"))
    assert main(["finetune", "--train", str(train), "--objective", "cosent", "--base",
                 str(tiny_bert), "--name", "cli-model", "--epochs", "1", "--batch-size", "8",
                 "--wait"]) == 0
    out = capsys.readouterr().out
    assert "objective cosent" in out and "Saved model cli-model" in out
    assert main(["evaluate", "--model", "cli-model", "--sts", str(train), "--json"]) == 0
    sts = json.loads(capsys.readouterr().out)
    assert set(sts) == {"spearman", "pearson", "n"} and sts["n"] == 40
    assert main(["evaluate", "--model", "cli-model", "--pairs", str(pairs), "--threshold",
                 "0.5", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {"ap", "f1", "precision", "recall", "threshold"} <= set(got)
    assert got["threshold"] == 0.5
    assert main(["models"]) == 0
    listing = capsys.readouterr().out
    assert "cli-model" in listing and "spearman=" in listing
    assert main(["finetune", "--train", str(train), "--name", "cli-model",
                 "--base", str(tiny_bert)]) == 1
    assert "already exists" in capsys.readouterr().err
