"""The siamese encoder against sentence-transformers and against hand computation.

The float32 path must match sentence-transformers to 1e-5; the fast path
(bf16 autocast, forced here so that it is tested on every CPU) must keep every
vector within cosine 0.9999 of sentence-transformers' float32 one.
"""

import numpy as np
import pytest
import torch

from searchapp.embedding.encoder import SiameseEncoder
from searchapp.embedding.pooling import pool
from searchapp.embedding.speed import EXACT_COSINE
from searchapp.errors import ModelError


@pytest.fixture(scope="module")
def fp32_encoder(bundled_path):
    return SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")


@pytest.fixture(scope="module")
def bf16_encoder(bundled_path):
    return SiameseEncoder.load(bundled_path, device="cpu", precision="bf16")


@pytest.fixture(scope="module")
def st_model(bundled_path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(bundled_path), device="cpu")


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def _stsb_test_sentences(stsb) -> list[str]:
    test = stsb[stsb.split == "test"]
    return list(dict.fromkeys([*test.sentence1, *test.sentence2]))


def test_bundled_model_matches_sentence_transformers_on_stsb_test(stsb, fp32_encoder, st_model):
    sentences = _stsb_test_sentences(stsb)
    ours = fp32_encoder.encode(sentences)
    theirs = st_model.encode(sentences)
    assert fp32_encoder.speed_path == "cpu-fp32"
    assert ours.dtype == np.float32 and ours.shape == (len(sentences), 384)
    assert np.abs(ours - theirs).max() <= 1e-5


def test_fast_path_is_within_cosine_0_9999_of_sentence_transformers(stsb, shared_data,
                                                                    bf16_encoder, st_model):
    import pandas as pd

    nli = pd.read_csv(shared_data / "nli" / "nli-train-small.tsv.gz", sep="\t",
                      keep_default_na=False)
    premises = list(dict.fromkeys(nli.premise))[:400]
    long_texts = [" ".join(premises[i:i + 25]) for i in range(0, 400, 25)]  # past 256 tokens
    sentences = [*_stsb_test_sentences(stsb)[:1500], *premises[:200], *long_texts]
    lengths = [len(ids) for ids in bf16_encoder.tokenizer(long_texts)["input_ids"]]
    assert min(lengths) > bf16_encoder.max_seq_length  # truncated to the full 256 tokens
    ours = bf16_encoder.encode(sentences)
    theirs = st_model.encode(sentences)
    assert bf16_encoder.speed_path == "cpu-bf16" and ours.dtype == np.float32
    assert _cosines(ours, theirs).min() >= EXACT_COSINE
    assert np.abs(ours - theirs).max() > 1e-5  # it really computed in reduced precision
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("path", ["fp32", "bf16"])
def test_encode_keeps_input_order_and_normalises(fp32_encoder, bf16_encoder, path):
    encoder = fp32_encoder if path == "fp32" else bf16_encoder
    texts = ["short", "a much longer sentence about cats and dogs playing", "mid length one"]
    for together in (encoder.encode(texts, batch_size=2), encoder.encode(texts)):
        one_by_one = np.vstack([encoder.encode([t]) for t in texts])
        if path == "fp32":
            assert np.abs(together - one_by_one).max() < 1e-5
        else:  # bf16 rounding depends on the batch's shape; each vector stays exact
            assert _cosines(together, one_by_one).min() >= EXACT_COSINE
            assert (together @ one_by_one.T).argmax(axis=1).tolist() == [0, 1, 2]
        assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)


def test_training_forward_stays_float32_on_the_fast_path(fp32_encoder, bf16_encoder):
    texts = ["A man is playing a guitar.", "Two dogs run through a field of snow."]
    features = bf16_encoder.tokenize(texts)
    vectors = bf16_encoder(features)  # what the trainer calls
    assert vectors.dtype == torch.float32
    assert torch.allclose(vectors, fp32_encoder(features), atol=1e-6)
    assert not np.allclose(bf16_encoder.encode(texts), vectors.detach().numpy(), atol=1e-6)


@pytest.mark.parametrize("mode", ["mean", "max", "cls"])
def test_pooling_matches_hand_computation_on_tiny_bert(tiny_bert, mode):
    enc = SiameseEncoder.load(tiny_bert, device="cpu", pooling=mode, precision="fp32")
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

    enc = SiameseEncoder.load(tiny_bert, device="cpu", pooling="max", precision="fp32")
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
