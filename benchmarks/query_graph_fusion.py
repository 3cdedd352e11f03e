"""One query through the ONNX query graph: as exported before (the model's SDPA attention, no
fusion) against now (eager attention, fused by ONNX Runtime's transformer optimizer), same
queries, alternating, in the same run; and how close each is to the document path.

Queries: ``query_latency.py``'s (the git-doc questions, then first sentences of the
PostgreSQL manual), tokenized by the encoder's fast tokenizer as the query path does.
For 1 and 2 threads: p50/p95 per query of each graph, and the lowest cosine of each
graph's vector to the encoder's own float32 vector over those queries and the probe texts.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/query_graph_fusion.py
Writes benchmarks/results/query_graph_fusion.json.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RESULTS = HERE / "results" / "query_graph_fusion.json"
ROUNDS = 5


def graph_bytes(encoder, fuse: bool) -> bytes:
    from searchapp.embedding import onnx_graph

    saved = onnx_graph.fused, onnx_graph.eager_attention
    if not fuse:  # the export as it was: the model's attention, nothing fused
        onnx_graph.fused = lambda graph, config: graph
        onnx_graph.eager_attention = lambda transformer: None
    try:
        buffer = io.BytesIO()
        onnx_graph.export(encoder, buffer)
        return buffer.getvalue()
    finally:
        onnx_graph.fused, onnx_graph.eager_attention = saved


def pct(seconds: list[float]) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    return {"p50_ms": round(statistics.median(ms), 3),
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 3), "n": len(ms)}


def main() -> None:
    from query_latency import queries_for

    from searchapp.embedding import speed
    from searchapp.embedding.encoder import SiameseEncoder
    from searchapp.embedding.models import BUNDLED
    from searchapp.embedding.onnx_graph import OnnxQueryGraph
    from searchapp.embedding.query_runtime import rust_tokenizer

    encoder = SiameseEncoder.load(BUNDLED["all-MiniLM-L6-v2"](), device="cpu")
    tokenizer = rust_tokenizer(encoder)
    queries = queries_for(150)
    texts = encoder._clean(queries + speed.probe_texts())
    ids = [tokenizer.encode(t).ids for t in texts]
    reference = encoder._encode_on("cpu-fp32", texts, None)
    graphs = {"before": graph_bytes(encoder, fuse=False), "now": graph_bytes(encoder, fuse=True)}
    out = {"cpu": speed.read_cpuinfo().model, "cpus": os.cpu_count(), "load": os.getloadavg(),
           "queries": len(queries), "when": time.strftime("%Y-%m-%d %H:%M"), "threads": {}}
    for threads in (1, 2):
        sessions = {name: OnnxQueryGraph(raw, threads) for name, raw in graphs.items()}
        cosine = {name: round(min(float(g.run(i) @ r) for i, r in zip(ids, reference,
                                                                      strict=True)), 7)
                  for name, g in sessions.items()}
        times: dict[str, list[float]] = {name: [] for name in sessions}
        for _ in range(ROUNDS):
            for query_ids in ids[:len(queries)]:
                for name, graph in sessions.items():
                    started = time.perf_counter()
                    graph.run(query_ids)
                    times[name].append(time.perf_counter() - started)
        row = {name: {**pct(t), "min_cosine": cosine[name]} for name, t in times.items()}
        row["now_over_before_p50"] = round(row["now"]["p50_ms"] / row["before"]["p50_ms"], 3)
        out["threads"][threads] = row
        print(f"{threads} thread(s): before {row['before']['p50_ms']:.2f} ms, now "
              f"{row['now']['p50_ms']:.2f} ms p50 ({row['now_over_before_p50']}×); lowest "
              f"cosine {cosine['before']} / {cosine['now']}", flush=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
