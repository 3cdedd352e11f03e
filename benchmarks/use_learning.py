"""Learning from judgements on the multilingual model: a judged task before and after.

Collection: the German manual pages Debian installs (``manpages-de``; the pages of
``benchmarks/languages.py``: a page's NAME summary is a query, the first 600 characters of its
DESCRIPTION the document). One corpus of the German documents on ``use-multilingual-v3``; each
page's summary judged relevant to its own page (label 2), in German (``--queries de``) or in
English (``--queries en``: the English page's summary, cross-lingual). The app's own learn job
runs on those judgements with its defaults (a fifth of the queries held out by hash, never
trained on; augmentation off, as ``auto`` leaves it for this model), and its verdict compares
the base and the learned model on the held-out queries: nDCG@10 and MRR@10 per search mode
with paired bootstrap intervals. The seconds of each step and the fine-tuned folder's size
are recorded.

Run:  OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/use_learning.py [--queries de]
Writes benchmarks/results/use_learning_<queries>.json and prints the verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from benchmarks.languages import read_language, sample, store

ROOT = Path(__file__).resolve().parents[1]
MODEL = "use-multilingual-v3"


def judgements_csv(pages: list, queries: dict[str, str]) -> bytes:
    """``query,doc_id,label`` rows: each page's summary in the query language → its page."""
    import pandas as pd

    rows = [{"query": queries[p.name], "doc_id": p.name, "label": 2} for p in pages]
    return pd.DataFrame(rows).to_csv(index=False).encode()


def run(query_lang: str, cap: int, seed: int) -> dict:
    os.environ["SEARCHAPP_DATA_DIR"] = tempfile.mkdtemp(prefix="use-learning-")
    os.environ["SEARCHAPP_DEVICE"] = "cpu"
    from searchapp.context import App
    from searchapp.jobs.worker import run_until_done, work
    from searchapp.judgements import service as judgements
    from searchapp.training.learn_job import request_learning

    german, english = read_language("de"), read_language("en")
    names = set(german) & set(english)
    asked = {n: (german if query_lang == "de" else english)[n].summary for n in names}
    chosen = sample(names, cap, seed, asked)
    pages = [german[n] for n in chosen]
    app = App()
    started = time.monotonic()
    store(app, "man-de", pages, MODEL)
    work(app, stop_when_idle=True)
    judgements.import_csv(app, "man-de", judgements_csv(pages, asked), "judged.csv")
    ingest = time.monotonic() - started
    learn = request_learning(app, "man-de", name="man-de-learned")
    job = run_until_done(app, learn.job_id)
    assert job.status == "succeeded", job.error
    folder = app.settings.models_dir / "man-de-learned"
    size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
    result = job.result
    return {"queries": query_lang, "documents": "de", "pages": len(pages), "seed": seed,
            "split": learn.describe(), "verdict": result["verdict"],
            "sentence": result["sentence"], "comparison": result["comparison"],
            "step_seconds": result["step_seconds"], "steps": result["steps"],
            "ingest_seconds": round(ingest, 1), "model_folder_bytes": size,
            "threads": os.environ.get("OMP_NUM_THREADS")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", choices=("de", "en"), default="de")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=48)
    args = parser.parse_args()
    out = run(args.queries, args.pages, args.seed)
    target = ROOT / "benchmarks" / "results" / f"use_learning_{args.queries}.json"
    target.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(out["split"])
    print(out["sentence"])
    print(json.dumps(out["comparison"].get("queries"), indent=1)[:3000])
    print(f"steps {out['steps']}, step seconds {out['step_seconds']}, "
          f"model folder {out['model_folder_bytes'] / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
