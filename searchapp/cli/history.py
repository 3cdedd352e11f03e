"""``searchapp history``: the local user's recent searches, listed or cleared.

The CLI searches as the local user (``search/history.py``): the history an open
server's pages and API use too, never an API key's or a password-protected login's.

Example:
    $ searchapp history --corpus faq
    $ searchapp history --clear
"""

from __future__ import annotations

import argparse

from searchapp.cli import common
from searchapp.cli.output import cell, print_json


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``history`` to the command parser."""
    c = sub.add_parser("history", help="your recent searches (`--clear` forgets them)",
                       description="The local user's recent searches, most recent first "
                       "(`searchapp search` and an open server's pages and API record them).")
    c.add_argument("--corpus", help="only this corpus' searches")
    c.add_argument("--clear", action="store_true", help="forget them")
    c.add_argument("-n", type=common.count, default=50, help="how many to show (50)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=history)


def history(args: argparse.Namespace) -> int:
    from searchapp.search import history as service

    app = common.open_app()
    if args.clear:
        cleared = service.clear_history(app, service.LOCAL_USER, args.corpus)
        where = f" of corpus {args.corpus!r}" if args.corpus else ""
        print(f"Forgot {cleared} recent search{'es' if cleared != 1 else ''}{where}.")
        return 0
    found = service.past_searches(app, service.LOCAL_USER, args.corpus, limit=args.n)
    if args.json:
        print_json({"searches": [{"query": p.query, "corpus": p.corpus,
                                  "searched_at": p.searched_at.isoformat()} for p in found]})
    elif not found:
        print("No recent searches.")
    for p in [] if args.json else found:
        print(f"{p.searched_at:%Y-%m-%d %H:%M}  {cell(p.corpus)}  {cell(p.query)}")
    return 0
