"""The siamese encoder against sentence-transformers and against hand computation."""

import numpy as np
import pytest
import torch

from searchapp.encoder import SiameseEncoder, pool
from searchapp.errors import ModelError


def test_bundled_model_matches_sentence_transformers_on_stsb_test(stsb, bundled_path,
                                                                  bundled_encoder):
    from sentence_transformers import SentenceTransformer

    test = stsb[stsb.split == "test"]
    sentences = list(dict.fromkeys([*test.sentence1, *test.sentence2]))
    ours = bundled_encoder.encode(sentences)
    theirs = SentenceTransformer(str(bundled_path), device="cpu").encode(sentences)
    assert ours.dtype == np.float32 and ours.shape == (len(sentences), 384)
    assert np.abs(ours - theirs).max() <= 1e-5


def test_encode_keeps_input_order_and_normalises(bundled_encoder):
    texts = ["short", "a much longer sentence about cats and dogs playing", "mid length one"]
    together = bundled_encoder.encode(texts, batch_size=2)
    one_by_one = np.vstack([bundled_encoder.encode([t]) for t in texts])
    assert np.abs(together - one_by_one).max() < 1e-5
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert bundled_encoder.encode([]).shape == (0, 384)


@pytest.mark.parametrize("mode", ["mean", "max", "cls"])
def test_pooling_matches_hand_computation_on_tiny_bert(tiny_bert, mode):
    enc = SiameseEncoder.load(tiny_bert, device="cpu", pooling=mode)
    enc.normalize = False
    texts = ["a cat", "the dog sat on the mat today"]
    features = enc.tokenize(texts)
    with torch.no_grad():
        tokens = enc.transformer(**features).last_hidden_state.numpy()
    mask = features["attention_mask"].numpy()
    expected = []
    for t, m in zip(tokens, mask, strict=True):
        real = t[m == 1]  # (real tokens, dim)
        expected.append({"mean": real.mean(0), "max": real.max(0), "cls": t[0]}[mode])
    got = enc.encode(texts)
    assert np.abs(got - np.array(expected)).max() < 1e-5


def test_pool_ignores_padding():
    tokens = torch.tensor([[[1.0, -5.0], [3.0, 1.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool(tokens, mask, "mean").tolist() == [[2.0, -2.0]]
    assert pool(tokens, mask, "max").tolist() == [[3.0, 1.0]]
    with pytest.raises(ModelError, match="mean, max, cls"):
        pool(tokens, mask, "median")


def test_saved_folder_loads_in_sentence_transformers_with_same_vectors(tiny_bert, tmp_path):
    from sentence_transformers import SentenceTransformer

    enc = SiameseEncoder.load(tiny_bert, device="cpu", pooling="max")
    out = enc.save(tmp_path / "saved")
    texts = ["one sentence", "and another, longer sentence"]
    theirs = SentenceTransformer(str(out), device="cpu").encode(texts)
    assert np.abs(enc.encode(texts) - theirs).max() < 1e-5
    again = SiameseEncoder.load(out, device="cpu")
    assert again.pooling == "max" and again.max_seq_length == enc.max_seq_length


def test_loading_refuses_folders_without_safetensors(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="safetensors"):
        SiameseEncoder.load(tmp_path)
    with pytest.raises(ModelError, match="not a model folder"):
        SiameseEncoder.load(tmp_path / "missing")
