"""Reranking: a corpus' own cross-encoder reorders the first hybrid (or semantic) hits.

The bi-encoder compares a query's vector with each document's, computed apart;
a cross-encoder (``searchapp.embedding.cross_encoder``) reads the query and one
passage together, so every word of one attends to every word of the other:
more accurate, but one forward pass per pair. So only the first ``DEPTH``
candidates of the search are rescored, all in one batch, and the k best of
them by the cross-encoder's score come back.

A corpus has a reranker only when one was trained on its query judgements and
beat no reranking on the held-out ones (``searchapp.training.reranker``); its
name is ``corpora.reranker`` and its files are ``DATA_DIR/models/rerankers/NAME/``
(safetensors and JSON: loading runs nothing from the folder). Asking to rerank
a corpus without one raises NoRerankerError, which says how to get one.

The order is a ``Blend`` of two things: the cross-encoder's logit and the
search's own rank (−log rank), weighted as a logistic regression fitted on
judged queries the cross-encoder did not train on (``training.reranker``). A
cross-encoder trained on a few hundred judgements knows some things the search
does not, and not all it knows; the blend keeps the search's order where the
cross-encoder has nothing to say. Each hit's score becomes the blend's
probability that it is relevant; its semantic and lexical ranks stay as the
search found them. A long
document is read by the passage the search matched (``SearchHit.span``), the
same passage the reranker was trained on.

Example:
    >>> hits = search(app, "manual", "archive the WAL", k=10, rerank=True)   # doctest: +SKIP
    >>> hits[0].id, hits[0].semantic_rank                                   # doctest: +SKIP
    ('continuous-archiving', 4)
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from searchapp.base.timing import StageTimes
from searchapp.config import Settings
from searchapp.context import App
from searchapp.embedding.models import RERANKERS
from searchapp.errors import ModelError, NoRerankerError
from searchapp.store import repo

if TYPE_CHECKING:
    from searchapp.embedding.cross_encoder import CrossEncoder
    from searchapp.search.hits import SearchHit

log = logging.getLogger(__name__)
DEPTH = 30  # candidates rescored per query (rerank_latency.py measures this many)
BLEND_FILE = "reranker.json"
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
        >>> from searchapp.search.hits import SearchHit
        >>> passage_text(SearchHit("d", "intro. the part that matched", 1.0, span=(7, 28)))
        'the part that matched'
    """
    if hit.span is None:
        return hit.text
    return hit.text[hit.span[0]:hit.span[1]]


@dataclass(frozen=True)
class Blend:
    """score = cross · logit + rank · (−log rank) + bias, for candidates in the search's order.

    ``Blend()`` is the cross-encoder alone; ``Blend(cross=0.0, rank=1.0)`` the search's order.

    Example:
        >>> Blend(cross=1.0, rank=2.0).apply(np.array([0.0, 1.0, 0.5])).round(2).tolist()
        [0.0, -0.39, -1.7]
    """

    cross: float = 1.0
    rank: float = 0.0
    bias: float = 0.0

    def apply(self, logits: np.ndarray) -> np.ndarray:
        """The blended score (n,) of candidates whose cross-encoder logits are ``logits``."""
        prior = -np.log(np.arange(1, len(logits) + 1, dtype=np.float64))
        return self.cross * logits.astype(np.float64) + self.rank * prior + self.bias


class Reranker:
    """A loaded cross-encoder that scores (query, passage) pairs in one batch, and its blend.

    ``quantized`` (on the CPU): int8 weights, through ONNX Runtime's fused graph
    (``training.cross_graph``: 258 against torch float32's 913 ms for 30 pairs of 128
    tokens, ``benchmarks/rerank_onnx.py``) where it is installed and its logits stay close
    to float32, else torch's dynamic int8 (about twice as fast as float32). ``graph_dir``
    keeps the exported graph (None: made in memory). ``path`` says which runs.
    """

    def __init__(self, model: CrossEncoder, quantized: bool = False, blend: Blend | None = None,
                 graph_dir: Path | None = None):
        import torch

        model, self.graph, self.path = model.eval(), None, "torch"
        if quantized and model.device.type == "cpu":
            self.graph, self.path = _graph_of(model, graph_dir)
            if self.graph is None:
                model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear},
                                                               dtype=torch.qint8)
        self.model, self.blend = model, blend or Blend()

    def logits(self, query: str, passages: list[str]) -> np.ndarray:
        """The cross-encoder's logit (n,) for each passage, all in one forward pass."""
        import torch

        if not passages:
            return np.zeros(0, np.float32)
        with torch.inference_mode():
            features = self.model.tokenize([query] * len(passages), passages)
            if self.graph is not None:
                return self.graph.logits(features)
            return self.model(features).float().cpu().numpy()

    def scores(self, query: str, passages: list[str]) -> np.ndarray:
        """The blended score (n,) of passages given in the search's order (best first)."""
        return self.blend.apply(self.logits(query, passages))


def _graph_of(model: CrossEncoder, folder: Path | None) -> tuple[object | None, str]:
    """The model's checked int8 ONNX graph and the path's name, or (None, "torch-int8")."""
    from searchapp.embedding.cross_graph import CrossGraph
    try:
        return CrossGraph.load_or_export(model, folder), "onnx-int8"
    except ModelError as exc:
        log.warning("Reranker: %s", exc)
        return None, "torch-int8"


def load_reranker(folder: Path, quantized: bool = True) -> Reranker:
    """The reranker saved in ``folder``, loaded once per process (again when its files change)."""
    from searchapp.embedding.cross_encoder import WEIGHTS, CrossEncoder

    key = (str(folder), (folder / WEIGHTS).stat().st_mtime, quantized)
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = Reranker(CrossEncoder.load(folder, device="cpu"), quantized,
                                    read_blend(folder), graph_dir=folder)
        return _LOADED[key]


def read_blend(folder: Path) -> Blend:
    """The blend saved with a reranker (``reranker.json``); the cross-encoder alone if none."""
    path = folder / BLEND_FILE
    if not path.is_file():
        return Blend()
    return Blend(**json.loads(path.read_text("utf-8"))["blend"])


def write_blend(folder: Path, blend: Blend) -> None:
    """Save ``blend`` beside the reranker's weights."""
    (folder / BLEND_FILE).write_text(json.dumps({"blend": asdict(blend)}), "utf-8")


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
        scores = reranker.scores(query, [passage_text(h) for h in hits])
    times.describe("rerank", reranker.path)
    order = sorted(range(len(hits)), key=lambda i: (-float(scores[i]), i))[:k]
    probability = 1.0 / (1.0 + np.exp(-scores))
    return [replace(hits[i], score=round(float(probability[i]), 6)) for i in order]
