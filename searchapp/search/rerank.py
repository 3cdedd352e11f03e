"""Reranking: a corpus' own cross-encoder reorders the first hybrid (or semantic) hits.

The bi-encoder compares a query's vector with each document's, computed apart;
a cross-encoder (``searchapp.training.cross_encoder``) reads the query and one
passage together, so every word of one attends to every word of the other:
more accurate, but one forward pass per pair. So only the first ``DEPTH``
candidates of the search are rescored, all in one batch, and the k best of
them by the cross-encoder's score come back.

A corpus has a reranker only when one was trained on its query judgements and
beat no reranking on the held-out ones (``searchapp.training.reranker``); its
name is ``corpora.reranker`` and its files are ``DATA_DIR/models/rerankers/NAME/``
(safetensors and JSON: loading runs nothing from the folder). Asking to rerank
a corpus without one raises NoRerankerError, which says how to get one.

Each hit's score becomes the cross-encoder's probability that the passage is
relevant; its semantic and lexical ranks stay as the search found them. A long
document is read by the passage the search matched (``SearchHit.span``), the
same passage the reranker was trained on.

Example:
    >>> hits = search(app, "manual", "archive the WAL", k=10, rerank=True)   # doctest: +SKIP
    >>> hits[0].id, hits[0].semantic_rank                                   # doctest: +SKIP
    ('continuous-archiving', 4)
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from searchapp.config import Settings
from searchapp.context import App
from searchapp.embedding.models import RERANKERS
from searchapp.errors import NoRerankerError
from searchapp.store import repo
from searchapp.timing import StageTimes

if TYPE_CHECKING:
    from searchapp.search.service import SearchHit
    from searchapp.training.cross_encoder import CrossEncoder

DEPTH = 30  # candidates rescored per query (rerank_latency.py measures this many)
_LOADED: dict[tuple[str, float], Reranker] = {}
_LOCK = threading.Lock()


def reranker_folder(settings: Settings, name: str) -> Path:
    """Where reranker ``name`` lives: ``DATA_DIR/models/rerankers/NAME``.

    Example:
        >>> reranker_folder(Settings(Path("/d"), "sqlite://"), "faq-rr").as_posix()
        '/d/models/rerankers/faq-rr'
    """
    return settings.models_dir / RERANKERS / name


def passage_text(hit: SearchHit) -> str:
    """The text the reranker reads for a hit: its matched passage, else the whole text.

    Example:
        >>> from searchapp.search.service import SearchHit
        >>> passage_text(SearchHit("d", "intro. the part that matched", 1.0, span=(7, 28)))
        'the part that matched'
    """
    if hit.span is None:
        return hit.text
    return hit.text[hit.span[0]:hit.span[1]]


class Reranker:
    """A loaded cross-encoder that scores (query, passage) pairs in one batch.

    ``quantized``: the transformer's linear layers in dynamic int8 (about twice as
    fast on the CPU; ``benchmarks/rerank_latency.py`` measures how close the scores stay).
    """

    def __init__(self, model: CrossEncoder, quantized: bool = False):
        import torch

        model = model.eval()
        if quantized and model.device.type == "cpu":
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear},
                                                           dtype=torch.qint8)
        self.model = model

    def scores(self, query: str, passages: list[str]) -> np.ndarray:
        """The relevance logit (n,) of each passage for ``query``, all in one forward pass."""
        import torch

        if not passages:
            return np.zeros(0, np.float32)
        with torch.inference_mode():
            features = self.model.tokenize([query] * len(passages), passages)
            return self.model(features).float().cpu().numpy()


def load_reranker(folder: Path, quantized: bool = True) -> Reranker:
    """The reranker saved in ``folder``, loaded once per process (again when its files change)."""
    from searchapp.training.cross_encoder import WEIGHTS, CrossEncoder

    key = (str(folder), (folder / WEIGHTS).stat().st_mtime, quantized)
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = Reranker(CrossEncoder.load(folder, device="cpu"), quantized)
        return _LOADED[key]


def attached(app: App, corpus: str) -> Reranker:
    """The reranker attached to ``corpus``; NoRerankerError (how to get one) when none is."""
    with app.db.session() as s:
        name = repo.corpus_reranker(s, corpus)
    folder = reranker_folder(app.settings, name) if name else None
    if folder is None or not folder.is_dir():
        raise NoRerankerError(corpus)
    return load_reranker(folder)


def rerank_hits(reranker: Reranker, query: str, hits: list[SearchHit], k: int,
                times: StageTimes | None = None) -> list[SearchHit]:
    """The k best of ``hits`` by the reranker's score (ties: the search's order)."""
    times = times if times is not None else StageTimes()
    with times.stage("rerank"):
        logits = reranker.scores(query, [passage_text(h) for h in hits])
    order = sorted(range(len(hits)), key=lambda i: (-float(logits[i]), i))[:k]
    probability = 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))
    return [replace(hits[i], score=round(float(probability[i]), 6)) for i in order]
