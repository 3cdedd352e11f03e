"""The ``searchapp`` command: one parser assembled from the command groups, one error boundary.

Core errors (SearchAppError) become one line on stderr (``error: ...``) and exit
code 1; no traceback. Scripts rely on the forms and JSON shapes documented in
the README.

Example:
    >>> main(["corpora", "--help"])                             # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from searchapp.cli import clusters, corpora, duplicates, jobs, judge, models, passwords, search
from searchapp.errors import SearchAppError

# In the order ``searchapp --help`` lists them.
GROUPS = (corpora, search, jobs, clusters, duplicates, judge, models, passwords)
DESCRIPTION = "``searchapp ...``: every capability without the browser."


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; each group adds its own (``GROUP.register``)."""
    parser = argparse.ArgumentParser(prog="searchapp", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (0, or 1 with one ``error:`` line on stderr)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SearchAppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `searchapp jobs | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 0
