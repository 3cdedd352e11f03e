"""SiameseEncoder: a transformer, a pooling layer and L2 normalisation.

Both sentences of a pair go through the same network (the "siamese" part of
Sentence-BERT); a sentence vector is the pooled token embeddings, normalised so
that a dot product is the cosine similarity.

Folders are read and written in the sentence-transformers layout
(``modules.json``, ``1_Pooling/config.json``, ``sentence_bert_config.json``),
so ``sentence_transformers.SentenceTransformer(path)`` loads what we save and
gives the same vectors. A plain Hugging Face folder (``config.json`` plus
weights) loads too, with mean pooling.

Example:
    >>> enc = SiameseEncoder.load(bundled_model_path())          # doctest: +SKIP
    >>> enc.encode(["A man plays a guitar.", "Someone is playing guitar."]).shape
    (2, 384)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModel, AutoTokenizer
from transformers.utils import logging as hf_logging

from searchapp.errors import ModelError

POOLING_MODES = ("mean", "max", "cls")
DEFAULT_MAX_SEQ_LENGTH = 256
hf_logging.disable_progress_bar()  # no "Loading weights" bars in CLI output or logs
_POOLING_KEYS = {
    "mean": "pooling_mode_mean_tokens",
    "max": "pooling_mode_max_tokens",
    "cls": "pooling_mode_cls_token",
}


def pool(token_embeddings: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
    """Pool token vectors (batch, seq, dim) into sentence vectors (batch, dim).

    Padding never counts: mean divides by the number of real tokens, max sets
    padded positions to a very small value first, cls takes position 0.

    Example:
        >>> t = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]]])
        >>> pool(t, torch.tensor([[1, 1, 0]]), "mean")
        tensor([[2., 3.]])
    """
    if mode not in POOLING_MODES:
        raise ModelError(f"Unknown pooling {mode!r}; use one of: {', '.join(POOLING_MODES)}.")
    if mode == "cls":
        return token_embeddings[:, 0]
    mask = attention_mask.unsqueeze(-1).to(token_embeddings.dtype)  # (batch, seq, 1)
    if mode == "max":
        fill = torch.finfo(token_embeddings.dtype).min
        return token_embeddings.masked_fill(mask == 0, fill).max(dim=1).values
    summed = (token_embeddings * mask).sum(dim=1)  # (batch, dim)
    counts = mask.sum(dim=1).clamp(min=1e-9)  # (batch, 1)
    return summed / counts


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

    # ---- loading and saving -------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, device: str = "auto", pooling: str | None = None):
        """Load a sentence-transformers or Hugging Face folder (safetensors only)."""
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
        return enc.to(pick_device(device))

    def save(self, path: str | Path) -> Path:
        """Write the sentence-transformers folder layout (safetensors weights)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
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
        """Tokenise a batch, padded to its longest member and truncated to max_seq_length."""
        texts = [str(t).strip() for t in texts]
        if self.do_lower_case:
            texts = [t.lower() for t in texts]
        batch = self.tokenizer(
            texts,
            padding=True,
            truncation=True,
            max_length=self.max_seq_length,
            return_tensors="pt",
        )
        return {k: v.to(self.device) for k, v in batch.items()}

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """Token ids → sentence vectors (batch, dim); differentiable, used in training."""
        inputs = {k: v for k, v in features.items()
                  if k in ("input_ids", "attention_mask", "token_type_ids")}
        tokens = self.transformer(**inputs).last_hidden_state  # (batch, seq, dim)
        vectors = pool(tokens, features["attention_mask"], self.pooling)
        return F.normalize(vectors, p=2, dim=1) if self.normalize else vectors

    @torch.inference_mode()
    def encode(self, texts: Sequence[str], batch_size: int | None = None) -> np.ndarray:
        """Embed texts into float32 vectors (n, dim), in the input order.

        Texts are sorted by length first so that each batch pads little; on CUDA
        the forward pass runs in half precision with larger batches.
        """
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        on_cuda = self.device.type == "cuda"
        batch_size = batch_size or (256 if on_cuda else 32)
        order = np.argsort([-len(str(t)) for t in texts], kind="stable")
        out = np.empty((n, self.dimension), dtype=np.float32)
        was_training = self.training
        self.eval()
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            features = self.tokenize([texts[i] for i in idx])
            with torch.autocast("cuda", dtype=_half_dtype(), enabled=on_cuda):
                vectors = self.forward(features)
            out[idx] = vectors.float().cpu().numpy()
        self.train(was_training)
        return out


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
