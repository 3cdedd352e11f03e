"""``searchapp watch``: folders a corpus follows, added, listed with their status, paused,
resumed and removed. The worker (``searchapp worker``, or the one the app starts) keeps
them in step.

Example:
    $ searchapp watch add ~/notes --corpus notes --include '*.md' --exclude 'drafts/*'
    $ searchapp watch list --json
    $ searchapp watch pause ~/notes
"""

from __future__ import annotations

import argparse

from searchapp.cli import common
from searchapp.cli.output import print_json, print_table


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``watch`` and its actions to the command parser."""
    c = sub.add_parser("watch", help="folders a corpus follows: `watch add|list|pause|resume|"
                       "remove`", description="A watched folder is kept in step by the worker: "
                       "new, changed, renamed and deleted files reach the corpus within seconds.")
    actions = c.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="watch a folder into a corpus (made if new)")
    add.add_argument("folder")
    add.add_argument("--corpus", required=True)
    add.add_argument("--include", action="append", default=[], metavar="GLOB",
                     help="only files whose path or name matches (repeat for several)")
    add.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                     help="leave out files whose path or name matches (repeat for several)")
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=watch_add)
    listing = actions.add_parser("list", help="the watched folders and their status")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=watch_list)
    for name, what in (("pause", "stop syncing a folder for now"),
                       ("resume", "sync a paused folder again"),
                       ("remove", "stop watching a folder (the corpus keeps its documents)")):
        one = actions.add_parser(name, help=what)
        one.add_argument("folder", help="the folder's path or its id (`watch list`)")
        one.add_argument("--json", action="store_true")
        one.set_defaults(func=watch_change, change=name)


def watch_add(args: argparse.Namespace) -> int:
    from searchapp.watching.folders import add_watch

    folder = add_watch(common.open_app(), args.folder, args.corpus, args.include, args.exclude)
    if args.json:
        print_json(folder)
    else:
        print(f"Watching {folder['path']} into corpus {folder['corpus']!r} (id {folder['id']}). "
              "The worker syncs it within seconds; `searchapp watch list` shows its status.")
    return 0


def watch_list(args: argparse.Namespace) -> int:
    from searchapp.watching.folders import list_watches

    folders = list_watches(common.open_app())
    if args.json:
        print_json({"folders": folders})
    elif not folders:
        print("No watched folders yet: searchapp watch add FOLDER --corpus NAME")
    else:
        print_table([_line(f) for f in folders],
                    ["id", "corpus", "state", "seen", "in_step", "waiting", "failed",
                     "last_change", "path"])
        for f in folders:
            for problem in ([f["reason"]] if f["reason"] else []) + \
                    [f"{p['path']}: {p['reason']}" for p in f["failures"][:5]]:
                print(f"  {f['id']}: {problem}")
    return 0


def _line(folder: dict) -> dict:
    files = folder["files"]
    return {"id": folder["id"], "corpus": folder["corpus"], "state": folder["state"],
            "seen": files["seen"], "in_step": files["in_step"], "waiting": files["waiting"],
            "failed": files["failed"], "last_change": folder["last_change_ago"] or "never",
            "path": folder["path"]}


def watch_change(args: argparse.Namespace) -> int:
    from searchapp.watching.folders import remove_watch, set_paused

    app = common.open_app()
    if args.change == "remove":
        folder = remove_watch(app, args.folder)
        done = "no longer watched; its corpus keeps its documents"
    else:
        folder = set_paused(app, args.folder, args.change == "pause")
        done = "paused" if args.change == "pause" else "watched again"
    if args.json:
        print_json(folder)
    else:
        print(f"{folder['path']} (corpus {folder['corpus']!r}): {done}.")
    return 0
