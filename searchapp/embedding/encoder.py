"""SiameseEncoder: a transformer, a pooling layer and L2 normalisation.

Both sentences of a pair go through the same network (the "siamese" part of
Sentence-BERT); a sentence vector is the pooled token embeddings, normalised so
that a dot product is the cosine similarity.

Folders are read and written in the sentence-transformers layout
(``modules.json``, ``1_Pooling/config.json``, ``sentence_bert_config.json``),
so ``sentence_transformers.SentenceTransformer(path)`` loads what we save and
gives the same vectors. A plain Hugging Face folder (``config.json`` plus
weights) loads too, with mean pooling.

Inference (``encode``) runs on the fastest exact "speed path" for the machine,
chosen and verified at load time (``searchapp/embedding/speed.py``): bf16 autocast where
the CPU has native bf16 and the result stays within cosine 0.9999 of float32,
plain float32 elsewhere. Training (``forward``) always runs in float32 on CPU.

Thread safety: one encoder serves every browser session of a Streamlit process
(and its warm-up thread). A Hugging Face fast tokenizer is not safe to share:
each call first re-configures truncation and padding on the one Rust object it
wraps, so a call from another thread can change them between that step and the
tokenisation (unpadded tensors, padded ids averaged into a vector; older
``tokenizers`` raise ``RuntimeError: Already borrowed``). ``encode``,
``tokenize`` and ``save`` therefore hold a per-encoder lock while they touch the
tokenizer or run a batch through the network. The lock costs next to no
throughput, since one forward pass already uses every core; it is taken per
batch, so a query can get in between the batches of a long ``encode`` instead
of waiting for all of it. Loading is not under it (``App.encoder`` has a lock
per model name), and ``forward`` (training, one thread) does not take it.

Example:
    >>> from searchapp.embedding.models import BUNDLED
    >>> enc = SiameseEncoder.load(BUNDLED["all-MiniLM-L6-v2"](), device="cpu")
    >>> enc.speed_path in ("cpu-bf16", "cpu-fp32")  # cpu-bf16 where the CPU has native bf16
    True
    >>> enc.encode(["A man plays a guitar.", "Someone is playing guitar."]).shape
    (2, 384)
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModel, AutoTokenizer
from transformers.utils import logging as hf_logging

from searchapp.base.timing import StageTimes
from searchapp.embedding import speed
from searchapp.embedding.pooling import POOLING_MODES, pool
from searchapp.errors import ModelError

DEFAULT_MAX_SEQ_LENGTH = 256
QUERIES_BEFORE_FAST_PATH = 2  # the query that starts building the fast query path
BUILD_EXIT_WAIT = 120.0  # seconds an exiting process waits for a query path being built
log = logging.getLogger(__name__)
_BUILDS: list[threading.Thread] = []  # background builds of query paths, for ``_finish_builds``


def _finish_builds() -> None:
    """At exit, let query paths still being built finish (each for at most
    ``BUILD_EXIT_WAIT`` seconds). The builds run on daemon threads so that they never keep
    a process alive by themselves; but one still inside torch's or ONNX's C++ code while
    the interpreter tears down aborts the process ("terminate called without an active
    exception", exit status 134), which a test run's last seconds or a quick ``evaluate``
    met."""
    for thread in list(_BUILDS):
        thread.join(BUILD_EXIT_WAIT)


atexit.register(_finish_builds)
hf_logging.disable_progress_bar()  # no "Loading weights" bars in CLI output or logs
_POOLING_KEYS = {
    "mean": "pooling_mode_mean_tokens",
    "max": "pooling_mode_max_tokens",
    "cls": "pooling_mode_cls_token",
}


def pick_device(preference: str = "auto") -> torch.device:
    """``auto`` → CUDA when available, else CPU; ``cuda`` without a GPU is an error."""
    if preference == "cuda" and not torch.cuda.is_available():
        raise ModelError("SEARCHAPP_DEVICE=cuda but no CUDA GPU is visible; use auto or cpu.")
    if preference in ("auto", "cuda") and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


class SiameseEncoder(torch.nn.Module):
    """Transformer + pooling (+ normalisation): one network for both sides of a pair."""

    def __init__(
        self,
        transformer: torch.nn.Module,
        tokenizer,
        pooling: str = "mean",
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        normalize: bool = True,
        do_lower_case: bool = False,
    ):
        super().__init__()
        if pooling not in POOLING_MODES:
            raise ModelError(
                f"Unknown pooling {pooling!r}; use one of: {', '.join(POOLING_MODES)}.")
        self.transformer = transformer
        self.tokenizer = tokenizer
        self.pooling = pooling
        self.max_seq_length = max_seq_length
        self.normalize = normalize
        self.do_lower_case = do_lower_case
        self.speed_path = "cpu-fp32"  # see select_speed_path; load() chooses
        self.speed_reason = "not chosen yet"
        self.query_path = "cpu-fp32"  # for one short text (a query): timed at load
        # batch widths are rounded up to this (speed.padded); None: the device's own
        # (speed.CUDA_PAD_MULTIPLE on a GPU, 1 on the CPU)
        self.pad_multiple: int | None = None
        # held while the tokenizer or an inference batch runs; see the module docstring
        self.inference_lock = threading.Lock()
        # one query's fast path (query_runtime), built at the first encode_query; exported
        # graphs are kept in query_graph_dir (None: in memory only)
        self.query_graph_dir: Path | None = None
        self._query_runtime = None
        self._torch_runtime = None  # what queries use until _query_runtime is built
        self._queries_before_fast = 0
        self._query_runtime_lock = threading.Lock()  # held while the fast path is built
        self._torch_runtime_lock = threading.Lock()  # never held long: queries take it

    # ---- loading and saving -------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, device: str = "auto", pooling: str | None = None,
             precision: str = "auto") -> SiameseEncoder:
        """Load a sentence-transformers or Hugging Face folder (safetensors only).

        ``precision`` (auto|fp32|bf16) picks the inference path; see
        ``select_speed_path``. The result is in ``encoder.speed_path``.
        """
        precision = speed.check_precision(precision)
        path = Path(path)
        if not (path / "config.json").is_file():
            raise ModelError(
                f"{path} is not a model folder (no config.json). Give a sentence-transformers "
                "or Hugging Face folder, or the name of a registered model."
            )
        if not any(path.glob("*.safetensors")):
            raise ModelError(f"{path} has no .safetensors weights; only safetensors are loaded.")
        layout = _read_st_layout(path)
        try:
            transformer = AutoModel.from_pretrained(
                path, trust_remote_code=False, use_safetensors=True
            )
            tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise ModelError(f"Could not load the model in {path}: {exc}") from exc
        max_len = layout.get("max_seq_length") or _default_max_len(path, tokenizer)
        enc = cls(
            transformer,
            tokenizer,
            pooling=pooling or layout.get("pooling", "mean"),
            max_seq_length=int(max_len),
            normalize=layout.get("normalize", True),
            do_lower_case=layout.get("do_lower_case", False),
        )
        enc.eval()
        enc.to(pick_device(device))
        enc.select_speed_path(precision)
        return enc

    def save(self, path: str | Path) -> Path:
        """Write the sentence-transformers folder layout (safetensors weights).

        The weights and tokenizer are written under ``inference_lock``, so a save
        never reads a tokenizer another thread is re-configuring.
        """
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with self.inference_lock:
            self.transformer.save_pretrained(path, safe_serialization=True)
            self.tokenizer.save_pretrained(path)
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"},
        ]
        if self.normalize:
            modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                            "type": "sentence_transformers.models.Normalize"})
            (path / "2_Normalize").mkdir(exist_ok=True)
        _write_json(path / "modules.json", modules)
        pooling_cfg = {"word_embedding_dimension": self.dimension}
        pooling_cfg |= {key: self.pooling == mode for mode, key in _POOLING_KEYS.items()}
        pooling_cfg["pooling_mode_mean_sqrt_len_tokens"] = False
        (path / "1_Pooling").mkdir(exist_ok=True)
        _write_json(path / "1_Pooling" / "config.json", pooling_cfg)
        _write_json(
            path / "sentence_bert_config.json",
            {"max_seq_length": self.max_seq_length, "do_lower_case": self.do_lower_case},
        )
        return path

    # ---- the network --------------------------------------------------------
    @property
    def dimension(self) -> int:
        return int(self.transformer.config.hidden_size)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """Tokenise a batch, padded to its longest member and truncated to max_seq_length.

        Safe to call from several threads: the tokenizer runs under ``inference_lock``.
        """
        with self.inference_lock:
            batch = self.tokenizer(
                self._clean(texts),
                padding=True,
                truncation=True,
                max_length=self.max_seq_length,
                return_tensors="pt",
            )
        return {k: v.to(self.device) for k, v in batch.items()}

    def _clean(self, texts: Sequence[str]) -> list[str]:
        """The texts as the tokenizer gets them: stripped, lower-cased where the model is."""
        texts = [str(t).strip() for t in texts]
        return [t.lower() for t in texts] if self.do_lower_case else texts

    def _token_ids(self, texts: Sequence[str], checkpoint: Callable[[], None] | None = None
                   ) -> list[list[int]]:
        """Token ids per text, truncated to max_seq_length, unpadded (under the lock).

        Tokenised ``speed.TOKENIZE_CHARS`` characters at a time, ``checkpoint``
        called before each call.
        """
        texts = self._clean(texts)
        ids: list[list[int]] = []
        for chunk in speed.char_chunks([len(t) for t in texts]):
            if checkpoint is not None:
                checkpoint()
            with self.inference_lock:
                ids += self.tokenizer([texts[i] for i in chunk], truncation=True,
                                      max_length=self.max_seq_length,
                                      return_attention_mask=False,
                                      return_token_type_ids=False)["input_ids"]
        return ids

    def _infer_batch(self, ids: list[list[int]]) -> np.ndarray:
        """Pad one batch of token ids and embed it in eval mode, under the lock (n, dim).

        The caller provides the autocast context (thread-local in torch, so
        each thread's precision is its own).
        """
        with self.inference_lock:
            features = self._padded(ids)
            was_training = self.training
            if was_training:
                self.eval()
            try:
                return self.forward(features).float().cpu().numpy()
            finally:
                if was_training:
                    self.train()

    def _padded(self, ids: list[list[int]]) -> dict[str, torch.Tensor]:
        """One batch's ids and attention mask as tensors on the device (numpy padding, not the
        tokenizer's Python loops, unless the tokenizer pads on the left)."""
        if getattr(self.tokenizer, "padding_side", "right") != "right":
            features = self.tokenizer.pad({"input_ids": ids}, return_tensors="pt")
            return {k: v.to(self.device) for k, v in features.items()}
        multiple = self.pad_multiple or (
            speed.CUDA_PAD_MULTIPLE if self.device.type == "cuda" else 1)
        token_ids, mask = speed.padded(ids, self.tokenizer.pad_token_id or 0, multiple)
        return {"input_ids": torch.from_numpy(token_ids).to(self.device),
                "attention_mask": torch.from_numpy(mask).to(self.device)}

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """Token ids → sentence vectors (batch, dim); differentiable, used in training."""
        inputs = {k: v for k, v in features.items()
                  if k in ("input_ids", "attention_mask", "token_type_ids")}
        tokens = self.transformer(**inputs).last_hidden_state.float()  # (batch, seq, dim)
        vectors = pool(tokens, features["attention_mask"], self.pooling)
        return F.normalize(vectors, p=2, dim=1) if self.normalize else vectors

    # ---- inference ----------------------------------------------------------
    def select_speed_path(self, precision: str = "auto", cpu: speed.CpuInfo | None = None,
                          threshold: float = speed.PROBE_COSINE) -> str:
        """Choose how ``encode`` computes, from what the machine offers; returns the path.

        On CPU, ``auto`` tries ``cpu-bf16`` where ``cpu`` (default: this
        machine's ``/proc/cpuinfo``) has native bf16; on CUDA it tries bf16
        autocast (fp16 where the GPU lacks bf16). A reduced-precision path
        chosen by ``auto`` is kept only if every probe vector
        (``speed.probe_texts()``: short sentences and texts past the max
        length) is within cosine ``threshold`` of float32; otherwise the
        encoder stays on float32 and logs why. ``fp32`` and ``bf16`` force a
        path without the probe. The choice is in ``self.speed_path`` and the
        reason in ``self.speed_reason``.

        Example:
            >>> no_bf16 = speed.parse_cpuinfo("flags : sse2 avx2\\n")
            >>> enc.select_speed_path("auto", no_bf16)                # doctest: +SKIP
            'cpu-fp32'
        """
        precision = speed.check_precision(precision)
        if self.device.type == "cuda":
            if precision == "fp32":
                path, why = "cuda-fp32", "precision=fp32 was asked for"
            elif precision == "bf16" and not torch.cuda.is_bf16_supported():
                raise ModelError("SEARCHAPP_PRECISION=bf16 but this GPU has no bf16; "
                                 "use auto (fp16 autocast) or fp32.")
            else:
                path = "cuda-bf16" if _half_dtype() == torch.bfloat16 else "cuda-fp16"
                why = "a CUDA GPU"
        else:
            path, why = speed.cpu_path(precision, cpu or speed.read_cpuinfo())
        if precision == "auto" and not path.endswith("fp32"):
            probe = speed.probe_texts()
            reference = self._encode_on(speed.fp32_path(path), probe, None)
            passed, lowest = speed.probe_verdict(reference, self._encode_on(path, probe, None),
                                                 threshold)
            if passed:
                why += f"; probe cosine to fp32 >= {lowest:.6f}"
            else:
                fallback = speed.fp32_path(path)
                log.warning("Not using %s: on the probe sentences its vectors reach only "
                            "cosine %.6f to float32 (needed %.5f); using %s.",
                            path, lowest, threshold, fallback)
                path, why = fallback, (f"{path} failed the probe (cosine {lowest:.6f} < "
                                       f"{threshold})")
        if precision == "auto":
            self.query_path, query_why = speed.query_path(path, self._time_one_query(path))
        else:  # a forced path is taken as asked, for queries too
            self.query_path, query_why = path, "one query: as batches"
        self.speed_path, self.speed_reason = path, f"{why}; {query_why}"
        log.info("Encoder speed path: %s (%s)", path, self.speed_reason)
        return path

    def _time_one_query(self, path: str, rounds: int = 5) -> dict[str, float]:
        """Median seconds to encode ``speed.QUERY_PROBE`` alone on ``path`` and its float32."""
        paths = {path, speed.fp32_path(path)}
        if len(paths) == 1:
            return {}
        for p in paths:  # warm-up: first calls allocate
            self._encode_on(p, [speed.QUERY_PROBE], None)
        seconds: dict[str, list[float]] = {p: [] for p in paths}
        for _ in range(rounds):  # alternate, so a burst of load hits both alike
            for p in sorted(paths):
                started = time.perf_counter()
                self._encode_on(p, [speed.QUERY_PROBE], None)
                seconds[p].append(time.perf_counter() - started)
        return {p: float(np.median(s)) for p, s in seconds.items()}

    def encode(self, texts: Sequence[str], batch_size: int | None = None,
               checkpoint: Callable[[], None] | None = None) -> np.ndarray:
        """Embed texts into float32 vectors (n, dim), in the input order.

        The texts are tokenised once, sorted by token length and cut into
        batches of about the same number of tokens (``speed.CPU_TOKEN_BUDGET``
        on CPU, ``speed.CUDA_TOKEN_BUDGET`` on CUDA), so that batches pad
        little and their size suits the hardware; ``batch_size`` asks for
        fixed-size batches instead. The arithmetic is that of
        ``self.speed_path``: bf16 autocast for the matrix products on
        ``cpu-bf16``/``cuda-bf16``, fp16 autocast on ``cuda-fp16``, float32
        otherwise; vectors always come back as float32.

        One text of at most ``speed.QUERY_TOKENS`` tokens (a query) goes on
        ``self.query_path`` instead: whichever of the batch path and float32
        was faster for one query at load (both are exact to the probe's bar).

        Safe to call from many threads at once (one encoder serves every
        session): tokenising and each batch hold ``inference_lock``.

        ``checkpoint`` is called before each batch (and each tokenizer call
        over ``speed.TOKENIZE_CHARS`` characters): a long call can be
        abandoned there by raising (a job's ``TaskContext.checkpoint`` raises
        when the job is cancelled or the worker stops), so a cancel lands
        within one batch of a few thousand tokens, whatever ``texts`` holds.

        Example:
            >>> def stop():
            ...     raise KeyboardInterrupt
            >>> enc.encode(["one", "two"], checkpoint=stop)  # doctest: +SKIP
            Traceback (most recent call last):
            KeyboardInterrupt
        """
        return self._encode_on(self.speed_path, texts, batch_size, self.query_path, checkpoint)

    def encode_query(self, text: str, times: StageTimes | None = None,
                     use_cache: bool = True, alone: bool = True) -> np.ndarray:
        """The vector (dim,) of one query, on the fastest exact query path, cached.

        The same vector as ``encode([text])[0]`` within cosine 0.9999 (the
        document path's space; ``tests/test_query_path.py``), for any length:
        a text past the max length is truncated alike. The path (ONNX Runtime or
        torch) is chosen by measurement at the first call (``query_runtime``) and
        named in ``query_runtime_reason``; recent queries come from a cache (the
        returned array is read-only). The first query of a process goes through
        torch; the second starts building the fast path on a thread of its own, and
        queries use it once it is ready (``query_runtime()`` builds it at once, as the
        app's warm-up does). ``times`` gets the tokenize and encode (or query-cache)
        stages. ``alone`` False: other searches run in this process now, so the
        query takes the path of a crowd (``query_runtime.PathChooser``).

        Example:
            >>> enc.encode_query("a man plays a guitar").shape       # doctest: +SKIP
            (384,)
        """
        runtime = self._query_runtime or self._until_fast_path_is_ready()
        return runtime.encode(self._clean([text])[0], times, use_cache, alone)

    def _until_fast_path_is_ready(self):
        """The torch-only runtime queries use while the fast one is not built; from the
        second query on, the fast one is built on a thread of its own.

        Building costs a second or more (the weights hashed, the graph exported or
        loaded, checked and timed): a one-query process (``searchapp search``) never
        pays it, a server or an evaluation pays it once, beside its queries, not in one.
        """
        from searchapp.embedding.query_runtime import Candidate, QueryRuntime

        with self._torch_runtime_lock:
            if self._torch_runtime is None:
                self._torch_runtime = QueryRuntime(
                    Candidate("torch", self._torch_query),
                    "one query: torch, until the fast path is built", {}, "torch")
            self._queries_before_fast += 1
            if self._queries_before_fast == QUERIES_BEFORE_FAST_PATH:
                build = threading.Thread(target=self._build_quietly, name="query-path-build",
                                         daemon=True)
                _BUILDS[:] = [b for b in _BUILDS if b.is_alive()] + [build]
                build.start()
            return self._torch_runtime

    def _build_quietly(self) -> None:
        try:
            self.query_runtime()
        except Exception:  # queries stay on torch; the next process tries again
            log.exception("Could not build the fast query path; queries use torch")

    def query_runtime(self):
        """The encoder's query runtime, built (checked and timed) at the first call."""
        runtime = self._query_runtime
        if runtime is None:
            with self._query_runtime_lock:
                if self._query_runtime is None:
                    from searchapp.embedding.query_runtime import Candidate, QueryRuntime

                    self._query_runtime = QueryRuntime.build(
                        self, self.query_graph_dir, Candidate("torch", self._torch_query))
                runtime = self._query_runtime
        return runtime

    def train(self, mode: bool = True) -> SiameseEncoder:
        """As torch's ``train``; entering training drops the query runtimes and their caches
        (built from the weights training is about to change)."""
        if mode:
            self._query_runtime = self._torch_runtime = None
        return super().train(mode)

    @torch.inference_mode()
    def _torch_query(self, text: str, times: StageTimes) -> np.ndarray:
        """One cleaned text through torch on the query path (the fallback of encode_query)."""
        with times.stage("tokenize"), self.inference_lock:
            ids = self.tokenizer(text, truncation=True, max_length=self.max_seq_length,
                                 return_attention_mask=False,
                                 return_token_type_ids=False)["input_ids"]
        with times.stage("encode"):
            path = self.query_path if len(ids) <= speed.QUERY_TOKENS else self.speed_path
            with _autocast(path):
                return self._infer_batch([ids])[0]

    @torch.inference_mode()
    def _encode_on(self, path: str, texts: Sequence[str], batch_size: int | None,
                   query_path: str | None = None,
                   checkpoint: Callable[[], None] | None = None) -> np.ndarray:
        n = len(texts)
        out = np.empty((n, self.dimension), dtype=np.float32)
        if n == 0:
            return out
        ids = self._token_ids(texts, checkpoint)
        lengths = [len(x) for x in ids]
        if query_path and n == 1 and lengths[0] <= speed.QUERY_TOKENS:
            path = query_path
        if batch_size:
            batches = speed.fixed_batches(lengths, batch_size)
        else:
            budget = speed.CUDA_TOKEN_BUDGET if path.startswith("cuda") else speed.CPU_TOKEN_BUDGET
            batches = speed.token_batches(lengths, budget)
        # one autocast context for all batches: the bf16 copies of the weights are made once
        with _autocast(path):
            for idx in batches:
                if checkpoint is not None:
                    checkpoint()
                out[idx] = self._infer_batch([ids[i] for i in idx])
        return out


def _autocast(path: str):
    """The autocast context for a speed path (no-op for the fp32 ones)."""
    if path == "cpu-bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    if path in ("cuda-bf16", "cuda-fp16"):
        return torch.autocast("cuda", dtype=torch.bfloat16 if path == "cuda-bf16"
                              else torch.float16)
    return contextlib.nullcontext()


def _half_dtype() -> torch.dtype:
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def _read_st_layout(path: Path) -> dict:
    """Pooling, normalisation and max length from a sentence-transformers folder, if it is one."""
    modules_file = path / "modules.json"
    if not modules_file.is_file():
        return {}
    layout: dict = {"normalize": False}
    for module in json.loads(modules_file.read_text(encoding="utf-8")):
        kind = module.get("type", "")
        if kind.endswith("Pooling"):
            cfg = json.loads((path / module["path"] / "config.json").read_text(encoding="utf-8"))
            modes = [m for m, key in _POOLING_KEYS.items() if cfg.get(key)]
            if len(modes) != 1:
                raise ModelError(
                    f"{path}: pooling {modes or 'none'} is not supported; "
                    "exactly one of mean, max, cls must be set."
                )
            layout["pooling"] = modes[0]
        elif kind.endswith("Normalize"):
            layout["normalize"] = True
        elif not kind.endswith("Transformer"):
            raise ModelError(f"{path}: module {kind} is not supported (Transformer, Pooling, "
                             "Normalize are).")
    st_cfg = path / "sentence_bert_config.json"
    if st_cfg.is_file():
        cfg = json.loads(st_cfg.read_text(encoding="utf-8"))
        layout["max_seq_length"] = cfg.get("max_seq_length")
        layout["do_lower_case"] = bool(cfg.get("do_lower_case", False))
    return layout


def _default_max_len(path: Path, tokenizer) -> int:
    config = AutoConfig.from_pretrained(path, trust_remote_code=False)
    limits = [DEFAULT_MAX_SEQ_LENGTH, getattr(config, "max_position_embeddings", 10**6)]
    if getattr(tokenizer, "model_max_length", None):
        limits.append(tokenizer.model_max_length)
    return int(min(limits))
