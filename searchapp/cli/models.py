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
    c = sub.add_parser("finetune", help="fine-tune a model on labelled pairs (a worker job)")
    c.add_argument("--train", required=True, help="CSV/TSV/JSONL of pairs or triplets")
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
    c.set_defaults(func=finetune)

    c = sub.add_parser("evaluate", help="evaluate a model on STS scores or 0/1 pairs")
    c.add_argument("--model", required=True)
    c.add_argument("--sts", help="file with sentence1, sentence2, score")
    c.add_argument("--pairs", help="file with sentence1, sentence2, label (0/1)")
    c.add_argument("--threshold", type=float, help="cosine threshold (default: best F1)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=evaluate)

    c = sub.add_parser("models", help="list models with their metrics")
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

    columns = column_mapping(args.column)
    app = common.open_app()
    started = request_finetune(app, args.train, dev=args.dev, name=args.name,
                               objective=args.objective, base=args.base, columns=columns,
                               epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                               seed=args.seed, evals_per_epoch=args.evals_per_epoch,
                               average_decay=args.average_decay)
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
    from searchapp.evaluation.files import evaluate_pairs_file, evaluate_sts_file

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

    rows = []
    for m in list_models(Settings.from_env()):
        rows.append({"name": m.name, "source": m.source,
                     "base": str(m.card.get("base_model", "")),
                     "objective": str(m.card.get("objective", "")),
                     "metrics": ", ".join(f"{k}={v}" for k, v in m.metrics.items()),
                     "status": m.status, "path": str(m.path)})
    if args.json:
        print_json({"models": rows})
    else:
        print_table(rows, ["name", "source", "base", "objective", "metrics", "status"])
    return 0
