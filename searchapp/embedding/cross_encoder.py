"""A cross-encoder: both texts through one transformer together, one score for the pair.

Where the siamese bi-encoder embeds each text alone and compares vectors, a
cross-encoder reads the pair at once (``[CLS] a [SEP] b [SEP]``), so every
word of one text attends to every word of the other: more accurate, but one
forward pass per pair, so it can only score pairs someone has already picked
(the reranker's top hits at query time, ``search/rerank.py``; Augmented SBERT's
pairs in training).

No cross-encoder weights can be installed here, so it starts from the bundled
bi-encoder's transformer weights (all-MiniLM-L6-v2's BERT): the token-level
knowledge is there, the pair head is new. The head reads the mean of the
token vectors (the pooling those weights were trained with) through dropout
and a linear layer to one logit; sigmoid(logit) is the probability that the
pair is relevant / duplicate.

The model lives here, beside the bi-encoder, because search scores with it at
query time; how it is trained is ``searchapp/training/cross_train.py``.

Example:
    >>> ce = CrossEncoder.from_bi_encoder(bundled_path, device="cpu")        # doctest: +SKIP
    >>> ce.predict([("a dog", "a puppy")])                                          # doctest: +SKIP
    array([0.83], dtype=float32)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from searchapp.embedding import checkpoint
from searchapp.embedding.encoder import pick_device
from searchapp.embedding.pooling import pool
from searchapp.errors import ModelError

WEIGHTS = "cross_encoder.safetensors"
CONFIG = "cross_encoder.json"
MAX_LENGTH = 256


class CrossEncoder(torch.nn.Module):
    """transformer(a [SEP] b) → mean of the token vectors → dropout → linear → one logit."""

    def __init__(self, transformer: torch.nn.Module, tokenizer, max_length: int = MAX_LENGTH,
                 dropout: float = 0.1, seed: int = 42):
        super().__init__()
        self.transformer, self.tokenizer, self.max_length = transformer, tokenizer, max_length
        hidden = int(transformer.config.hidden_size)
        generator = torch.Generator().manual_seed(seed)  # the new head, the same every time
        self.head = torch.nn.Linear(hidden, 1)
        with torch.no_grad():
            self.head.weight.normal_(0.0, 0.02, generator=generator)
            self.head.bias.zero_()
        self.dropout = torch.nn.Dropout(dropout)

    @classmethod
    def from_bi_encoder(cls, path: str | Path, device: str = "auto", seed: int = 42
                        ) -> CrossEncoder:
        """A cross-encoder whose transformer is the model folder's (safetensors only)."""
        path = Path(path)
        if not any(path.glob("*.safetensors")):
            raise ModelError(f"{path} has no .safetensors weights; only safetensors are loaded.")
        transformer = AutoModel.from_pretrained(path, trust_remote_code=False,
                                                use_safetensors=True)
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        model = cls(transformer, tokenizer, seed=seed)
        return model.to(pick_device(device))

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def tokenize(self, first: Sequence[str], second: Sequence[str]) -> dict[str, torch.Tensor]:
        """Token ids of the pairs, padded to the longest, cut to ``max_length`` (longest first)."""
        batch = self.tokenizer(list(first), list(second), padding=True, truncation="longest_first",
                               max_length=self.max_length, return_tensors="pt")
        return {k: v.to(self.device) for k, v in batch.items()}

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits (batch,) for tokenised pairs."""
        inputs = {k: v for k, v in features.items()
                  if k in ("input_ids", "attention_mask", "token_type_ids")}
        tokens = self.transformer(**inputs).last_hidden_state.float()  # (batch, seq, dim)
        pooled = pool(tokens, features["attention_mask"], "mean")  # (batch, dim)
        return self.head(self.dropout(pooled)).squeeze(-1)

    @torch.inference_mode()
    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32,
                progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """The probability (n,) that each (first, second) pair is relevant / duplicate."""
        was_training = self.training
        self.eval()
        out = np.empty(len(pairs), dtype=np.float32)
        on_cuda = self.device.type == "cuda"
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        try:
            for start in range(0, len(order), batch_size):
                rows = order[start:start + batch_size]
                features = self.tokenize([pairs[i][0] for i in rows], [pairs[i][1] for i in rows])
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=on_cuda):
                    logits = self(features)
                out[rows] = torch.sigmoid(logits.float()).cpu().numpy()
                if progress:
                    progress(min(start + batch_size, len(order)), len(order))
        finally:
            self.train(was_training)
        return out

    # ---- saving ------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Weights (safetensors, atomically), transformer config and tokenizer into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        self.transformer.config.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        (folder / CONFIG).write_text(json.dumps({"max_length": self.max_length}), "utf-8")
        checkpoint.save(folder / WEIGHTS, {"model": self.state_dict()}, {"kind": "cross-encoder"})

    @classmethod
    def load(cls, folder: Path, device: str = "auto") -> CrossEncoder:
        """A cross-encoder saved by ``save`` (nothing in the folder is unpickled)."""
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
        transformer = AutoModel.from_config(config)
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
        settings = json.loads((folder / CONFIG).read_text("utf-8"))
        model = cls(transformer, tokenizer, max_length=int(settings["max_length"]))
        groups, _ = checkpoint.load(folder / WEIGHTS)
        model.load_state_dict(groups["model"])
        return model.to(pick_device(device)).eval()
