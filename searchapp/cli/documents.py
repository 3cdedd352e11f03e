"""``searchapp documents``: one document by id, upserted, shown or deleted.

Example:
    $ searchapp documents upsert --corpus faq --id q7 --text "Where is my invoice?" \\
          --meta product=billing --meta year=2024
    $ searchapp documents get --corpus faq q7 --json
    $ searchapp documents delete --corpus faq q7 q8
"""

from __future__ import annotations

import argparse

from searchapp.cli import common
from searchapp.cli.output import print_json


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``documents upsert|get|delete`` to the command parser."""
    c = sub.add_parser("documents", help="one document by id: `documents upsert|get|delete`")
    actions = c.add_subparsers(dest="action", required=True, metavar="ACTION")
    up = actions.add_parser("upsert", help="add a document or change its text or metadata")
    up.add_argument("--corpus", required=True)
    up.add_argument("--id", dest="doc_id", required=True, help="the document's id")
    up.add_argument("--text", required=True, help="its text; '-' reads it from stdin")
    up.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                    help="metadata, repeatable (replaces the stored metadata)")
    up.add_argument("--wait", action="store_true", help="return once it is embedded")
    up.add_argument("--json", action="store_true")
    for name, what in (("get", "show documents by id"), ("delete", "delete documents by id")):
        a = actions.add_parser(name, help=what)
        a.add_argument("ids", nargs="+", metavar="ID")
        a.add_argument("--corpus", required=True)
        a.add_argument("--json", action="store_true")
    c.set_defaults(func=documents)


def documents(args: argparse.Namespace) -> int:
    import sys

    from searchapp.corpora import documents as service

    app = common.open_app()
    if args.action == "upsert":
        text = sys.stdin.read() if args.text == "-" else args.text
        done = service.upsert(app, args.corpus, [service.Doc(args.doc_id, text,
                                                             service.parse_meta(args.meta))])
        if args.json:
            print_json(vars(done))
        else:
            print(done.describe())
        if done.job_id is not None and args.wait:
            common.run_job(app, "embed job")(done.job_id)
        return 0
    if args.action == "get":
        found, missing = service.get_many(app, args.corpus, args.ids)
        if args.json:
            print_json({"documents": [vars(d) for d in found], "missing": missing})
        else:
            for d in found:
                meta = "  ".join(f"{k}={v}" for k, v in d.meta.items())
                state = "embedded" if d.embedded else "not embedded yet"
                print(f"[{d.id}] ({state}; from {d.source}){'  ' + meta if meta else ''}"
                      f"\n{d.text}")
        if missing and not args.json:
            from searchapp.errors import DocumentNotFoundError

            raise DocumentNotFoundError(args.corpus, missing[0])
        return 0
    done = service.delete(app, args.corpus, args.ids)
    if args.json:
        print_json(vars(done))
        return 0
    print(f"Deleted {done.deleted} document{'s' if done.deleted != 1 else ''} from "
          f"{done.corpus!r} (generation {done.generation})."
          + (f" Not found: {', '.join(done.missing)}." if done.missing else ""))
    return 0
