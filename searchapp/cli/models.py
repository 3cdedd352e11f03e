"""``searchapp models``, ``finetune`` and ``evaluate``: the models, training and measuring them.

Example:
    $ searchapp finetune --train pairs.csv --name support-v1 --wait
    $ searchapp evaluate --model support-v1 --pairs held-out.csv
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from searchapp.cli import common
from searchapp.cli.output import print_json, print_table
from searchapp.errors import InvalidParameterError, SearchAppError

OBJECTIVES = ["auto", "softmax", "cosine", "triplet", "mnrl", "contrastive", "cosent", "angle"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``finetune``, ``evaluate`` and ``models`` to the command parser."""
    c = sub.add_parser("finetune", help="fine-tune a model on labelled pairs, or on a corpus' "
                       "judgements or text (a worker job)")
    c.add_argument("--train", help="CSV/TSV/JSONL of pairs or triplets")
    c.add_argument("--dev", help="dev file (default: 10%% of --train held out)")
    c.add_argument("--objective", default="auto", choices=OBJECTIVES)
    c.add_argument("--base", help="model to start from (default: SEARCHAPP_MODEL)")
    c.add_argument("--name", required=True, help="name of the new model")
    c.add_argument("--epochs", type=int)
    c.add_argument("--batch-size", type=int)
    c.add_argument("--lr", type=float)
    c.add_argument("--seed", type=int)
    c.add_argument("--evals-per-epoch", type=int, help="dev evaluations per epoch (default 1); "
                   "the best state is kept")
    c.add_argument("--average-decay", type=float, help="evaluate and keep a moving average "
                   "of the weights, e.g. 0.995 (default 0: the raw weights)")
    c.add_argument("--column", action="append", metavar="ROLE=COLUMN",
                   help="map a column to a role (sentence1, sentence2, score, label, anchor, "
                        "positive, negative); repeatable")
    c.add_argument("--wait", action="store_true", help="train here and return when done")
    c.add_argument("--corpus", help="learn for this corpus: from its judgements "
                   "(--from-judgements) or its text (--unsupervised), starting from its model")
    c.add_argument("--from-judgements", action="store_true",
                   help="with --corpus: MNRL with hard negatives on the corpus' judgements, "
                   "a held-out part judging the result against the current model")
    c.add_argument("--unsupervised", action="store_true",
                   help="with --corpus: unsupervised SimCSE on the corpus' own text")
    c.add_argument("--augment", choices=("auto", "on", "off"), default="auto",
                   help="with --from-judgements: try Augmented SBERT (a cross-encoder labels "
                   "more pairs; kept only if measurably better); auto: below 500 positives")
    c.add_argument("--recipe", default=None,
                   help="with --from-judgements: the fine-tuning levers: all (large cached "
                   "batches with early stopping, lexical and semantic hard negatives, best "
                   "passages as positives), before (the first recipe), or levers joined by "
                   "'+', e.g. lexical+passages (default: before, the measured best; all is 3-5 "
                   "times faster)")
    c.add_argument("--train-on-all", action="store_true",
                   help="with --from-judgements: after the verdict, train the final model on "
                   "every judgement, held-out part included (the verdict stays the one "
                   "measured before)")
    c.add_argument("--max-steps", type=int, help="stop training after this many steps")
    c.set_defaults(func=finetune)

    c = sub.add_parser("evaluate", help="evaluate a model on a corpus' judgements or "
                       "benchmark files, or on STS scores or 0/1 pairs")
    c.add_argument("--model", help="the model (default with --corpus: the corpus' model)")
    c.add_argument("--corpus", help="measure search (nDCG@10, MRR@10, Recall@10/@100 per "
                   "mode) and duplicates (AP, best F1) on this corpus' judgements")
    c.add_argument("--queries", help="with --corpus: BEIR queries.jsonl (_id, text)")
    c.add_argument("--qrels", help="with --corpus: BEIR qrels.tsv (query-id, corpus-id, "
                   "score) or TREC qrels")
    c.add_argument("--sts", help="file with sentence1, sentence2, score")
    c.add_argument("--pairs", help="file with sentence1, sentence2, label (0/1)")
    c.add_argument("--threshold", type=float, help="cosine threshold (default: best F1)")
    c.add_argument("--fit-fusion", action="store_true",
                   help="with --corpus: fit hybrid search's fusion to the corpus' judged "
                   "queries; kept only when better on held-out queries")
    c.add_argument("--reset-fusion", action="store_true",
                   help="with --corpus: hybrid search goes back to the default fusion")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=evaluate)

    c = sub.add_parser("models", help="list models; `models use --corpus C --model M` adopts "
                       "one, `models rollback --corpus C` goes back")
    c.add_argument("action", nargs="?", choices=["list", "use", "rollback"], default="list")
    c.add_argument("--corpus")
    c.add_argument("--model")
    c.add_argument("--force", action="store_true", help="use: adopt a model judged worse")
    c.add_argument("--wait", action="store_true", help="use, rollback: switch here and "
                   "return when done")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=models)


def column_mapping(pairs: Sequence[str] | None) -> dict[str, str] | None:
    """``--column ROLE=COLUMN`` arguments as ``{role: column}`` (None when none were given).

    Example:
        >>> column_mapping(["sentence1=question", "score=sim"])
        {'sentence1': 'question', 'score': 'sim'}
    """
    mapping: dict[str, str] = {}
    for pair in pairs or []:
        role, sep, column = pair.partition("=")
        if not sep or not role.strip() or not column.strip():
            raise InvalidParameterError(
                f"--column {pair!r} must be ROLE=COLUMN, e.g. --column sentence1=question "
                "(roles: sentence1, sentence2, score, label, anchor, positive, negative).")
        mapping[role.strip()] = column.strip()
    return mapping or None


def finetune(args: argparse.Namespace) -> int:
    from searchapp.training.task import request_finetune

    if args.corpus or args.from_judgements or args.unsupervised:
        from searchapp.cli import learning

        if not args.corpus:
            raise SearchAppError("--from-judgements and --unsupervised need --corpus C.")
        return learning.finetune(args)
    if not args.train:
        raise SearchAppError("Give --train FILE (labelled pairs), or --corpus C with "
                             "--from-judgements or --unsupervised.")
    columns = column_mapping(args.column)
    app = common.open_app()
    started = request_finetune(app, args.train, dev=args.dev, name=args.name,
                               objective=args.objective, base=args.base, columns=columns,
                               epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                               seed=args.seed, evals_per_epoch=args.evals_per_epoch,
                               average_decay=args.average_decay, max_steps=args.max_steps)
    print(f"Training data: {started.data.describe()}.")
    if args.objective == "auto":
        from searchapp.training.data import AUTO_REASONS

        print(f"Why {started.data.objective}: {AUTO_REASONS[started.data.kind]}")
    print(f"Dev data: {started.dev.describe() if started.dev else '10% of it held out'}.")
    if not args.wait:
        print(f"Fine-tuning job {started.job_id} queued; `searchapp worker` runs it.")
        return 0
    progress_log = logging.getLogger("searchapp.training")  # the trainer's progress lines
    progress_log.setLevel(logging.INFO)
    progress_log.addHandler(logging.StreamHandler(sys.stderr))
    common.run_job(app, "finetune job")(started.job_id)
    result = common.job_result(app, started.job_id)
    before, after = result["metrics"]["before"], result["metrics"]["after"]
    print(f"Saved model {result['model']} in {result['path']}.")
    print("Dev " + ", ".join(f"{k}: {before[k]} -> {after[k]}" for k in after) + ".")
    return 0


def evaluate(args: argparse.Namespace) -> int:
    from searchapp.training.file_scores import evaluate_pairs_file, evaluate_sts_file

    if args.corpus:
        from searchapp.cli import learning

        if args.sts or args.pairs:
            raise SearchAppError("--corpus measures the corpus' judgements (or --queries and "
                                 "--qrels); leave out --sts and --pairs.")
        return learning.evaluate(args)
    if args.fit_fusion or args.reset_fusion:
        raise SearchAppError("--fit-fusion and --reset-fusion act on a corpus' hybrid search: "
                             "add --corpus C.")
    if not args.model:
        raise SearchAppError("Give --model M with --sts FILE or --pairs FILE, or --corpus C.")
    if args.queries or args.qrels:
        raise SearchAppError("--queries and --qrels are evaluated on a corpus: add --corpus C.")
    app = common.open_app()
    if bool(args.sts) == bool(args.pairs):
        raise SearchAppError("Give exactly one of --sts FILE or --pairs FILE.")
    if args.sts:
        result = evaluate_sts_file(app, args.model, args.sts)
    else:
        result = evaluate_pairs_file(app, args.model, args.pairs, args.threshold)
    if args.json:
        print_json(result)
    else:
        print_table([result], list(result))
    return 0


def models(args: argparse.Namespace) -> int:
    from searchapp.config import Settings
    from searchapp.embedding.models import list_models

    if args.action in ("use", "rollback"):
        from searchapp.cli import learning

        return learning.use(args) if args.action == "use" else learning.rollback(args)
    rows = []
    for m in list_models(Settings.from_env()):
        rows.append({"name": m.name, "source": m.source,
                     "base": str(m.card.get("base_model", "")),
                     "objective": str(m.card.get("objective", "")),
                     "metrics": ", ".join(f"{k}={v}" for k, v in m.metrics.items()),
                     "verdict": _verdict_cell(m.card), "status": m.status,
                     "path": str(m.path)})
    if args.json:
        print_json({"models": rows})
    else:
        print_table(rows, ["name", "source", "base", "objective", "metrics", "verdict",
                           "status"])
    return 0


def _verdict_cell(card: dict) -> str:
    """``better on faq`` for a model a learning job judged against its corpus' model."""
    verdict = card.get("verdict")
    if not isinstance(verdict, dict) or not verdict.get("verdict"):
        return ""
    return f"{verdict['verdict']} on {verdict.get('corpus', '?')}"
