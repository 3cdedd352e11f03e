"""``searchapp shards``: a corpus' index served in shards on the Ray cluster (docs/scale-out.md).

    searchapp shards serve --corpus docs --shards 8 --replicas 2 [--compression sq8]
    searchapp shards status --corpus docs [--json]
    searchapp shards stop --corpus docs

Processes with ``SEARCHAPP_SEARCH_ENGINE=ray`` then search the corpus through its
shard servers (``searchapp.search.shards``); the cluster is SEARCHAPP_RAY_ADDRESS
(or ``--address``; ``auto``: the one ``ray start`` runs on this machine).

Example:
    $ searchapp shards status --corpus caps
    shard  replica  documents  passages  generation  memory    fresh  node
    1 of 2 r0           1,512         0          12  2.6 MB    0.4 s  host-a (pid 4242)
"""

from __future__ import annotations

import argparse
import time

from searchapp.base.shard_layout import COMPRESSIONS, PLACEMENTS
from searchapp.cli import common
from searchapp.cli.output import cell, print_json


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``shards`` and its commands to the command parser."""
    c = sub.add_parser("shards", help="serve a corpus' index in shards on a Ray cluster",
                       description="A corpus' index in shards, each with R replicas, served "
                       "by Ray actors; SEARCHAPP_SEARCH_ENGINE=ray makes the CLI, API and "
                       "pages search through them.")
    cmds = c.add_subparsers(dest="shards_command", required=True, metavar="COMMAND")
    serve = cmds.add_parser("serve", help="start (or replace) a corpus' shard servers")
    serve.add_argument("--corpus", required=True)
    serve.add_argument("--shards", type=int, required=True, help="how many shards (1-1024)")
    serve.add_argument("--replicas", type=int, default=1, help="replicas of each shard (1)")
    serve.add_argument("--compression", choices=COMPRESSIONS, default="float32",
                       help="how shards keep vectors: float32 (exact, 4 bytes a dimension), "
                       "sq8 (8-bit, about a quarter) or pq (product quantization, re-ranked "
                       "on the stored vectors)")
    serve.add_argument("--placement", choices=PLACEMENTS, default="hash",
                       help="documents by a hash of their id (default) or by id ranges")
    serve.add_argument("--full-text", choices=("shards", "database"), default="shards",
                       help="where the lexical side of a search is answered: each shard's "
                       "own full text of its documents (default), or the database's")
    serve.add_argument("--cpus", type=float, default=0.0,
                       help="CPUs Ray reserves for each replica (0: none reserved)")
    serve.add_argument("--address", help="the Ray cluster (default SEARCHAPP_RAY_ADDRESS, "
                       "else auto)")
    serve.set_defaults(func=serve_shards)
    for name, func, text in (("status", show_status, "each replica's size, freshness, node"),
                             ("stop", stop_shards, "stop a corpus' shard servers")):
        p = cmds.add_parser(name, help=text)
        p.add_argument("--corpus", required=True)
        p.add_argument("--address")
        if name == "status":
            p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)


def serve_shards(args: argparse.Namespace) -> int:
    from searchapp.search.shards import ray_shards

    app = common.open_app()
    started = time.monotonic()
    rows = ray_shards.serve(app, args.corpus, args.shards, args.replicas, args.compression,
                            args.placement, args.address, args.cpus,
                            words=args.full_text == "shards")
    documents = sum(r["documents"] for r in rows if r.get("replica") == 0)
    print(f"Corpus {args.corpus!r}: {args.shards} shard{'s' if args.shards != 1 else ''} × "
          f"{args.replicas} replica{'s' if args.replicas != 1 else ''} serving "
          f"{documents:,} documents ({args.compression}; full text in the "
          f"{args.full_text}), built in "
          f"{time.monotonic() - started:.1f} s.")
    return 0


def show_status(args: argparse.Namespace) -> int:
    from searchapp.search.shards import ray_shards

    rows = ray_shards.status(common.open_app(), args.corpus, args.address)
    if args.json:
        print_json({"corpus": args.corpus, "replicas": rows})
        return 0
    if not rows:
        print(f"Corpus {args.corpus!r} is not served in shards (searchapp shards serve).")
        return 0
    print(f"{'shard':<9}{'replica':<9}{'documents':>10}{'passages':>10}{'generation':>12}"
          f"{'memory':>10}{'words':>10}{'fresh':>8}  node")
    for r in rows:
        print(status_line(r))
    return 0


def status_line(r: dict) -> str:
    """One replica's row of ``shards status``.

    Example:
        >>> status_line({"number": 0, "shards": 2, "replica": 1, "down": "ActorDiedError"})
        '1 of 2   r1       down (ActorDiedError): Ray restarts it'
    """
    shard = f"{r['number'] + 1} of {r['shards']}"
    if "down" in r:
        return f"{shard:<9}{'r' + str(r['replica']):<9}down ({r['down']}): Ray restarts it"
    fresh = f"{max(0.0, time.time() - r['caught_up_at']):.1f} s" if r.get("caught_up_at") \
        else "-"
    words = f"{r['words_bytes'] / 2**20:.1f} MB" if r.get("words") is not None else "database"
    return (f"{shard:<9}{'r' + str(r['replica']):<9}{r['documents']:>10,}{r['passages']:>10,}"
            f"{r['generation']:>12,}{r['memory_bytes'] / 2**20:>7.1f} MB{words:>10}{fresh:>8}  "
            f"{cell(r['node'])} (Ray node {r.get('ray_node', '?')}, pid {r['pid']})")


def stop_shards(args: argparse.Namespace) -> int:
    from searchapp.search.shards import ray_shards

    n = ray_shards.stop(common.open_app(), args.corpus, args.address)
    print(f"Stopped {n} shard server{'s' if n != 1 else ''} of corpus {args.corpus!r}.")
    return 0
