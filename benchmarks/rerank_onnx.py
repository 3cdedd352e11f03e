"""The reranker's arithmetic on ONNX Runtime: 30 query–passage pairs scored at once, per shape.

``rerank_latency.py`` measures the reranker as the app runs it (torch, dynamic int8). This
asks what the fastest runtime here can do with the same work: the bundled encoder's layers
(the first ``layers`` of them) with a one-logit head on the [CLS] vector, exported as an
ONNX graph, fused by ONNX Runtime's BERT optimizer (as the query graph is,
``searchapp/embedding/onnx_graph.py``), then float32 and dynamic int8 (``quantize_dynamic``),
on 2 threads. The input: 30 pairs (one query, 30 sections of the PostgreSQL manual
collection of ``ir_sections.py``) padded to ``tokens``; torch float32 on the same pairs is
the reference (its time and the largest logit difference). Shapes: (6, 128) is the
reranker's default; the others are what fits a budget of 80 ms.

Usage:
    python benchmarks/ir_sections.py
    PYTHONPATH=. python benchmarks/rerank_onnx.py
Results: benchmarks/results/rerank_onnx.json
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "benchmarks" / ".cache" / "pg-sections" / "corpus.csv"
RESULTS = ROOT / "benchmarks" / "results" / "rerank_onnx.json"
SHAPES = [(6, 128), (6, 64), (3, 128), (3, 64), (2, 64)]  # (layers, tokens per pair)
PAIRS, ROUNDS, THREADS = 30, 12, 2
QUERY = "how to archive the WAL continuously"


def cross_encoder(model_path: str, layers: int):
    import torch
    from transformers import AutoModel

    class CrossEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.t = AutoModel.from_pretrained(model_path, attn_implementation="eager")
            self.t.encoder.layer = self.t.encoder.layer[:layers]
            self.t.config.num_hidden_layers = layers
            self.head = torch.nn.Linear(self.t.config.hidden_size, 1)

        def forward(self, ids, mask, types):
            out = self.t(input_ids=ids, attention_mask=mask, token_type_ids=types)
            return self.head(out.last_hidden_state[:, 0])[:, 0]

    torch.manual_seed(0)
    return CrossEncoder().eval()


def onnx_graphs(model, args, folder: Path, config) -> dict[str, Path]:
    """The fused float32 graph and its dynamic int8 version."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    raw = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, raw, input_names=["ids", "mask", "types"],
                          output_names=["logit"], opset_version=17, dynamo=False,
                          dynamic_axes={k: {0: "pairs", 1: "tokens"}
                                        for k in ("ids", "mask", "types")})
    with contextlib.redirect_stdout(io.StringIO()):
        fused = optimize_model(onnx.load_from_string(raw.getvalue()), model_type="bert",
                               num_heads=config.num_attention_heads,
                               hidden_size=config.hidden_size, opt_level=0, use_gpu=False)
    paths = {"float32": folder / "fp32.onnx", "int8": folder / "int8.onnx"}
    fused.save_model_to_file(str(paths["float32"]))
    quantize_dynamic(str(paths["float32"]), str(paths["int8"]), weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return paths


def p50(fn) -> float:
    fn()  # warm-up
    ms = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(ms), 1)


def main() -> None:
    import onnxruntime as ort
    import pandas as pd
    import torch
    from transformers import AutoTokenizer

    from searchapp.embedding.models import BUNDLED

    torch.set_num_threads(THREADS)
    model_path = str(BUNDLED["all-MiniLM-L6-v2"]())
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    passages = pd.read_csv(DATA).iloc[:, -1].astype(str).tolist()[:PAIRS]
    rows = []
    for layers, tokens in SHAPES:
        model = cross_encoder(model_path, layers)
        enc = tokenizer([QUERY] * PAIRS, passages, truncation="longest_first",
                        max_length=tokens, padding="max_length", return_tensors="pt")
        args = (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])
        feeds = dict(zip(("ids", "mask", "types"), (a.numpy() for a in args), strict=True))
        with torch.no_grad():
            reference = model(*args).numpy()
            row = {"layers": layers, "tokens": tokens,
                   "torch_float32_ms": p50(lambda m=model, a=args: m(*a))}
        with tempfile.TemporaryDirectory() as tmp:
            for name, path in onnx_graphs(model, args, Path(tmp), model.t.config).items():
                options = ort.SessionOptions()
                options.intra_op_num_threads, options.log_severity_level = THREADS, 3
                session = ort.InferenceSession(str(path), options,
                                               providers=["CPUExecutionProvider"])
                logits = session.run(None, feeds)[0]
                row[f"onnx_{name}_ms"] = p50(lambda s=session, f=feeds: s.run(None, f))
                row[f"onnx_{name}_max_logit_difference"] = round(
                    float(np.abs(logits - reference).max()), 4)
        print(json.dumps(row), flush=True)
        rows.append(row)
    RESULTS.write_text(json.dumps({
        "cpu_threads": THREADS, "pairs": PAIRS, "load_average": os.getloadavg(),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"), "shapes": rows}, indent=1) + "\n")
    print(f"written {RESULTS}")


if __name__ == "__main__":
    main()
