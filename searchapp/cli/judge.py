"""``searchapp judge``: add, undo, list, export, import judgements, and ask which to judge next.

Example:
    $ searchapp judge add --corpus faq --query "reset password" --doc q12 --label yes
    $ searchapp judge add --corpus faq --a q7 --b q3 --label duplicate
    $ searchapp judge import --corpus faq pairs.csv
    $ searchapp judge next --corpus faq --n 20 --json
    $ searchapp judge train-reranker --corpus faq --wait
"""

from __future__ import annotations

import argparse
import sys

from searchapp.cli import common
from searchapp.cli.output import output_path, print_json, print_table, short, write_atomically
from searchapp.errors import InvalidParameterError

LABEL_HELP = ("1/0, yes/no, relevant/not relevant, duplicate/not duplicate, or a grade 0-3 "
              "for a query")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``judge`` with its actions to the command parser."""
    c = sub.add_parser("judge", help="judgements of search results and duplicate pairs: "
                       "add, remove, list, export, import, next, groups, train-reranker")
    actions = c.add_subparsers(dest="action", metavar="ACTION", required=True)

    a = actions.add_parser("add", help="judge a query's result or a pair of documents")
    a.add_argument("--corpus", required=True)
    a.add_argument("--query", help="the query (with --doc)")
    a.add_argument("--doc", help="the judged document's id (with --query)")
    a.add_argument("--a", help="a document's id (with --b: a pair)")
    a.add_argument("--b", help="the other document's id")
    a.add_argument("--label", required=True, help=LABEL_HELP)
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=add)

    a = actions.add_parser("remove", help="delete one judgement by its id (undo)")
    a.add_argument("--corpus", required=True)
    a.add_argument("id", type=int)
    a.set_defaults(func=remove)

    a = actions.add_parser("list", help="the corpus' judgements, oldest first")
    a.add_argument("--corpus", required=True)
    a.add_argument("--kind", choices=("query", "pair"))
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=list_)

    a = actions.add_parser("export", help="the judgements as CSV (stdout, or --out FILE)")
    a.add_argument("--corpus", required=True)
    a.add_argument("--out", metavar="FILE.csv")
    a.set_defaults(func=export)

    a = actions.add_parser("import", help="read judgements from a CSV: query,doc_id,label "
                           "or a_id,b_id,label (nothing is stored if a row is bad)")
    a.add_argument("--corpus", required=True)
    a.add_argument("file")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=import_)

    a = actions.add_parser("next", help="the items whose answer teaches the most")
    a.add_argument("--corpus", required=True)
    a.add_argument("--n", type=common.positive_int, default=20)
    a.add_argument("--kind", choices=("query", "pair"))
    a.add_argument("--threshold", type=float, help="duplicate threshold (default: the model's)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=next_)

    a = actions.add_parser("groups", help="groups confirmed by duplicate judgements, each "
                           "with its canonical document")
    a.add_argument("--corpus", required=True)
    out = a.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--out", metavar="FILE.csv")
    a.set_defaults(func=groups)

    a = actions.add_parser("train-reranker", help="train a reranker on the corpus' query "
                           "judgements; attached only if it beats no reranking on held-out "
                           "ones (then: searchapp search --rerank)")
    a.add_argument("--corpus", required=True)
    a.add_argument("--wait", action="store_true", help="run the job here and print the verdict")
    a.add_argument("--max-steps", type=common.positive_int, help="stop training after S steps")
    a.add_argument("--json", action="store_true", help="with --wait: the result as JSON")
    a.set_defaults(func=train_reranker)


def _judgement_dict(j) -> dict:
    return {"id": j.id, "kind": j.kind, "query": j.query, "a": j.a, "b": j.b, "label": j.label,
            "source": j.source, "created_at": j.created_at.isoformat(sep=" ", timespec="seconds")}


def add(args: argparse.Namespace) -> int:
    from searchapp.judgements import service
    from searchapp.judgements.csv_io import parse_label

    kind = "query" if args.query is not None or args.doc is not None else "pair"
    label = parse_label(kind, args.label)
    app = common.open_app()
    j = service.add(app, args.corpus, label=label, query=args.query, doc=args.doc, a=args.a,
                    b=args.b, source="cli")
    if args.json:
        print_json(_judgement_dict(j))
    elif kind == "query":
        print(f"Judgement {j.id}: [{j.a}] is {'relevant' if j.label else 'not relevant'}"
              f"{f' (grade {j.label})' if j.label > 1 else ''} for {j.query!r}.")
    else:
        print(f"Judgement {j.id}: [{j.a}] and [{j.b}] are "
              f"{'duplicates' if j.label else 'not duplicates'}.")
    return 0


def remove(args: argparse.Namespace) -> int:
    from searchapp.judgements import service

    gone = service.remove(common.open_app(), args.corpus, args.id)
    print(f"Removed judgement {gone.id}.")
    return 0


def list_(args: argparse.Namespace) -> int:
    from searchapp.judgements import service

    app = common.open_app()
    found = service.list_judgements(app, args.corpus, kind=args.kind)
    if args.json:
        print_json({"judgements": [_judgement_dict(j) for j in found],
                    "counts": service.counts(app, args.corpus)})
        return 0
    if not found:
        print(f"No judgements in {args.corpus!r} yet: `searchapp judge next --corpus "
              f"{args.corpus}` says what to judge first.")
        return 0
    print_table([{"id": j.id, "kind": j.kind, "query": short(j.query or "", 30), "a": j.a,
                  "b": j.b or "", "label": j.label, "source": j.source,
                  "when": j.created_at.isoformat(sep=" ", timespec="seconds")} for j in found],
                ["id", "kind", "query", "a", "b", "label", "source", "when"])
    c = service.counts(app, args.corpus)
    print(f"{c['total']} judgements: {c['query']} of query results ({c['relevant']} relevant, "
          f"{c['queries']} queries), {c['pair']} of pairs ({c['duplicate']} duplicates).")
    return 0


def export(args: argparse.Namespace) -> int:
    from searchapp.judgements import service

    out = output_path(args.out) if args.out else None
    app = common.open_app()
    if out is None:
        sys.stdout.write(service.export_csv(app, args.corpus).replace("\r\n", "\n"))
        return 0
    write_atomically(out, lambda tmp: service.export_csv(app, args.corpus, tmp))
    print(f"Wrote {service.counts(app, args.corpus)['total']} judgements to {out}.")
    return 0


def import_(args: argparse.Namespace) -> int:
    from pathlib import Path

    from searchapp.judgements import service

    summary = service.import_csv(common.open_app(), args.corpus, Path(args.file).expanduser())
    if args.json:
        print_json(summary.__dict__)
        return 0
    print(f"Imported {summary.query + summary.pair} judgements into {args.corpus!r} "
          f"({summary.query} of query results, {summary.pair} of pairs): {summary.added} new, "
          f"{summary.updated} changed, {summary.unchanged} already stored"
          + (f"; {summary.repeated} rows repeated an earlier row (the last one counts)"
             if summary.repeated else "") + ".")
    return 0


def next_(args: argparse.Namespace) -> int:
    from searchapp.judgements.proposals import propose

    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        raise InvalidParameterError(f"--threshold must be between 0 and 1; got {args.threshold}.")
    batch = propose(common.open_app(), args.corpus, args.n, kind=args.kind,
                    threshold=args.threshold)
    if args.json:
        print_json({"proposals": [p.__dict__ for p in batch]})
        return 0
    if not batch:
        print("Nothing left to propose: every candidate is judged.")
    for n, p in enumerate(batch, start=1):
        if p.kind == "pair":
            print(f"{n}. pair [{p.a}] {short(p.a_text, 50)}  ~  [{p.b}] {short(p.b_text, 50)}")
        else:
            print(f"{n}. query {short(p.query, 50)!r} -> [{p.a}] {short(p.a_text, 60)}")
        print(f"   {p.reason}")
    return 0


def groups(args: argparse.Namespace) -> int:
    from searchapp.judgements.groups import confirmed_groups, groups_csv

    out = output_path(args.out) if args.out else None
    app = common.open_app()
    found = confirmed_groups(app, args.corpus)
    if args.json:
        print_json({"groups": [g.as_dict() for g in found]})
        return 0
    if out is not None:
        write_atomically(out, lambda tmp: groups_csv(found, tmp))
        print(f"Wrote {len(found)} confirmed groups to {out}.")
        return 0
    if not found:
        print("No confirmed group yet: judge pairs as duplicates (Duplicates page, Label page "
              "or `searchapp judge add --a ID --b ID --label duplicate`).")
    for g in found:
        print(f"group of {g.size}, canonical [{g.canonical}] {short(g.texts[0], 60)}")
        for member, text in list(zip(g.members, g.texts, strict=True))[1:]:
            print(f"    [{member}]  {short(text, 60)}")
    return 0


def train_reranker(args: argparse.Namespace) -> int:
    from searchapp.training.reranker_job import request_reranker

    app = common.open_app()
    job_id = request_reranker(app, args.corpus, max_steps=args.max_steps)
    if not args.wait:
        print(f"Job {job_id} queued: it trains a reranker on the query judgements of "
              f"{args.corpus!r} (`searchapp worker` runs it; `searchapp jobs` shows the verdict).")
        return 0
    common.run_job(app, "reranker job")(job_id)
    result = common.job_result(app, job_id)
    if args.json:
        print_json(result)
        return 0
    print(f"Reranker {'kept and attached' if result['kept'] else 'not kept'}: {result['reason']}.")
    if result["kept"]:
        print(f"Use it: searchapp search --corpus {result['corpus']} --rerank \"QUERY\"")
    return 0
