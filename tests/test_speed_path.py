"""Choosing the encoder's speed path: CPU flags, the load-time probe, the setting, batching."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.config import Settings
from searchapp.embedding import speed
from searchapp.embedding.encoder import SiameseEncoder
from searchapp.embedding.speed import (
    cpu_path,
    parse_cpuinfo,
    probe_texts,
    probe_verdict,
    token_batches,
)
from searchapp.errors import ConfigError, ModelError

# Shortened /proc/cpuinfo texts of two processors each, in the kernel's format.
_CPU_BLOCK = """processor\t: {n}
vendor_id\t: GenuineIntel
model name\t: {model}
flags\t\t: fpu vme sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 {extra}
vmx flags\t: vnmi preemption_timer invvpid ept_x_only
bugs\t\t: spectre_v1 spectre_v2
"""
SAPPHIRE_RAPIDS = "\n".join(
    _CPU_BLOCK.format(n=n, model="Intel(R) Xeon(R) Platinum 8480+",
                      extra="avx512f avx512bw avx512_vnni avx512_bf16 amx_bf16 amx_tile")
    for n in (0, 1))
ICE_LAKE = "\n".join(
    _CPU_BLOCK.format(n=n, model="Intel(R) Xeon(R) Platinum 8375C",
                      extra="avx512f avx512bw avx512_vnni avx512_vbmi2")
    for n in (0, 1))
AVX512_BF16_ONLY = _CPU_BLOCK.format(n=0, model="AMD EPYC 9654", extra="avx512f avx512_bf16")


def test_cpuinfo_flags_decide_whether_bf16_is_tried():
    spr, icl = parse_cpuinfo(SAPPHIRE_RAPIDS), parse_cpuinfo(ICE_LAKE)
    assert spr.model == "Intel(R) Xeon(R) Platinum 8480+"
    assert {"amx_bf16", "avx512_bf16", "avx2"} <= spr.flags
    assert "ept_x_only" not in spr.flags  # "vmx flags" is another line
    assert spr.native_bf16 and parse_cpuinfo(AVX512_BF16_ONLY).native_bf16
    assert not icl.native_bf16  # AVX-512 without its BF16 extension
    assert not parse_cpuinfo("").native_bf16  # no /proc/cpuinfo: assume nothing
    assert cpu_path("auto", spr)[0] == "cpu-bf16"
    path, why = cpu_path("auto", icl)
    assert path == "cpu-fp32" and "avx512_bf16" in why and "amx_bf16" in why
    assert cpu_path("fp32", spr)[0] == "cpu-fp32"
    assert cpu_path("bf16", icl) == ("cpu-bf16", "forced with precision=bf16 although the CPU "
                                     "has none of avx512_bf16, amx_bf16 (emulated: slow)")


def test_encoder_picks_bf16_only_on_a_cpu_that_has_it(bundled_path):
    enc = SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")
    texts = ["A man is playing a guitar.", "Stocks fell sharply on Tuesday."]
    reference = enc.encode(texts)
    assert enc.select_speed_path("auto", parse_cpuinfo(ICE_LAKE)) == "cpu-fp32"
    assert np.array_equal(enc.encode(texts), reference)
    assert enc.select_speed_path("auto", parse_cpuinfo(SAPPHIRE_RAPIDS)) == "cpu-bf16"
    assert "probe cosine" in enc.speed_reason
    assert not np.array_equal(enc.encode(texts), reference)


def test_a_failed_probe_falls_back_to_fp32(bundled_path, caplog):
    enc = SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")
    spr = parse_cpuinfo(SAPPHIRE_RAPIDS)
    # no reduced-precision path reproduces every float32 probe vector to cosine 1.0
    with caplog.at_level(logging.WARNING, logger="searchapp.embedding.encoder"):
        assert enc.select_speed_path("auto", spr, threshold=1.0) == "cpu-fp32"
    assert "failed the probe" in enc.speed_reason
    assert "Not using cpu-bf16" in caplog.text
    # a forced path is taken as asked, without the probe
    assert enc.select_speed_path("bf16", spr, threshold=1.0) == "cpu-bf16"


def test_probe_texts_reach_the_max_length(bundled_path):
    enc = SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")
    lengths = [len(ids) for ids in enc.tokenizer(probe_texts())["input_ids"]]
    assert min(lengths) <= 5 and max(lengths) > enc.max_seq_length


def test_probe_verdict_compares_every_row():
    ref = np.eye(3, dtype=np.float32)
    close = ref + np.float32(0.005) * np.roll(ref, 1, axis=1)  # cosine 0.9999875
    passed, lowest = probe_verdict(ref, close, threshold=0.99995)
    assert passed and lowest == pytest.approx(0.9999875, abs=2e-7)
    worse = close.copy()
    worse[2] = [0.05, 0.0, 1.0]  # one row at cosine 0.99875
    passed, lowest = probe_verdict(ref, worse, threshold=0.99995)
    assert not passed and lowest == pytest.approx(0.99875, abs=1e-5)


def test_token_batches_cover_every_item_once_within_the_budget():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 300, size=1000)
    batches = token_batches(lengths, budget=2048, max_batch=64)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(1000))
    assert np.all(np.diff(lengths[flat]) <= 0)  # longest first: a batch pads little
    for batch in batches:
        assert len(batch) <= 64
        assert len(batch) * lengths[batch].max() <= 2048 or len(batch) == 1
    short = token_batches([10] * 1000, budget=2048, max_batch=512)
    assert [len(b) for b in short] == [204] * 4 + [184]  # 2048 // 10 per batch


def test_precision_setting_is_validated_and_reaches_the_encoder():
    assert Settings.from_env({}).precision == "auto"
    assert Settings.from_env({"SEARCHAPP_PRECISION": "BF16"}).precision == "bf16"
    with pytest.raises(ConfigError, match=r"SEARCHAPP_PRECISION='fp16'.*auto, fp32, bf16"):
        Settings.from_env({"SEARCHAPP_PRECISION": "fp16"})
    with pytest.raises(ModelError, match="auto, fp32, bf16"):
        SiameseEncoder.load("/nonexistent", precision="half")


def test_load_encoder_passes_the_precision_setting():
    from searchapp.embedding.models import load_encoder

    forced = Settings.from_env({"SEARCHAPP_DEVICE": "cpu", "SEARCHAPP_PRECISION": "bf16"})
    assert load_encoder("all-MiniLM-L6-v2", forced).speed_path == "cpu-bf16"
    plain = Settings.from_env({"SEARCHAPP_DEVICE": "cpu", "SEARCHAPP_PRECISION": "fp32"})
    assert load_encoder("all-MiniLM-L6-v2", plain).speed_path == "cpu-fp32"


def test_one_short_text_goes_on_the_query_path_and_batches_on_the_batch_path(bundled_path):
    enc = SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")
    query, texts = ["a dog running on the beach"], ["A man plays a guitar.", "Dogs run."]
    fp32_query, fp32_batch = enc.encode(query), enc.encode(texts)
    enc.speed_path, enc.query_path = "cpu-bf16", "cpu-fp32"
    assert np.array_equal(enc.encode(query), fp32_query)  # the query: float32, exactly
    assert not np.array_equal(enc.encode(texts), fp32_batch)  # the batch: bf16
    enc.query_path = "cpu-bf16"
    assert not np.array_equal(enc.encode(query), fp32_query)
    long_text = ["word " * (speed.QUERY_TOKENS + 10)]
    enc.query_path = "cpu-fp32"  # a long single text is a document: the batch path
    assert np.array_equal(enc.encode(long_text), enc._encode_on("cpu-bf16", long_text, None))


def test_the_query_path_is_the_faster_of_bf16_and_fp32_as_timed_at_load(bundled_path,
                                                                        monkeypatch):
    enc = SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")
    spr = parse_cpuinfo(SAPPHIRE_RAPIDS)
    timed = {"cpu-bf16": 0.0146, "cpu-fp32": 0.0117}
    monkeypatch.setattr(enc, "_time_one_query", lambda path: timed)
    assert enc.select_speed_path("auto", spr) == "cpu-bf16"
    assert enc.query_path == "cpu-fp32"
    assert "one query: cpu-fp32 11.7 ms, cpu-bf16 14.6 ms" in enc.speed_reason
    timed["cpu-bf16"] = 0.005
    enc.select_speed_path("auto", spr)
    assert enc.query_path == "cpu-bf16"
    enc.select_speed_path("bf16", spr)  # forced: queries too
    assert enc.query_path == "cpu-bf16"
    enc.select_speed_path("fp32", spr)
    assert enc.query_path == "cpu-fp32"


def test_the_load_time_query_timing_measures_both_paths(bundled_path):
    enc = SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")
    seconds = enc._time_one_query("cpu-bf16", rounds=2)
    assert set(seconds) == {"cpu-bf16", "cpu-fp32"} and all(s > 0 for s in seconds.values())
    assert enc._time_one_query("cpu-fp32") == {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 30000), min_size=1, max_size=40), min_size=1,
                max_size=20))
def test_numpy_padding_equals_the_tokenizers_own(bundled_encoder, rows):
    ids, mask = speed.padded(rows, bundled_encoder.tokenizer.pad_token_id)
    theirs = bundled_encoder.tokenizer.pad({"input_ids": rows}, return_tensors="np")
    assert ids.tolist() == theirs["input_ids"].tolist()
    assert mask.tolist() == theirs["attention_mask"].tolist()


@given(st.lists(st.integers(0, 70), min_size=1, max_size=30), st.integers(1, 16))
def test_padding_to_a_multiple_keeps_every_token_and_masks_the_rest(lengths, multiple):
    rows = [[i + 1] * n for i, n in enumerate(lengths)]
    ids, mask = speed.padded(rows, pad_id=0, multiple=multiple)
    assert ids.shape[1] % multiple == 0 and ids.shape[1] >= max(max(lengths), 1)
    assert ids.shape[1] - max(max(lengths), 1) < multiple
    for row, got, seen in zip(rows, ids, mask, strict=True):
        assert got[:len(row)].tolist() == row and not got[len(row):].any()
        assert seen.sum() == len(row) and seen[:len(row)].all()


def test_the_gpus_wider_padding_gives_the_same_vectors(bundled_path):
    """The CUDA path pads batches to a multiple of 8 (speed.CUDA_PAD_MULTIPLE); the same
    code on the CPU, in float32: masked padding must not move a vector."""
    encoder = SiameseEncoder.load(bundled_path, device="cpu", precision="fp32")
    texts = ["A man is playing a guitar.", "Hi.", "Stocks fell sharply on Tuesday after "
             "the central bank raised interest rates.", "Two dogs run through a field."]
    plain = encoder.encode(texts)
    encoder.pad_multiple = speed.CUDA_PAD_MULTIPLE
    wide = encoder.encode(texts)
    assert np.allclose(plain, wide, atol=1e-5)
