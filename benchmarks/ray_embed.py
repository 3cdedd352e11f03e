"""Embedding through Ray actors against the plain worker, on this machine's local cluster.

The bundled sample corpus (3,025 image captions) is uploaded twice into one
SQLite database. The peer is the plain worker: the ``embed`` job run in this
process (model load included). Ours: the same job with ``"engine": "ray"`` on a
local Ray cluster started in this process with the machine's CPUs, as 1 actor
with all CPUs and as one actor per CPU (actor start and model load included;
the cluster's own start is reported apart). Both write through the same store
functions; vector agreement is the cosine between the two corpora's vectors of
each caption.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/ray_embed.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from searchapp import corpora  # noqa: E402
from searchapp.config import Settings  # noqa: E402
from searchapp.context import App  # noqa: E402
from searchapp.distributed import RayOptions, run_embed  # noqa: E402
from searchapp.ingest import read_table  # noqa: E402
from searchapp.jobs import queue  # noqa: E402
from searchapp.jobs.worker import run_until_done  # noqa: E402
from searchapp.store import repo  # noqa: E402

SAMPLE = HERE.parent / "searchapp" / "sample" / "captions.csv.gz"


def vectors(app: App, name: str) -> dict[str, np.ndarray]:
    with app.db.session() as s:
        c = repo.corpus_state(s, name)
        model = repo.find_model(s, c.model_name)
        out = {}
        for ids, matrix in repo.embeddings_since(s, c.id, model.id, 0, model.dimension):
            names = repo.document_texts(s, c.id, ids.tolist())
            out.update({names[int(i)][0]: v for i, v in zip(ids, matrix, strict=True)})
        return out


def fresh_corpus(app: App, table, name: str) -> int:
    """Upload ``table`` as corpus ``name``; its queued embed job is cancelled (we run it)."""
    summary = corpora.upload(app, table, name)
    queue.cancel(app.db, summary.job_id)
    return summary.added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(HERE / "results" / "ray_embed.json"))
    args = parser.parse_args()
    import ray

    cpus = os.cpu_count() or 1
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SEARCHAPP_DATA_DIR"] = tmp
        app = App(Settings.from_env())
        table = read_table(SAMPLE)
        runs = {}
        n = fresh_corpus(app, table, "plain")
        started = time.perf_counter()
        job = run_until_done(app, corpora.embed(app, "plain"))
        seconds = time.perf_counter() - started
        assert job.status == "succeeded", job.error
        runs["plain_worker"] = {"seconds": round(seconds, 2),
                                "sentences_per_s": round(n / seconds, 1),
                                "speed_path": app.encoder(app.settings.model).speed_path}
        print("plain worker", runs["plain_worker"], flush=True)
        started = time.perf_counter()
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        cluster_start = time.perf_counter() - started
        plain = vectors(app, "plain")
        for label, options in (
                (f"ray_1_actor_{cpus}_cpus", RayOptions(address=None, cpus_per_actor=cpus)),
                (f"ray_{cpus}_actors_1_cpu", RayOptions(address=None, cpus_per_actor=1))):
            name = label.replace("_", "-")
            fresh_corpus(app, table, name)
            started = time.perf_counter()
            result = run_embed(app, name, options)
            seconds = time.perf_counter() - started
            got = vectors(app, name)
            cosines = np.array([float(plain[k] @ got[k]) for k in plain])
            runs[label] = {"seconds": round(seconds, 2), "sentences_per_s": round(n / seconds, 1),
                           "actors": result["actors"], "embedded": result["embedded"],
                           "min_cosine_to_plain": round(float(cosines.min()), 6),
                           "mean_cosine_to_plain": round(float(cosines.mean()), 6),
                           "same_documents": plain.keys() == got.keys()}
            print(label, runs[label], flush=True)
        ray.shutdown()
        app.db.dispose()
    base = runs["plain_worker"]["sentences_per_s"]
    for label, run in runs.items():
        if label != "plain_worker":
            run["ratio_to_plain_worker"] = round(run["sentences_per_s"] / base, 2)
            print(f"{label}: {run['sentences_per_s']} sentences/s against the plain worker's "
                  f"{base}: {run['ratio_to_plain_worker']}x, min cosine "
                  f"{run['min_cosine_to_plain']}")
    out = {"benchmark": "ray_embed", "documents": n, "cpus": cpus,
           "ray_cluster_start_s": round(cluster_start, 2),
           "load_before": [round(x, 1) for x in load_before],
           "load_after": [round(x, 1) for x in os.getloadavg()], "runs": runs}
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
