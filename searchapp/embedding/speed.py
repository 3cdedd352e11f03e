"""Which inference path is fast *and exact* on this machine, and how to batch for it.

``encode`` runs the same network in one of a few "speed paths":

- ``cpu-bf16``: matrix products under ``torch.autocast("cpu", bfloat16)``,
  everything else (layer norms, residual sums, pooling) in float32. Fast only
  where the CPU computes bf16 natively (``avx512_bf16`` or AMX ``amx_bf16`` in
  ``/proc/cpuinfo``); elsewhere torch emulates it and it is slower than fp32.
- ``cpu-fp32``: plain float32, bit for bit what sentence-transformers computes.
- ``cuda-bf16`` / ``cuda-fp16``: autocast on the GPU (bf16 where the GPU has
  it), larger batches.
- ``cuda-fp32``: float32 on the GPU (forced with ``precision="fp32"``).

A reduced-precision path only counts if it is exact: every vector within
cosine ``EXACT_COSINE`` (0.9999) of the float32 one. With ``precision="auto"``
the encoder checks that at load time on ``probe_texts()`` (short and long
sentences, up to the model's max length) against a margin (``PROBE_COSINE``)
and falls back to float32 otherwise. This module holds the decisions that need
no torch (CPU flags, the choice, the probe verdict, batching by token budget);
``searchapp/embedding/encoder.py`` runs them.

Example:
    >>> cpu = parse_cpuinfo("model name : Some CPU\\nflags : fpu sse2 avx2 amx_bf16\\n")
    >>> cpu.native_bf16, cpu_path("auto", cpu)[0]
    (True, 'cpu-bf16')
    >>> cpu_path("auto", parse_cpuinfo("flags : fpu sse2 avx2\\n"))[0]
    'cpu-fp32'
    >>> [b.tolist() for b in token_batches([3, 9, 4, 8], budget=20, max_batch=8)]
    [[1, 3], [2, 0]]
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchapp.config import PRECISIONS
from searchapp.errors import ModelError

log = logging.getLogger(__name__)

BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # either means native bf16 arithmetic
EXACT_COSINE = 0.9999  # the bar: every vector at least this close to the fp32 one
PROBE_COSINE = 0.99992  # what the load-time probe must reach (the bar plus a margin)
# Tokens per batch (sentences × padded length). Measured on 10,000 STSb/NLI
# sentences with 2 cores (benchmarks/results/encode_speed.json, "experiments"):
# 1,024-3,072 are within noise for fp32 and bf16; 512 pays per-batch overhead,
# 8,192 and more spill the cache (bf16 5.3-5.8 s at 2,048, 6.8 s at 8,192).
# One text of at most this many tokens (a query) is encoded on the encoder's query path:
# there the cost is reading the weights once, not arithmetic, and bf16 autocast (which
# casts every weight on every call) lost to float32 on an EPYC with avx512_bf16: 14.7
# against 11.6 ms per query (benchmarks/query_latency.py). Which wins is timed at load.
QUERY_TOKENS = 64
QUERY_PROBE = "how do I reset the password of my account on the new phone"
QUERY_GAIN = 0.9  # a reduced-precision query path must take under 90% of float32's time
CPU_TOKEN_BUDGET = 2048
# On an H200 (benchmarks/results/encode_speed_cuda*.json), 32,768 tokens and at most 512 texts
# a batch were as fast as 131,072 and 4,096 (short sentences 0.93 against 1.35 s, sections
# 2.34 against 2.56 s, best of 3) and 8,192 was slower (6.1 against 3.5 s, first round).
CUDA_TOKEN_BUDGET = 32768
CUDA_PAD_MULTIPLE = 8  # batch widths rounded up to this on a GPU (speed.padded)
MAX_BATCH = 512  # sentences per batch, whatever their length
TOKENIZE_CHARS = 200_000  # characters per tokenizer call (a checkpoint between calls)


@dataclass(frozen=True)
class CpuInfo:
    """The CPU's model name and feature flags, as ``/proc/cpuinfo`` lists them."""

    model: str
    flags: frozenset[str]

    @property
    def native_bf16(self) -> bool:
        """True when the CPU has bf16 instructions (AVX512-BF16 or AMX-BF16)."""
        return any(flag in self.flags for flag in BF16_FLAGS)

    @property
    def relevant_flags(self) -> list[str]:
        """The flags that matter for the choice (and for benchmark reports)."""
        wanted = (*BF16_FLAGS, "amx_tile", "amx_int8", "avx512f", "avx512_vnni", "avx512_fp16",
                  "avx_vnni", "avx2", "fma")
        return [flag for flag in wanted if flag in self.flags]


def parse_cpuinfo(text: str) -> CpuInfo:
    """Model name and flags of the first processor in a ``/proc/cpuinfo`` text.

    Example:
        >>> sorted(parse_cpuinfo("model name\\t: Xeon\\nflags\\t\\t: sse2 avx512_bf16\\n").flags)
        ['avx512_bf16', 'sse2']
    """
    model, flags = "unknown", None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "model name" and model == "unknown":
            model = value.strip()
        elif key in ("flags", "features") and flags is None:  # "Features" on ARM
            flags = frozenset(value.split())
    return CpuInfo(model=model, flags=flags or frozenset())


def read_cpuinfo(path: str | Path = "/proc/cpuinfo") -> CpuInfo:
    """This machine's CPU; no flags (so no bf16) where the file is missing (macOS, Windows)."""
    try:
        return parse_cpuinfo(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return CpuInfo(model="unknown", flags=frozenset())


def check_precision(precision: str) -> str:
    """``precision`` in lower case if valid, else ModelError listing the valid values."""
    value = (precision or "auto").lower()
    if value not in PRECISIONS:
        raise ModelError(f"precision={precision!r} is not valid; use one of: "
                         f"{', '.join(PRECISIONS)}.")
    return value


def cpu_path(precision: str, cpu: CpuInfo) -> tuple[str, str]:
    """The CPU path to try for ``precision`` (auto|fp32|bf16), and why.

    ``auto`` tries bf16 only where the CPU flags show native bf16; the caller
    must still confirm it with the probe (``probe_verdict``). A forced ``bf16``
    is taken as asked, even where torch has to emulate it.
    """
    precision = check_precision(precision)
    if precision == "fp32":
        return "cpu-fp32", "precision=fp32 was asked for"
    if precision == "bf16":
        why = "forced with precision=bf16"
        if not cpu.native_bf16:
            why += f" although the CPU has none of {', '.join(BF16_FLAGS)} (emulated: slow)"
        return "cpu-bf16", why
    if not cpu.native_bf16:
        return "cpu-fp32", f"the CPU has none of {', '.join(BF16_FLAGS)}"
    native = ", ".join(f for f in BF16_FLAGS if f in cpu.flags)
    return "cpu-bf16", f"the CPU has native bf16 ({native})"


def fp32_path(path: str) -> str:
    """The float32 path on the same device: what a reduced-precision path is checked against.

    Example:
        >>> fp32_path("cpu-bf16"), fp32_path("cuda-fp16"), fp32_path("cpu-fp32")
        ('cpu-fp32', 'cuda-fp32', 'cpu-fp32')
    """
    return path.split("-")[0] + "-fp32"


def query_path(batch_path: str, seconds: dict[str, float]) -> tuple[str, str]:
    """The path for one short text, from the timed seconds of each path on it, and why.

    ``batch_path`` (the path chosen for batches) is kept only when it takes
    under ``QUERY_GAIN`` of the float32 time; float32 is exact, so a tie goes to it.

    Example:
        >>> query_path("cpu-bf16", {"cpu-bf16": 0.0146, "cpu-fp32": 0.0117})
        ('cpu-fp32', 'one query: cpu-fp32 11.7 ms, cpu-bf16 14.6 ms')
        >>> query_path("cpu-bf16", {"cpu-bf16": 0.004, "cpu-fp32": 0.0117})[0]
        'cpu-bf16'
    """
    fp32 = fp32_path(batch_path)
    if batch_path == fp32:
        return fp32, "one query: as batches"
    chosen = batch_path if seconds[batch_path] < QUERY_GAIN * seconds[fp32] else fp32
    other = batch_path if chosen == fp32 else fp32
    return chosen, (f"one query: {chosen} {seconds[chosen] * 1000:.1f} ms, "
                    f"{other} {seconds[other] * 1000:.1f} ms")


def probe_verdict(reference: np.ndarray, candidate: np.ndarray,
                  threshold: float = PROBE_COSINE) -> tuple[bool, float]:
    """Whether every candidate vector is within cosine ``threshold`` of its reference.

    Returns (passed, the smallest cosine). Rows are compared pairwise; vectors
    need not be normalised.

    Example:
        >>> ref = np.array([[1.0, 0.0], [0.0, 1.0]])
        >>> probe_verdict(ref, ref + [[0.0, 0.001], [0.0, 0.0]])
        (True, 0.9999995)
        >>> probe_verdict(ref, ref + [[0.0, 0.1], [0.0, 0.0]])[0]
        False
    """
    ref = reference / np.linalg.norm(reference, axis=1, keepdims=True)
    cand = candidate / np.linalg.norm(candidate, axis=1, keepdims=True)
    lowest = float(np.round((ref * cand).sum(axis=1).min(), 7))
    return bool(lowest >= threshold), lowest


_PROBE_SENTENCES = (
    "Hi.",
    "A man is playing a guitar.",
    "The quick brown fox jumps over the lazy dog near the riverbank at dawn.",
    "Stocks fell sharply on Tuesday after the central bank raised interest rates "
    "by half a percentage point, the largest increase in two decades.",
    "¿Dónde está la biblioteca? Zürich, naïve café, 東京, emoji 🙂 and numbers 3.14159.",
    "Two dogs run through a field.",
    "What is the best way to learn a new programming language quickly and well?",
)
_LONG_PARAGRAPH = (
    "A long document tests the attention over many positions: the committee met on a "
    "rainy afternoon to discuss the budget, the schedule and the plans for the new "
    "library, and after a lengthy debate about costs, staffing and opening hours it "
    "agreed to publish a report, invite comments from residents and vote again in spring. "
)


def probe_texts() -> list[str]:
    """Built-in sentences for the load-time check: short, medium, and one far past 256 tokens."""
    return [*_PROBE_SENTENCES, _LONG_PARAGRAPH * 2, _LONG_PARAGRAPH * 8]


def token_batches(lengths, budget: int, max_batch: int = MAX_BATCH) -> list[np.ndarray]:
    """Group items into batches of about ``budget`` tokens, longest items first.

    Items are sorted by length (longest first, ties in input order) so that a
    batch pads little; a batch grows while (its size + 1) × its longest length
    stays within ``budget`` and it has fewer than ``max_batch`` items. An item
    longer than the budget gets a batch of its own.

    Example:
        >>> [b.tolist() for b in token_batches([5, 5, 5, 50], budget=60)]
        [[3], [0, 1, 2]]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        width = max(int(lengths[order[start]]), 1)  # longest in this batch: it comes first
        size = max(1, min(budget // width, max_batch))
        batches.append(order[start:start + size])
        start += size
    return batches


def padded(ids: Sequence[Sequence[int]], pad_id: int, multiple: int = 1
           ) -> tuple[np.ndarray, np.ndarray]:
    """One batch of unpadded token ids → (ids, attention mask), both int64 (n, width).

    Rows are padded on the right with ``pad_id`` to the longest row, rounded up to a
    multiple of ``multiple``; the mask is 1 on real tokens. The same arrays as the
    tokenizer's ``pad`` (for ``multiple`` 1), built with numpy: on a GPU the forward
    pass is so fast that ``pad``'s Python loops over every id were half of an encode's
    time (a profile on an H200: 1.4 s of 2.3 s for 20,000 sentences). Rounding the
    width to 8 on a GPU gives its matrix products fewer distinct shapes to warm up.

    Example:
        >>> ids, mask = padded([[5, 6, 7], [8]], pad_id=0, multiple=4)
        >>> ids.tolist(), mask.tolist()
        ([[5, 6, 7, 0], [8, 0, 0, 0]], [[1, 1, 1, 0], [1, 0, 0, 0]])
    """
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    width = max(int(lengths.max(initial=0)), 1)
    width = -(-width // multiple) * multiple
    mask = np.arange(width) < lengths[:, None]  # (n, width) True on real tokens
    out = np.full((len(ids), width), pad_id, dtype=np.int64)
    out[mask] = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64,
                            count=int(lengths.sum()))  # row-major: each row's ids in order
    return out, mask.astype(np.int64)


def char_chunks(lengths, limit: int = TOKENIZE_CHARS) -> list[range]:
    """Consecutive ranges of items, each about ``limit`` characters (at least one item).

    The tokenizer is called once per range, so a caller can check between them
    whether to go on (a cancelled job): one call over millions of characters
    takes seconds and cannot be interrupted.

    Example:
        >>> char_chunks([4, 4, 4, 20, 1], limit=8)
        [range(0, 2), range(2, 3), range(3, 4), range(4, 5)]
    """
    chunks, start, used = [], 0, 0
    for i, n in enumerate(lengths):
        if i > start and used + n > limit:
            chunks.append(range(start, i))
            start, used = i, 0
        used += n
    if start < len(lengths):
        chunks.append(range(start, len(lengths)))
    return chunks


def fixed_batches(lengths, batch_size: int) -> list[np.ndarray]:
    """Batches of ``batch_size`` items, longest first (for callers that ask for a size)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
