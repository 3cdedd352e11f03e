"""A cross-encoder as a fused int8 ONNX graph: the reranker's fast path on the CPU.

Reranking scores about 30 (query, passage) pairs in one batch, where the cost is
arithmetic: ``benchmarks/rerank_onnx.py`` measured, on a 2-core EPYC, 30 pairs of 128
tokens through 6 layers in 913 ms with torch float32 and 258 ms with this graph (ONNX
Runtime's BERT fusions as for the query graph, ``embedding/onnx_graph.fused``, then
dynamic int8 weights, ``quantize_dynamic``). The graph takes the tokenizer's arrays and
gives the logits of ``CrossEncoder.forward`` (mean pooling, the head; no dropout). Int8
moves the logits a little (0.08 at most there, as much as torch's own dynamic int8), so
a graph is used only when its logits on ``probe_pairs()`` stay within ``TOLERANCE`` of
float32 torch (``check``); otherwise the reranker keeps torch.

Example:
    >>> graph = CrossGraph.load_or_export(cross_encoder, folder)   # doctest: +SKIP
    >>> pairs = cross_encoder.tokenize(["archive the WAL"], ["To enable WAL archiving"])
    ...                                                            # doctest: +SKIP
    >>> graph.logits(pairs)                                        # doctest: +SKIP
    array([-0.13], dtype=float32)
    >>> len(probe_pairs()[0]) == len(probe_pairs()[1])
    True
"""

from __future__ import annotations

import copy
import io
import logging
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch

from searchapp.base.private_files import replace_private
from searchapp.embedding.onnx_graph import OPSET, eager_attention, fused
from searchapp.errors import ModelError

log = logging.getLogger(__name__)
FORMAT = "x1"  # part of the file name: a change of the export below makes new files
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# the largest |logit difference| to float32 torch allowed, plus 2% of the largest logit:
# about what int8 weights move them anyway (torch's dynamic int8: 0.06-0.15, this graph
# 0.06-0.12 for 2-6 layers, benchmarks/results/rerank_latency.json)
TOLERANCE = 0.2


class _Pairs(torch.nn.Module):
    """The cross-encoder with positional inputs (what the exporter traces)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model({"input_ids": input_ids, "attention_mask": attention_mask,
                           "token_type_ids": token_type_ids})


def probe_pairs() -> tuple[list[str], list[str]]:
    """Pairs of a short query and passages of several lengths, for the export and the check."""
    passage = ("Continuous archiving copies each WAL segment to a safe place as soon as it is "
               "complete, so that a base backup and the archived segments restore the "
               "cluster to any moment since. ")
    passages = [passage[:n] for n in (20, 80, 200)] + [passage * 3, "a", "yes and no " * 9]
    return ["how to archive the WAL"] * len(passages), passages


def export(model: torch.nn.Module, path: Path) -> None:
    """Write ``model`` (a CrossEncoder) to ``path``: fused where it fuses, int8 weights."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    copy_ = copy.deepcopy(model).cpu().float().eval()
    eager_attention(copy_.transformer)
    features = copy_.tokenizer(*probe_pairs(), padding=True, truncation="longest_first",
                               max_length=copy_.max_length, return_tensors="pt")
    args = tuple(features[k] for k in INPUTS)
    raw = io.BytesIO()
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's notes on traced shape checks
        torch.onnx.export(_Pairs(copy_), args, raw, input_names=list(INPUTS),
                          output_names=["logits"], opset_version=OPSET, dynamo=False,
                          dynamic_axes={k: {0: "pairs", 1: "tokens"} for k in INPUTS})
    graph = onnx.load_from_string(fused(raw.getvalue(), copy_.transformer.config))
    if not any(o.domain == "com.microsoft" for o in graph.opset_import):  # the fused ops'
        graph.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "float32.onnx"
        onnx.save(graph, plain)
        quantize_dynamic(plain, path, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


class CrossGraph:
    """An ONNX Runtime session over an exported cross-encoder; ``logits`` of tokenised pairs."""

    def __init__(self, path: Path, threads: int | None = None):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(os.cpu_count() or 1, 4)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), options,
                                            providers=["CPUExecutionProvider"])

    def logits(self, features) -> np.ndarray:
        """The logit (n,) of each tokenised pair (arrays or tensors of ``INPUTS``)."""
        feeds = {k: np.asarray(features[k], dtype=np.int64) for k in INPUTS}
        return self.session.run(None, feeds)[0].astype(np.float32)

    @classmethod
    def load_or_export(cls, model: torch.nn.Module, folder: Path | None) -> CrossGraph:
        """The checked graph of ``model``, cached in ``folder`` (None: a temporary file), made
        again when the folder's weights are newer than it.

        ModelError when ONNX Runtime is missing, the export fails or the graph's logits
        are not close enough to float32 torch (the caller keeps torch then).
        """
        try:
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise ModelError("onnxruntime is not installed; the reranker runs on torch") from exc
        if folder is None:
            with tempfile.TemporaryDirectory() as tmp:
                return cls._made(model, Path(tmp) / "graph.onnx")
        return cls._made(model, Path(folder) / f"cross_encoder-{FORMAT}-int8.onnx")

    @classmethod
    def _made(cls, model: torch.nn.Module, path: Path) -> CrossGraph:
        from searchapp.embedding.cross_encoder import WEIGHTS

        weights = path.parent / WEIGHTS
        try:
            if not path.is_file() or (weights.is_file() and
                                      path.stat().st_mtime_ns < weights.stat().st_mtime_ns):
                replace_private(path, lambda tmp: export(model, tmp))
            graph = cls(path)
        except Exception as exc:
            raise ModelError(f"Could not export the reranker to ONNX ({type(exc).__name__}: "
                             f"{str(exc)[:300]}); it runs on torch.") from exc
        check(graph, model)
        return graph


def check(graph: CrossGraph, model: torch.nn.Module) -> float:
    """The largest |logit difference| to float32 torch on ``probe_pairs()``; ModelError past
    ``TOLERANCE`` (plus 2% of the largest logit)."""
    features = model.tokenizer(*probe_pairs(), padding=True, truncation="longest_first",
                               max_length=model.max_length, return_tensors="pt")
    with torch.inference_mode():
        reference = model.eval()({k: v.to(model.device) for k, v in features.items()})
    reference = reference.float().cpu().numpy()
    gap = float(np.abs(graph.logits(features) - reference).max())
    if gap > TOLERANCE + 0.02 * float(np.abs(reference).max()):
        raise ModelError(f"the reranker's int8 graph moves its logits by {gap:.3f}; "
                         "it runs on torch")
    return gap
