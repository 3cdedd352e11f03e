"""``searchapp keys``: the JSON API's keys created, listed and revoked.

Example:
    $ searchapp keys create --name helpdesk-form --read-only
    $ searchapp keys list
    $ searchapp keys revoke helpdesk-form
"""

from __future__ import annotations

import argparse

from searchapp.cli import common
from searchapp.cli.output import print_json, print_table
from searchapp.errors import SearchAppError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``keys`` to the command parser."""
    c = sub.add_parser("keys", help="API keys: `keys create --name N [--read-only]`, "
                                    "`keys list`, `keys revoke NAME|ID`")
    c.add_argument("action", nargs="?", choices=["list", "create", "revoke"], default="list")
    c.add_argument("target", nargs="?", metavar="NAME|ID", help="the key to revoke")
    c.add_argument("--name", help="the new key's name (create)")
    c.add_argument("--read-only", action="store_true",
                   help="the key may read and search, not change anything (create)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=keys)


def keys(args: argparse.Namespace) -> int:
    from searchapp.access import keys as service

    app = common.open_app()
    if args.action == "create":
        if not args.name:
            raise SearchAppError("Name the key: searchapp keys create --name NAME [--read-only]")
        made = service.create(app.db, args.name, read_only=args.read_only)
        if args.json:
            print_json({"key": made.key} | key_row(made.row))
            return 0
        access = "read-only" if made.row.read_only else "read-write"
        print(f"Created {access} API key {made.row.name!r} (id {made.row.id}). Its key, shown "
              "this once (only its hash is stored):")
        print(made.key)
        print("Send it as: Authorization: Bearer KEY")
        return 0
    if args.action == "revoke":
        if not args.target:
            raise SearchAppError("Say which key to revoke: searchapp keys revoke NAME|ID")
        row = service.revoke(app.db, args.target)
        print(f"Revoked API key {row.name!r} (id {row.id}); requests with it are refused now.")
        return 0
    rows = [key_row(k) for k in service.list_keys(app.db)]
    if args.json:
        print_json({"keys": rows})
    elif not rows:
        print("No API keys yet. Create one: searchapp keys create --name NAME [--read-only]")
    else:
        print_table(rows, ["id", "name", "access", "prefix", "created", "last_used"])
    return 0


def key_row(row) -> dict:
    """One key as ``keys list`` shows it (never the key, never its hash)."""
    return {"id": row.id, "name": row.name,
            "access": "read-only" if row.read_only else "read-write",
            "prefix": f"{row.prefix}...", "created": row.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "last_used": row.last_used_at.strftime("%Y-%m-%d %H:%M:%S")
            if row.last_used_at else "never"}
