"""Token vectors to one sentence vector: mean, max or the [CLS] token, padding never counted.

Shared by the bi-encoder (``encoder``), its exported query graph (``onnx_graph``)
and the cross-encoder (``cross_encoder``), so all three pool the same way.

Example:
    >>> import torch
    >>> pool(torch.tensor([[[1.0, 2.0], [3.0, 4.0]]]), torch.tensor([[1, 1]]), "cls")
    tensor([[1., 2.]])
"""

from __future__ import annotations

import torch

from searchapp.errors import ModelError

POOLING_MODES = ("mean", "max", "cls")


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
