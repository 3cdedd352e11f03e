"""Which number of clusters the default chooses: the tie rule alone (before) against the tie
rule without a catch-all (now), on the same vectors in the same run.

``hierarchy.choose_k`` scores k-means at each candidate k by silhouette on a sample; scores
within 5% of the best tie. Before, the fewest tied clusters won; now the fewest tied
clusters leaving no cluster of over 35% of the documents (``tied_choice``). Sets: the TREC
questions, the STSb sentences, both mixed (``clusters_quality.py``'s sets, cached by
``sentence_cache.py``), 400 Debian ``copyright`` files of 1-8 KB (where this machine has
them; embedded here with the bundled model) and ``--synthetic N`` clustered vectors
(``synthetic.clustered_vectors``: about N/100 topics).

Run:  PYTHONPATH=. nice .venv/bin/python benchmarks/clusters_choice.py [--synthetic 1000000]
Writes benchmarks/results/clusters_choice.json.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RESULTS = HERE / "results" / "clusters_choice.json"


def tie_rule_alone(scores: dict[int, float]) -> int:
    from searchapp.clusters.hierarchy import TIE

    top = max(scores.values())
    return min(k for k, s in scores.items() if s >= top - TIE * abs(top))


def check(name: str, vectors: np.ndarray) -> dict:
    from searchapp.clusters.hierarchy import choose_k

    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    started = time.perf_counter()
    k, scores = choose_k(vectors)
    row = {"set": name, "documents": len(vectors), "before": tie_rule_alone(scores), "now": k,
           "silhouettes": scores, "seconds": round(time.perf_counter() - started, 1)}
    print(f"{name:>22}: {len(vectors):>9,} documents; k before {row['before']:>3}, "
          f"now {k:>3} ({row['seconds']} s)", flush=True)
    return row


def copyright_vectors(n: int = 400) -> np.ndarray | None:
    files = [f for f in sorted(glob.glob("/usr/share/doc/*/copyright"))
             if 1000 <= os.path.getsize(f) <= 8000][:n]
    if len(files) < n:
        return None
    os.environ.setdefault("SEARCHAPP_DATA_DIR", tempfile.mkdtemp())
    from searchapp.context import App

    texts = [Path(f).read_text(errors="replace") for f in files]
    return np.asarray(App().encoder("all-MiniLM-L6-v2").encode(texts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=0, metavar="N")
    args = parser.parse_args()
    from sentence_cache import stsb_vectors, trec_vectors

    _, trec = trec_vectors()
    _, stsb = stsb_vectors()
    rows = [check("trec", trec), check("stsb", stsb), check("mixed", np.vstack([trec, stsb]))]
    if (licences := copyright_vectors()) is not None:
        rows.append(check("debian-copyright-400", licences))
    if args.synthetic:
        from synthetic import clustered_vectors

        rows.append(check(f"synthetic-{args.synthetic}", clustered_vectors(args.synthetic)))
    RESULTS.write_text(json.dumps({"machine": {"cpus": os.cpu_count(),
                                               "load": os.getloadavg()},
                                   "when": time.strftime("%Y-%m-%d %H:%M"), "sets": rows},
                                  indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
