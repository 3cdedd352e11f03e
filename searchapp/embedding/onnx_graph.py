"""The encoder as an ONNX graph for one text at a time: exported once, run by ONNX Runtime.

A query is one short text. Through torch its cost is mostly framework overhead
(operator dispatch, thread pools waking), not arithmetic; ONNX Runtime runs the
same float32 network as one optimised graph with a fraction of it
(``benchmarks/query_latency.py``; on a 2-core EPYC 5-8 ms against torch's 12-23 ms
for one query). The graph computes exactly what ``SiameseEncoder.forward`` does
(transformer, pooling, normalisation) for a batch of one and any length up to
the model's maximum; the encoder's query path (``query_runtime``) checks its
vectors against float32 torch before using it.

The export (``torch.onnx.export``, its TorchScript exporter: offline, about two
seconds) is cached in ``DATA_DIR/cache/query-graphs`` under the SHA-256 of the
weights it was made from (``weights_hash``), written under a temporary name and
renamed into place; a file that does not load is made again.

Example:
    >>> graph = OnnxQueryGraph.load_or_export(enc, cache_dir, threads=1)  # doctest: +SKIP
    >>> graph.run([101, 7592, 102]).shape                                 # doctest: +SKIP
    (384,)
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import logging
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from searchapp.base.private_files import private_dir, replace_private
from searchapp.embedding.pooling import pool
from searchapp.errors import ModelError

log = logging.getLogger(__name__)
FORMAT = "q2"  # part of the file name: a change of the export below makes new files
FUSABLE = ("bert",)  # model types whose graphs ``fused`` optimises (MiniLM is one)
OPSET = 17


def weights_hash(module: torch.nn.Module) -> str:
    """SHA-256 of a module's parameters and buffers (names, shapes, dtypes and bytes).

    The key of a cached graph: the same weights give the same key whatever folder
    they were loaded from, and any change of a weight gives another.

    Example:
        >>> weights_hash(torch.nn.Linear(2, 2)) != weights_hash(torch.nn.Linear(2, 2))
        True
    """
    digest = hashlib.sha256()
    for name, tensor in module.state_dict().items():
        data = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{tuple(data.shape)}:{data.dtype};".encode())
        digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
    return digest.hexdigest()


class _Single(torch.nn.Module):
    """The encoder's forward pass as a module of (input_ids, attention_mask) → vectors:
    a copy of its transformer, its pooling and normalisation (``SiameseEncoder.forward``)."""

    def __init__(self, encoder: torch.nn.Module):
        super().__init__()
        self.transformer = copy.deepcopy(encoder.transformer).float().cpu().eval()
        self.pooling, self.normalize = encoder.pooling, encoder.normalize

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        tokens = self.transformer(input_ids=input_ids,
                                  attention_mask=attention_mask).last_hidden_state.float()
        vectors = pool(tokens, attention_mask, self.pooling)
        return F.normalize(vectors, p=2, dim=1) if self.normalize else vectors


def export(encoder: torch.nn.Module, path: Path | io.BytesIO) -> None:
    """Write ``encoder`` (a SiameseEncoder) as an ONNX graph to ``path`` (float32, CPU).

    A copy of the network is exported, so the encoder itself keeps its device and
    mode. The sequence length is a dynamic axis; the batch is one text. Its
    attention is exported in the plain ("eager") form, which ONNX Runtime's
    transformer optimizer recognises and fuses (``fused``).
    """
    single = _Single(encoder)
    eager_attention(single.transformer)
    ids = torch.tensor([[101] + [1000 + i for i in range(14)] + [102]])
    raw = io.BytesIO()
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's notes on traced shape checks
        torch.onnx.export(single, (ids, torch.ones_like(ids)), raw,
                          input_names=["input_ids", "attention_mask"], output_names=["vector"],
                          dynamic_axes={"input_ids": {1: "tokens"},
                                        "attention_mask": {1: "tokens"}},
                          opset_version=OPSET, dynamo=False)
    graph = fused(raw.getvalue(), single.transformer.config)
    if isinstance(path, io.BytesIO):
        path.write(graph)
    else:
        Path(path).write_bytes(graph)


def eager_attention(transformer: torch.nn.Module) -> None:
    """Attention as matrix products and a softmax (not one SDPA call), on this copy only."""
    setter = getattr(transformer, "set_attn_implementation", None)
    try:
        if setter is not None:
            setter("eager")
        else:
            transformer.config._attn_implementation = "eager"
    except (ValueError, AttributeError) as exc:  # a model without the eager form: export as is
        log.info("Query graph exported with the model's own attention (%s).", exc)


def fused(graph: bytes, config) -> bytes:
    """``graph`` with ONNX Runtime's BERT fusions (attention, embeddings' layer norm, skip
    layer norms, GELU), if every layer's attention fuses; else ``graph`` unchanged.

    Measured on this project's 2-core EPYC, one query of 6-25 tokens: 5.5 → 4.5 ms on
    2 threads and 7.1 → 6.5 ms on 1 (p50), vectors equal to cosine 0.9999995. The
    fusion is for BERT-family models; a graph where it does not take everywhere is
    used as exported, and the query runtime checks every graph against torch anyway.

    Example:
        >>> fused(b"not a graph", type("C", (), {"model_type": "gpt2"})()) == b"not a graph"
        True
    """
    heads = getattr(config, "num_attention_heads", 0)
    layers = getattr(config, "num_hidden_layers", 0)
    if getattr(config, "model_type", "") not in FUSABLE or not heads or not layers:
        return graph
    try:
        import onnx
        from onnxruntime.transformers.optimizer import optimize_model

        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = optimize_model(onnx.load_from_string(graph), model_type="bert",
                                   num_heads=heads, hidden_size=config.hidden_size,
                                   opt_level=0, use_gpu=False)
        if model.get_fused_operator_statistics().get("Attention", 0) != layers:
            return graph
        return model.model.SerializeToString()
    except Exception as exc:  # the optimizer's own failure: the plain graph is exact too
        log.info("ONNX Runtime's fusions did not apply to the query graph (%s).", exc)
        return graph


class OnnxQueryGraph:
    """An ONNX Runtime session over the exported encoder, for one text at a time.

    ``run`` is safe to call from many threads at once (a session's ``run`` is),
    and releases the GIL while the graph runs.
    """

    def __init__(self, model: Path | bytes, threads: int, spin: bool = False):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # ``spin``: the pool's threads spin between the graph's operators while a run is in
        # progress, and stop when the last run returns (never between queries). One query
        # on 2 threads of a 2-core EPYC, 9 tokens: p50 2.48 ms against 3.35 ms sleeping,
        # and 2.65 against 4.87 ms beside a niced embed job; beside an un-niced load it
        # loses (7.9 against 4.3 ms), and beside other searches it takes their core (the
        # query runtime times both and chooses).
        options.add_session_config_entry("session.intra_op.allow_spinning",
                                         "1" if spin and threads > 1 else "0")
        options.add_session_config_entry("session.force_spinning_stop", "1")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(model if isinstance(model, bytes) else str(model),
                                            options, providers=["CPUExecutionProvider"])
        self.threads = threads
        self.spin = spin

    def run(self, ids: list[int]) -> np.ndarray:
        """The vector (dim,) of one text's token ids (special tokens included)."""
        tokens = np.asarray([ids], dtype=np.int64)
        feeds = {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
        return self.session.run(None, feeds)[0][0]

    @classmethod
    def load_or_export(cls, encoder: torch.nn.Module, cache_dir: Path | None, threads: int,
                       key: str | None = None, spin: bool = False) -> OnnxQueryGraph:
        """The cached graph of ``encoder``'s weights, exported first if it is not there.

        ``cache_dir`` None: exported into memory and not kept. ModelError when ONNX
        Runtime is not installed or the export fails (the caller falls back to torch).
        """
        try:
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise ModelError("onnxruntime is not installed (pip install -r requirements.txt); "
                             "queries are encoded with torch.") from exc
        if cache_dir is None:
            return cls._exported(encoder, threads, spin)
        key = key or weights_hash(encoder)
        path = private_dir(Path(cache_dir)) / f"{key[:32]}-{FORMAT}.onnx"
        if path.is_file():
            try:
                return cls(path, threads, spin)
            except Exception as exc:  # a damaged or partial file: made again below
                log.warning("The cached query graph %s does not load (%s); exporting it again.",
                            path, exc)
        try:
            replace_private(path, lambda tmp: export(encoder, tmp))
            return cls(path, threads, spin)
        except Exception as exc:
            raise _export_failed(exc) from exc

    @classmethod
    def _exported(cls, encoder: torch.nn.Module, threads: int, spin: bool) -> OnnxQueryGraph:
        """Export into memory (no cache folder) and open the graph from there."""
        buffer = io.BytesIO()
        try:
            export(encoder, buffer)
            return cls(buffer.getvalue(), threads, spin)
        except Exception as exc:
            raise _export_failed(exc) from exc


def _export_failed(exc: Exception) -> ModelError:
    return ModelError(f"Could not export the encoder to ONNX ({type(exc).__name__}: "
                      f"{str(exc)[:300]}); queries are encoded with torch.")
