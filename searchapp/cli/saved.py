"""``searchapp saved``: saved searches that watch, added, listed with "N new", run and
removed. The worker checks them after each ingest (``searchapp.saved``).

Example:
    $ searchapp saved add --corpus notes --name rockets 'launch -delayed' --webhook https://h.example/x
    $ searchapp saved list
    $ searchapp saved run 1 --look
"""

from __future__ import annotations

import argparse

from searchapp.cli import common
from searchapp.cli.output import print_json, print_table, short
from searchapp.search.modes import DEFAULT_MODE, MODES

SERVER = "http://127.0.0.1:8501"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``saved`` and its actions to the command parser."""
    c = sub.add_parser("saved", help="saved searches that watch: `saved list|add|run|remove`",
                       description="A saved search is checked after each ingest; `list` shows "
                       "how many documents arrived since you last looked and match it.")
    actions = c.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="save a search of a corpus")
    add.add_argument("--corpus", required=True)
    add.add_argument("--name", required=True)
    add.add_argument("query", help="as you would type it: phrases, -words, field filters")
    add.add_argument("--mode", default=DEFAULT_MODE, choices=list(MODES))
    add.add_argument("-k", type=int, default=10, help="how many results it keeps (10)")
    add.add_argument("--min-score", type=float, help="minimum cosine (semantic and hybrid)")
    add.add_argument("--where", action="append", default=[], metavar="COL=VAL",
                     help="metadata filter, repeatable (as `searchapp search --where`)")
    add.add_argument("--webhook", metavar="URL", help="POST the new hits as JSON to URL")
    add.add_argument("--desktop", action="store_true",
                     help="a desktop notification when new documents match")
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=saved_add)
    listing = actions.add_parser("list", help="the saved searches, their news, feed, webhook")
    listing.add_argument("--corpus", help="only this corpus' saved searches")
    listing.add_argument("--server", default=SERVER,
                         help=f"the server's address the feed URLs start with ({SERVER})")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=saved_list)
    run = actions.add_parser("run", help="a saved search's hits now, the new ones first")
    run.add_argument("id", type=common.row_id)
    run.add_argument("--look", action="store_true",
                     help="mark its news seen (its \"N new\" goes to 0)")
    run.add_argument("--json", action="store_true")
    run.set_defaults(func=saved_run)
    remove = actions.add_parser("remove", help="remove a saved search and its news")
    remove.add_argument("id", type=common.row_id)
    remove.add_argument("--json", action="store_true")
    remove.set_defaults(func=saved_remove)


def saved_add(args: argparse.Namespace) -> int:
    from searchapp.saved.service import save

    view = save(common.open_app(), args.corpus, args.name, args.query, mode=args.mode,
                k=args.k, min_score=args.min_score, where=args.where,
                webhook_url=args.webhook, desktop=args.desktop)
    if args.json:
        print_json(view.as_json())
    else:
        print(f"Saved search {view.id} {view.name!r} of corpus {view.corpus!r}: documents "
              "that arrive from now on and match it are counted as new. "
              "`searchapp saved list` shows them.")
    return 0


def saved_list(args: argparse.Namespace) -> int:
    from searchapp.saved.service import list_saved

    views = list_saved(common.open_app(), args.corpus)
    if args.json:
        print_json({"saved": [v.as_json() for v in views]})
        return 0
    if not views:
        print("No saved searches yet: searchapp saved add --corpus NAME --name NAME QUERY")
        return 0
    print_table([{"id": v.id, "corpus": v.corpus, "name": v.name, "new": v.new,
                  "mode": v.mode, "k": v.k, "query": short(v.query)} for v in views],
                ["id", "corpus", "name", "new", "mode", "k", "query"])
    for v in views:
        print(f"  {v.id}: feed {args.server.rstrip('/')}{v.feed}")
        for line in outcome_lines(v):
            print(f"  {v.id}: {line}")
    return 0


def outcome_lines(view) -> list[str]:
    """The notifications of a saved search and what their last one did, one line each.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> outcome_lines(NS(webhook_url="https://h.example/x", desktop=False,
        ...     last_outcome={"webhook": {"status": 200, "tries": 1,
        ...                               "at": "2026-01-02T03:04:05Z"}}))
        ['webhook https://h.example/x: 200 (1 try) at 2026-01-02T03:04:05Z']
    """
    out, last = [], view.last_outcome or {}
    if view.webhook_url:
        out.append(f"webhook {view.webhook_url}: " + _said(last.get("webhook")))
    if view.desktop:
        out.append("desktop: " + _said(last.get("desktop")))
    if "error" in (last.get("check") or {}):
        out.append("check: " + _said(last["check"]))
    return out


def _said(outcome: dict | None) -> str:
    if not outcome:
        return "nothing sent yet"
    at = f" at {outcome['at']}" if outcome.get("at") else ""
    tries = outcome.get("tries")
    tried = f" ({tries} {'try' if tries == 1 else 'tries'})" if tries else ""
    if "error" in outcome:
        return f"failed: {outcome['error']}{tried}{at}"
    if "skipped" in outcome:
        return f"skipped: {outcome['skipped']}{at}"
    if outcome.get("shown"):
        return f"shown{at}"
    return f"{outcome.get('status', 'sent')}{tried}{at}"


def saved_run(args: argparse.Namespace) -> int:
    from searchapp.saved.service import run

    results = run(common.open_app(), args.id, look=args.look)
    if args.json:
        print_json(results.as_json())
        return 0
    saved = results.saved
    print(f"{saved.name!r} ({saved.corpus}): {len(results.new_ids)} new, "
          f"{len(results.hits)} hits.")
    for rank, hit in enumerate(results.hits, start=1):
        mark = "NEW " if results.is_new(hit) else "    "
        print(f"{rank:>3}. {mark}{hit.id}  {hit.score:.3f}  {short(hit.snippet or hit.text, 70)}")
    return 0


def saved_remove(args: argparse.Namespace) -> int:
    from searchapp.saved.service import remove

    view = remove(common.open_app(), args.id)
    if args.json:
        print_json(view.as_json())
    else:
        print(f"Removed saved search {view.id} {view.name!r} of corpus {view.corpus!r}.")
    return 0
