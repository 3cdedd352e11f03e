"""The learning loop on the command line: evaluate a corpus, fine-tune from its judgements, adopt.

- ``searchapp evaluate --corpus C [--model M] [--queries F --qrels F] [--json]``
- ``searchapp evaluate --corpus C --fit-fusion [--model M] [--json]``: fit hybrid search's
  fusion to the corpus' judged queries (kept only when better on held-out queries);
  ``--reset-fusion`` goes back to the default fusion
- ``searchapp finetune --corpus C --from-judgements --name N [--augment auto|on|off] [--wait]``
- ``searchapp finetune --corpus C --unsupervised --name N [--wait]`` (SimCSE on its text)
- ``searchapp models use --corpus C --model M [--force]``, ``searchapp models rollback --corpus C``

The arguments are registered by ``cli.models`` (the commands already exist for
files and models); the handlers here run when ``--corpus`` is given.

Example:
    $ searchapp evaluate --corpus faq
    $ searchapp finetune --corpus faq --from-judgements --name faq-v2 --wait
    $ searchapp models use --corpus faq --model faq-v2
"""

from __future__ import annotations

import argparse
import logging
import sys

from searchapp.cli import common
from searchapp.cli.output import print_json, print_table
from searchapp.errors import InvalidParameterError

QUERY_COLUMNS = ("mode", "ndcg@10", "mrr@10", "recall@10", "recall@100", "n")


def _cell(estimate: dict) -> str:
    """``71.30 [62.01, 79.92]``: the value and its 95% interval (×100)."""
    return f"{estimate['value']:.2f} [{estimate['low']:.2f}, {estimate['high']:.2f}]"


def print_report(report: dict) -> None:
    """An evaluation report as the tables the README shows."""
    print(f"Corpus {report['corpus']!r}, model {report['model']}: {report['judgements']} "
          "judgements (95% bootstrap intervals in brackets).")
    queries = report.get("queries")
    if queries:
        skipped = f"; {queries['skipped']} without a relevant document left out" \
            if queries["skipped"] else ""
        print(f"\nJudged queries: {queries['n']}{skipped}")
        rows = [{"mode": mode, **{m: _cell(v[m]) for m in QUERY_COLUMNS[1:-1]},
                 "n": v["ndcg@10"]["n"]} for mode, v in queries["modes"].items()]
        print_table(rows, list(QUERY_COLUMNS))
    pairs = report.get("pairs")
    if pairs:
        print(f"\nJudged pairs: {pairs['n']} ({pairs['positives']} duplicates)")
        t = pairs["threshold"]
        print_table([{"ap": _cell(pairs["ap"]), "best_f1": _cell(pairs["f1"]),
                      "at_threshold": f"{t['value']:.4f} [{t['low']:.4f}, {t['high']:.4f}]"}],
                    ["ap", "best_f1", "at_threshold"])
    if report.get("fusion"):
        from searchapp.search.fusion import fusion_line

        print(f"\nHybrid fusion: {fusion_line(report['fusion'], report.get('fusion_gain'))}")
    if report.get("warning"):
        print(f"\nNote: {report['warning']}")
    if report.get("missing_documents"):
        print(f"\n{report['missing_documents']} judged documents are no longer in the corpus "
              "and were left out.")


def fit_fusion(args: argparse.Namespace) -> int:
    """``evaluate --corpus C --fit-fusion``: run the fit as a job here, print its outcome."""
    from searchapp.evaluation.fusion_fit import request_fusion_fit

    if args.queries or args.qrels:
        raise InvalidParameterError("--fit-fusion fits to the corpus' own judgements; leave "
                                    "out --queries and --qrels (import them with `searchapp "
                                    "judge import` to fit to them).")
    app = common.open_app()
    job_id = request_fusion_fit(app, args.corpus, model=args.model)
    common.run_job(app, "fit-fusion job")(job_id)
    result = common.job_result(app, job_id)
    if args.json:
        print_json(result)
    else:
        print(result["sentence"])
    return 0


def reset_fusion(args: argparse.Namespace) -> int:
    """``evaluate --corpus C --reset-fusion``: hybrid search back to the default fusion."""
    from searchapp.search.fusion import DEFAULT, save_fusion
    from searchapp.store import repo

    app = common.open_app()
    with app.db.session() as s:
        state = repo.corpus_state(s, args.corpus)
    save_fusion(app, state.id, args.model or state.model_name, None)
    print(f"Hybrid search of {state.name!r} uses the default fusion ({DEFAULT.describe()}).")
    return 0


def evaluate(args: argparse.Namespace) -> int:
    from searchapp.evaluation.service import request_evaluation

    if args.fit_fusion and args.reset_fusion:
        raise InvalidParameterError("Give --fit-fusion or --reset-fusion, not both.")
    if args.fit_fusion:
        return fit_fusion(args)
    if args.reset_fusion:
        return reset_fusion(args)
    app = common.open_app()
    job_id = request_evaluation(app, args.corpus, model=args.model, queries=args.queries,
                                qrels=args.qrels)
    common.run_job(app, "evaluate job")(job_id)
    report = common.job_result(app, job_id)
    if args.json:
        print_json(report)
    else:
        print_report(report)
    return 0


def finetune(args: argparse.Namespace) -> int:
    from searchapp.training.adapt_job import request_adaptation
    from searchapp.training.learn_job import request_learning

    if args.train or args.dev:
        raise InvalidParameterError("--corpus trains on the corpus' judgements (or its text "
                                    "with --unsupervised); leave out --train and --dev.")
    if args.from_judgements == args.unsupervised:
        raise InvalidParameterError("With --corpus, give --from-judgements (learn from the "
                                    "corpus' judgements) or --unsupervised (adapt to its text).")
    app = common.open_app()
    hyper = {"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
             "seed": args.seed, "max_steps": args.max_steps}
    if args.from_judgements:
        started = request_learning(app, args.corpus, name=args.name, augment=args.augment,
                                   recipe=args.recipe, train_on_all=args.train_on_all, **hyper)
        print(started.describe())
        for line in started.plan:
            print(f"  {line}")
        job_id, label = started.job_id, "learn job" if started.route == "finetune" else \
            "fit-fusion job"
    else:
        job_id, label = request_adaptation(app, args.corpus, name=args.name, **hyper), \
            "adapt job"
        print(f"Adapting to the text of {args.corpus!r} (unsupervised SimCSE).")
    if not args.wait:
        print(f"Job {job_id} queued; `searchapp worker` runs it. The verdict appears in "
              "`searchapp models` and on the Models page.")
        return 0
    progress_log = logging.getLogger("searchapp.training")
    progress_log.setLevel(logging.INFO)
    progress_log.addHandler(logging.StreamHandler(sys.stderr))
    common.run_job(app, label)(job_id)
    result = common.job_result(app, job_id)
    if args.from_judgements and started.route == "fusion":
        print(result["sentence"])
        return 0
    print(f"Saved model {result['model']} in {result['path']}.")
    augmentation = result.get("augmentation") or {}
    if augmentation.get("tried"):
        print(f"Augmented SBERT: {'kept' if augmentation['kept'] else 'not kept'} "
              f"({augmentation['reason']}).")
    print(result.get("sentence") or "")
    if result.get("trained_on_all"):
        final = result["trained_on_all"]
        print(f"Then trained on all {final['examples']} judged examples ({final['epochs']} "
              "epochs): the verdict above was measured before, on the model that never saw "
              "the held-out judgements.")
    threshold = result.get("threshold")
    if threshold:
        pairs = threshold["expected_pairs"]
        same = "precision" if threshold["method"] == "precision" else "number of pairs"
        print(f"Duplicate threshold for {result['model']}: {threshold['proposed']:.4f} "
              f"(the same {same} as {threshold['current']:.4f} now: about "
              f"{pairs['current']:,} pairs in the corpus; at {threshold['current']:.4f} the "
              f"new model would find about {pairs['candidate_at_current']:,}).")
    if result.get("verdict"):
        force = " --force" if result["verdict"] in ("worse", "not measured") else ""
        print(f"Adopt it: searchapp models use --corpus {result['corpus']} --model "
              f"{result['model']}{force}")
    return 0


def use(args: argparse.Namespace) -> int:
    from searchapp.training import adoption

    if not args.corpus or not args.model:
        raise InvalidParameterError("searchapp models use needs --corpus C --model M.")
    app = common.open_app()
    verdict = adoption.verdict_of(app, args.model)
    if verdict and verdict.get("sentence"):
        print(verdict["sentence"])
    job_id = adoption.accept(app, args.corpus, args.model, force=args.force)
    return _follow_switch(app, args, job_id, args.model)


def rollback(args: argparse.Namespace) -> int:
    from searchapp.training import adoption

    if not args.corpus:
        raise InvalidParameterError("searchapp models rollback needs --corpus C.")
    app = common.open_app()
    previous = adoption.previous_model(app, args.corpus)
    job_id = adoption.rollback(app, args.corpus)
    return _follow_switch(app, args, job_id, previous)


def _follow_switch(app, args: argparse.Namespace, job_id: int, model: str | None) -> int:
    from searchapp.pairs.threshold import threshold_for

    if not args.wait:
        print(f"Switching {args.corpus!r} to {model}: job {job_id} re-embeds it, then switches "
              "(`searchapp worker` runs it; searches use the current model until then). Back "
              f"with: searchapp models rollback --corpus {args.corpus}")
        return 0
    common.run_job(app, "embed job")(job_id)
    threshold, source = threshold_for(app, model)
    print(f"Corpus {args.corpus!r} now uses {model} (duplicate threshold {threshold:.4f}, "
          f"{source}). Back with: searchapp models rollback --corpus {args.corpus}")
    return 0
