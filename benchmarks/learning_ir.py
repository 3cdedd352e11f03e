"""What query → document judgements teach: the learn job's levers measured on separate test
queries of a real collection, for N = 100, 300, 900 judged queries.

Data: ``benchmarks/ir_sections.py`` (Debian's PostgreSQL manual: 1,764 sections as the
corpus, their headings as queries; 1,015 training queries, 300 test queries that are
never judged). For each N the corpus' judgements become exactly the first N training
queries (``judge import``), the product's ``learn`` job runs with one recipe (its
own held-out fifth and verdict included), and the fine-tuned model is measured on the
300 test queries: nDCG@10 of hybrid and semantic search with bootstrap 95% intervals
and the paired difference against the untouched model.

Recipes (``--recipes``, comma-separated; each a set of the learn job's levers, see
``searchapp.training.recipe``):

- ``before``: today's recipe before this benchmark (batch 16, the step rule, mined
  semantic negatives, whole documents as positives);
- one lever alone on top of ``before``: ``cached`` (a cached MNRL over large batches,
  several epochs, early stopping), ``lexical`` (hard negatives from the lexical list
  too), ``passages`` (the judged document's best passage as the positive);
- ``all``: every lever (the default recipe).

Each learn job's minutes per step are kept (the ``items``/``mine``/``gold``/``verdict``
steps, from the job's progress). Rounds are long on 2 shared cores: ``--ns`` and
``--recipes`` choose what runs; results are merged into the JSON file, so rounds can
run one after another. ``--train-on-all``: the job then trains its final model on every
judgement, the held-out fifth included (its verdict is the one measured before), and the
test queries measure that final model.

Usage:
    PYTHONPATH=. python benchmarks/learning_ir.py --ns 300 --recipes before,all
Results: benchmarks/results/learning_ir.json (merged after every round).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from ir_sections import OUT as COLLECTION  # noqa: E402
from ir_sections import build  # noqa: E402

CACHE = ROOT / "benchmarks" / ".cache" / "learning-ir"
RESULTS = ROOT / "benchmarks" / "results" / "learning_ir.json"
CORPUS = "pgdocs"
MODES = ("hybrid", "semantic")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def make_app():
    """The benchmark's app: its corpus ingested once, kept under ``CACHE/app``."""
    os.environ["SEARCHAPP_DATA_DIR"] = str(CACHE / "app")
    from searchapp.context import App

    app = App()
    from searchapp.store import repo

    with app.db.session() as s:
        stored = repo.find_corpus(s, CORPUS) is not None
    if not stored:
        ingest(app)
    from searchapp.jobs import queue
    from searchapp.jobs.worker import run_until_done

    for job in queue.recent(app.db, 100):  # an ingest stopped half-way: finish it
        if job.kind == "embed" and not job.finished:
            log(f"finishing embed job {job.id}")
            run_until_done(app, job.id)
        elif not job.finished:  # a round stopped half-way: cancelled (its worker is gone)
            queue.cancel(app.db, job.id)
            run_until_done(app, job.id)
    return app


def ingest(app) -> None:
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import run_until_done

    started = time.monotonic()
    data = (COLLECTION / "corpus.csv").read_bytes()
    job = run_until_done(app, upload(app, read_table(data, "corpus.csv"), CORPUS).job_id)
    assert job.status == "succeeded", job.error
    log(f"ingested {CORPUS} in {time.monotonic() - started:.1f} s")


def set_judgements(app, n: int) -> int:
    """The corpus' judgements become exactly the first ``n`` training queries."""
    from searchapp.judgements import service as judgements

    for j in judgements.list_judgements(app, CORPUS):
        judgements.remove(app, CORPUS, j.id)
    with open(COLLECTION / "judgements.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:n + 1]
    text = "\n".join(",".join(_quote(c) for c in r) for r in [header, *body]) + "\n"
    judgements.import_csv(app, CORPUS, text.encode(), "judgements.csv")
    return len(body)


def _quote(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"' if any(c in cell for c in ',"\n') else cell


def test_items():
    from searchapp.evaluation.service import file_items

    return file_items(COLLECTION / "test-queries.jsonl", COLLECTION / "test-qrels.tsv")


def measure(app, model: str | None, items, encoder=None):
    """The model's evaluation on the test queries: its stored vectors (the learn job's
    verdict stored them), else encoded in memory with ``encoder``."""
    from searchapp.evaluation.corpus import evaluate
    from searchapp.evaluation.encoded import encode_corpus, handle_for

    if encoder is None:
        handle = handle_for(app, CORPUS, model)
    else:
        handle = encode_corpus(app, CORPUS, model, encoder=encoder)
    try:
        return evaluate(app, handle, items, modes=MODES)
    finally:
        if encoder is not None:
            app.forget_encoder(model)


def summary(run) -> dict:
    """nDCG@10 per mode with its interval, and per query (for paired comparisons of rounds)."""
    out = {}
    for mode in MODES:
        stats = run.as_dict()["queries"]["modes"][mode]["ndcg@10"]
        out[mode] = {**stats, "per_query": [round(float(x), 4)
                                             for x in run.per_query[mode]["ndcg@10"]]}
    return out


def brief(test: dict) -> dict:
    """A summary without its per-query values (for the log)."""
    return {m: {k: v for k, v in s.items() if k != "per_query"} for m, s in test.items()}


def learn(app, name: str, recipe: str, threads: int, train_on_all: bool = False
          ) -> tuple[dict, float, list]:
    from searchapp.jobs.worker import run_until_done
    from searchapp.training.learn_job import request_learning

    started = time.monotonic()
    job_id = request_learning(app, CORPUS, name=name, augment="off", recipe=recipe,
                              train_on_all=train_on_all).job_id
    job = run_until_done(app, job_id)
    assert job.status == "succeeded", job.error
    return job.result, time.monotonic() - started, []


def switch_and_back(app, name: str) -> dict:
    """Seconds to adopt the new model (``models use``) and to roll back: the learn job's
    verdict stored its vectors, so neither should re-embed."""
    from searchapp.jobs.worker import run_until_done
    from searchapp.training.adoption import accept, rollback

    out = {}
    for step, start in (("use", lambda: accept(app, CORPUS, name, force=True)),
                        ("rollback", lambda: rollback(app, CORPUS))):
        started = time.monotonic()
        job = run_until_done(app, start())
        assert job.status == "succeeded", job.error
        out[step] = round(time.monotonic() - started, 1)
        out[f"{step}_embedded"] = (job.result or {}).get("embedded")
    return out


def compare(before, after) -> dict:
    from searchapp.evaluation.corpus import compare as paired

    return paired(before, after).as_dict()


def round_(app, n: int, recipe: str, baseline, items, threads: int,
           train_on_all: bool = False) -> dict:
    from searchapp.embedding.encoder import SiameseEncoder

    judged = set_judgements(app, n)
    # a new name each time: earlier rounds' vectors stay
    name = f"pg-{recipe.replace('+', '_')}-{n}-{int(time.time())}"
    log(f"N={judged}, recipe {recipe}: learning")
    result, seconds, _ = learn(app, name, recipe, threads, train_on_all)
    log(f"  learned in {seconds / 60:.1f} min: {result.get('sentence')}")
    from searchapp.evaluation.encoded import is_stored

    encoder = None if is_stored(app, CORPUS, name) else SiameseEncoder.load(
        app.settings.models_dir / name, device=app.settings.device,
        precision=app.settings.precision)
    started = time.monotonic()
    after = measure(app, name, items, encoder=encoder)
    log(f"  measured on the test queries in {time.monotonic() - started:.1f} s")
    out = {"n": judged, "recipe": recipe, "train_on_all": train_on_all,
           "minutes": round(seconds / 60, 2),
           "verdict": result.get("verdict"), "sentence": result.get("sentence"),
           "steps": result.get("steps"), "seconds_per_step": result.get("seconds_per_step"),
           "step_seconds": result.get("step_seconds"),
           "fusion": (result.get("fusion") or {}).get("sentence"), "test": summary(after),
           "test_difference": compare(baseline, after)}
    log(f"  test: {json.dumps(brief(out['test']))}")
    out["switch_seconds"] = switch_and_back(app, name)
    log(f"  switch to it and back: {out['switch_seconds']}")
    shutil.rmtree(app.settings.models_dir / name, ignore_errors=True)  # its vectors stay
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", default="100,300,900")
    parser.add_argument("--recipes", default="before,all")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--train-on-all", action="store_true",
                        help="after the verdict, the final model trained on every judgement "
                             "(rounds named RECIPE+final-N)")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="the JSON file the rounds are merged into")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    if not (COLLECTION / "corpus.csv").is_file():
        log(f"collection: {build(COLLECTION)}")
    app = make_app()
    items = test_items()
    started = time.monotonic()
    baseline = measure(app, None, items)
    log(f"untouched model on {len(items.queries)} test queries "
        f"({time.monotonic() - started:.1f} s): {json.dumps(brief(summary(baseline)))}")
    results = (json.loads(args.results.read_text()) if args.results.is_file()
               else {"rounds": {}})
    results.update({"machine": {"cpu": _cpu(), "cores": os.cpu_count(),
                                "gpu": torch.cuda.get_device_name()
                                if torch.cuda.is_available() else None,
                                "torch": torch.__version__,
                                "python": platform.python_version()},
                    "untouched_measured_seconds": round(time.monotonic() - started, 1),
                    "collection": json.loads((COLLECTION / "summary.json").read_text()),
                    "untouched": summary(baseline)})
    for n in [int(x) for x in args.ns.split(",")]:
        for recipe in args.recipes.split(","):
            key = f"{recipe}{'+final' if args.train_on_all else ''}-{n}"
            results["rounds"][key] = round_(app, n, recipe, baseline, items, args.threads,
                                            args.train_on_all)
            args.results.write_text(json.dumps(results, indent=1))
    log(f"written {args.results}")


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


if __name__ == "__main__":
    main()
