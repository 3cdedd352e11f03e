"""Would the English model help the multilingual one? The shipped hybrid of
``use-multilingual-v3`` fused with ``all-MiniLM-L6-v2``'s semantic list, per direction.

Issue 48's target (MRR@10 >= 0.65 in every direction) is missed by the cross-language
directions, where the multilingual encoder is the only signal that crosses. The bundled English
model is the stronger one on English (``benchmarks/languages.py``: en→en hybrid 0.94 against
0.88), so this asks whether adding its list to the shipped hybrid lifts any direction, and which.

Protocol: ``benchmarks/languages.py``'s pages, queries, seed and corpora (both models, built
the same way, through the app). For each query, the shipped hybrid's top ``DEPTH``
(``search(..., mode="hybrid")`` on the multilingual corpus) and MiniLM's semantic top
``DEPTH`` (the bundled model's corpus of the same pages) are fused by weighted reciprocal rank
(``score = 1/(RRF_K + rank_hybrid) + w/(RRF_K + rank_minilm)``, ``searchapp.search.fusion``'s
constant) for each ``w`` of ``WEIGHTS``; ``w = 0`` is the shipped hybrid itself. MRR@10 per
direction and weight, with the bootstrap interval of the paired difference against ``w = 0``.

Every weight is reported and none is chosen: this is an upper bound on what the English
model could add, measured on the reported pages, not a tuned system.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/languages_three_way.py [--pages 300] [--seed 48]
Writes benchmarks/results/languages_three_way.json and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time

import numpy as np

from benchmarks import languages as base

RESULT = base.ROOT / "benchmarks" / "results" / "languages_three_way.json"
WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
DEPTH = 50


def fused_top(hybrid: list[str], minilm: list[str], weight: float, rrf_k: float) -> list[str]:
    """The top ``base.K`` ids of the two lists fused (ties: the hybrid's order first).

    Example:
        >>> fused_top(["a", "b"], ["b", "c"], 1.0, 10)[:2]
        ['b', 'a']
    """
    scores: dict[str, float] = {}
    for rank, doc in enumerate(hybrid, 1):
        scores[doc] = scores.get(doc, 0.0) + 1.0 / (rrf_k + rank)
    for rank, doc in enumerate(minilm, 1):
        scores[doc] = scores.get(doc, 0.0) + weight / (rrf_k + rank)
    return sorted(scores, key=lambda d: -scores[d])[:base.K]


def measure(app, runs: list[dict]) -> list[dict]:
    """MRR@10 per direction and weight, with the paired difference against weight 0."""
    from searchapp.evaluation.bootstrap import mean_interval, paired_mean_difference
    from searchapp.search.fusion import RRF_K
    from searchapp.search.service import search

    rows = []
    for run in runs:
        multi = base.corpus_name(base.MULTILINGUAL, run["docs"], run["set"])
        mini = base.corpus_name(base.BUNDLED, run["docs"], run["set"])
        ranks = {w: np.zeros(len(run["queries"])) for w in WEIGHTS}
        for i, (query, page) in enumerate(zip(run["queries"], run["names"], strict=True)):
            hybrid = [h.id for h in search(app, multi, query, k=DEPTH, mode="hybrid")]
            minilm = [h.id for h in search(app, mini, query, k=DEPTH, mode="semantic")]
            for w in WEIGHTS:
                top = fused_top(hybrid, minilm, w, RRF_K)
                ranks[w][i] = 1.0 / (top.index(page) + 1) if page in top else 0.0
        row = {"direction": run["direction"], "queries": len(run["queries"]),
               "mrr": {str(w): mean_interval(ranks[w]).scaled(1.0, 3) for w in WEIGHTS},
               "against_shipped": {str(w): paired_mean_difference(ranks[0.0], ranks[w])
                                   .scaled(1.0, 3) for w in WEIGHTS if w}}
        print(f"| {row['direction']} | " + " | ".join(
            f"{row['mrr'][str(w)]['value']:.3f}" for w in WEIGHTS) + " |", flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=48)
    args = parser.parse_args()
    from searchapp.config import Settings
    from searchapp.context import App

    started = time.perf_counter()
    pages = {lang: base.read_language(lang) for lang in base.FOLDERS}
    runs = base.directions(pages, args.pages, args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-three-way-") as data:
        app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}))
        built = base.build(app, pages, runs)
        print("| direction | " + " | ".join(f"w = {w:g}" for w in WEIGHTS) + " |\n|"
              + "---|" * (1 + len(WEIGHTS)), flush=True)
        rows = measure(app, runs)
        app.db.dispose()
    result = {"what": "the shipped use-multilingual-v3 hybrid fused with all-MiniLM-L6-v2's "
                      "semantic list by weighted RRF; w = 0 is the shipped hybrid",
              "collection": "benchmarks/languages.py's", "pages_per_language": args.pages,
              "seed": args.seed, "depth": DEPTH, "metric": "MRR@10",
              "interval": "percentile bootstrap 95% over queries",
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
              "build": built, "seconds": round(time.perf_counter() - started, 1),
              "rows": rows}
    RESULT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {RESULT} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
