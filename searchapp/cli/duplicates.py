"""``searchapp duplicates``: pairs and groups, ``check`` a new question, ``calibrate`` a model.

Example:
    $ searchapp duplicates --corpus faq --threshold 0.9 --json
    $ searchapp duplicates check --corpus faq "How can I reset my password?"
    $ searchapp duplicates calibrate --pairs mrpc.tsv --save
    $ searchapp duplicates calibrate --corpus faq --precision 0.9 --save
"""

from __future__ import annotations

import argparse
from pathlib import Path

from searchapp.cli import common
from searchapp.cli.output import output_path, print_json, print_table, short, write_atomically
from searchapp.errors import SearchAppError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``duplicates`` with its ``check`` and ``calibrate`` actions to the command parser."""
    c = sub.add_parser("duplicates", help="duplicate pairs and groups of a corpus; "
                       "`duplicates check` tests a new question, `duplicates calibrate` a model")
    c.add_argument("--corpus")
    c.add_argument("--threshold", type=float, help="cosine threshold (default: the model's)")
    c.add_argument("--k", type=int, default=10, help="nearest neighbours per document")
    c.add_argument("--limit", type=int, default=20, help="pairs and groups printed")
    out = c.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--out", metavar="FILE.csv", help="write pairs (and FILE-groups.csv)")
    c.set_defaults(func=duplicates)
    actions = c.add_subparsers(dest="action", metavar="ACTION")
    a = actions.add_parser("check", help="likely duplicates of a new question")
    a.add_argument("--corpus", required=True)
    a.add_argument("question")
    a.add_argument("--threshold", type=float)
    a.add_argument("--add", action="store_true", help="then add the question to the corpus")
    a.add_argument("--id", help="id for the added question (default: from its text)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=check)
    a = actions.add_parser("calibrate", help="the threshold for a precision on a corpus' "
                           "judgements, or AP and best-F1 threshold on a file of labelled pairs")
    a.add_argument("--model", help="model name (default: the corpus', else SEARCHAPP_MODEL)")
    a.add_argument("--pairs", help="CSV/TSV(.gz) with sentence1, sentence2, label")
    a.add_argument("--corpus", help="calibrate on this corpus' judged pairs (with --pairs: "
                   "compare the file's share of duplicates with the corpus')")
    a.add_argument("--precision", type=float, default=0.9,
                   help="with --corpus alone: the precision the threshold must reach (0.9)")
    a.add_argument("--save", action="store_true", help="store the threshold for the model")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=calibrate)


def duplicates(args: argparse.Namespace) -> int:
    from searchapp.duplicates.export import groups_csv, pairs_csv
    from searchapp.duplicates.service import duplicates_report

    if not args.corpus:
        raise SearchAppError("Say which corpus: searchapp duplicates --corpus NAME")
    out = output_path(args.out) if args.out else None
    if out is not None:
        groups_out = output_path(str(out.with_name(out.stem + "-groups.csv")))
    app = common.open_app()
    report = duplicates_report(app, args.corpus, args.threshold, args.k,
                               run_job=common.run_job(app, "duplicates job"))
    if args.json:
        print_json(report.as_dict())
        return 0
    if out is not None:
        write_atomically(out, lambda tmp: pairs_csv(report, tmp))
        write_atomically(groups_out, lambda tmp: groups_csv(report, tmp))
        print(f"Wrote {report.pair_count} pairs to {out} and {report.group_count} groups "
              f"to {groups_out}.")
        return 0
    _print_report(report, args.limit)
    return 0


def _print_report(report, limit: int) -> None:
    how = "stored result" if report.reused else f"mined in {report.seconds:.2f} s"
    print(f"Corpus {report.corpus!r} ({report.documents} documents, {report.model}), threshold "
          f"{report.threshold:.3f}, k={report.k} ({report.method}, {how}): "
          f"{report.pair_count} pairs ({report.exact_count} exact), "
          f"{report.group_count} groups.")
    print_table([{"score": f"{p.score:.3f}", "exact": "yes" if p.exact else "",
                  "a": p.a, "b": p.b, "a_text": short(p.a_text), "b_text": short(p.b_text)}
                 for p in report.top_pairs(limit)],
                ["score", "exact", "a", "b", "a_text", "b_text"])
    for g in report.top_groups(limit):
        print(f"group of {g.size}, representative [{g.representative}] {short(g.texts[0], 60)}")
        for member, score, text in list(zip(g.members, g.scores, g.texts, strict=True))[1:]:
            print(f"    {score:.3f}  [{member}]  {short(text, 60)}")


def check(args: argparse.Namespace) -> int:
    from searchapp.duplicates import add_question
    from searchapp.duplicates import check as check_question

    app = common.open_app()
    matches = check_question(app, args.corpus, args.question, args.threshold)
    added = None
    if args.add:
        summary = add_question(app, args.corpus, args.question, args.id)
        added = {"added": summary.added, "job_id": summary.job_id}
    if args.json:
        print_json({"matches": [m.as_dict() for m in matches]}
                   | ({"added": added} if added else {}))
        return 0
    if not matches:
        print("No likely duplicates above the threshold.")
    for m in matches:
        print(f"{m.score:.3f}{' exact' if m.exact else ''}  [{m.id}]  {m.text}")
    if added:
        print(f"Added to {args.corpus!r}; embedding job {added['job_id']} queued "
              "(`searchapp worker` runs it)." if added["job_id"] else
              f"Already in {args.corpus!r}: nothing added.")
    return 0


def calibrate(args: argparse.Namespace) -> int:
    from searchapp.duplicates.calibration import Calibration, request_calibration, save_threshold

    if not args.pairs and not args.corpus:
        raise SearchAppError("Say what to calibrate on: --corpus NAME (its judged pairs) or "
                             "--pairs FILE (labelled pairs).")
    app = common.open_app()
    if not args.pairs:
        return _calibrate_on_judgements(app, args)
    model = args.model or app.settings.model
    path = Path(args.pairs).expanduser().resolve()
    job_id, pairs = request_calibration(app, model, path)  # a bad file fails before a job
    common.run_job(app, "calibrate job")(job_id)
    cal = Calibration(**common.job_result(app, job_id))
    warning = _share_warning(app, args.corpus, cal) if args.corpus else None
    if args.save:
        save_threshold(app, cal)
    if args.json:
        print_json({k: v for k, v in cal.as_dict().items() if k != "curve"}
                   | {"saved": args.save, "warning": warning})
        return 0
    print(f"{model} on {len(pairs):,} labelled pairs ({cal.positives:,} duplicates) from "
          f"{path.name}: AP {cal.ap:.2f}, best F1 {cal.f1:.2f} at threshold {cal.threshold:.3f} "
          f"(precision {cal.precision:.2f}, recall {cal.recall:.2f}).")
    if warning:
        print(f"Warning: {warning}")
    print(f"Saved {cal.threshold:.3f} as the duplicate threshold of {model}." if args.save else
          "Use it as the model's duplicate threshold: add --save.")
    return 0


def _share_warning(app, corpus: str, cal) -> str | None:
    from searchapp.duplicates import judged_threshold as jt
    from searchapp.errors import JudgementError

    try:
        judged = jt.calibrate_on_judgements(app, corpus)
    except JudgementError:
        return None  # too few judgements to say what the corpus' share is
    return jt.share_warning(cal.positives / cal.pairs, judged, cal.threshold)


def _calibrate_on_judgements(app, args: argparse.Namespace) -> int:
    from searchapp.duplicates import judged_threshold as jt
    from searchapp.duplicates.calibration import save_threshold

    result = jt.calibrate_on_judgements(app, args.corpus)
    if args.model and args.model != result.model:
        raise SearchAppError(f"Corpus {result.corpus!r} is embedded with {result.model!r}; "
                             "its judgements calibrate that model. Leave out --model.")
    chosen = result.for_precision(args.precision)
    if chosen is not None and args.save:
        save_threshold(app, jt.as_calibration(app, result, chosen))
    if args.json:
        print_json({"corpus": result.corpus, "model": result.model, "judged": result.judged,
                    "positives": result.positives, "ap": result.ap, "share": result.share,
                    "floor": result.floor, "precision": args.precision,
                    "threshold": chosen.threshold if chosen else None,
                    "rows": [r.__dict__ for r in result.rows], "saved": bool(chosen and args.save)})
        return 0
    print(f"{result.model} on {result.judged} judged pairs of {result.corpus!r} "
          f"({result.positives} duplicates): AP {result.ap:.2f}.")
    shown = [r for r in result.rows if round(r.threshold * 100) % 5 == 0 or r is chosen]
    print_table([{"threshold": f"{r.threshold:.2f}" + (" <" if r is chosen else ""),
                  "pairs": "" if r.pairs is None else f"{r.pairs:,}",
                  "precision": "" if r.precision is None else f"{r.precision:.2f}",
                  "judged": r.judged,
                  "judged_precision": "" if r.judged_precision is None
                  else f"{r.judged_precision:.2f}"} for r in shown],
                ["threshold", "pairs", "precision", "judged", "judged_precision"])
    if result.floor is None:
        print("PAIRS and PRECISION need the corpus' pairs: run `searchapp duplicates --corpus "
              f"{result.corpus} --threshold 0.5` once.")
    if chosen is None:
        print(f"No threshold reaches precision {args.precision:.2f} on these judgements.")
        return 0
    print(f"Threshold {chosen.threshold:.2f} reaches precision {args.precision:.2f}"
          + (f": {chosen.pairs:,} pairs, about {chosen.duplicates:,.0f} of them duplicates."
             if chosen.pairs is not None else " on the judged pairs."))
    print(f"Saved {chosen.threshold:.2f} as the duplicate threshold of {result.model}."
          if args.save else "Use it as the model's duplicate threshold: add --save.")
    return 0
