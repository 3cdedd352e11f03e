"""The ``searchapp`` command: one parser assembled from the command groups, one error boundary.

Core errors (SearchAppError) become one line on stderr (``error: ...``) and exit
code 1; no traceback. Any other exception is a bug or a failure nobody
classified: its traceback goes to ``DATA_DIR/searchapp.log`` under a fresh
reference and the user sees ``error: something went wrong (KeyError, reference
3f9a2c); details in DATA_DIR/searchapp.log`` and exit code 1
(``searchapp.reporting``). Usage errors are argparse's (exit code 2). While a
command runs, everything it prints passes through ``printable``: no control
character, escape sequence or bidi override from a document reaches the terminal.
Scripts rely on the forms and JSON shapes documented in docs/cli.md.

Example:
    >>> main(["corpora", "--help"])                             # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from searchapp.base.data_lock import set_kind
from searchapp.base.private_files import restrict_umask
from searchapp.cli import (
    backups,
    clusters,
    corpora,
    desktop,
    documents,
    duplicates,
    history,
    jobs,
    judge,
    keys,
    models,
    passwords,
    saved,
    search,
    shards,
    watch,
)
from searchapp.cli.output import escaped_output
from searchapp.errors import SearchAppError
from searchapp.reporting import LOG_NAME, one_line, unexpected

# In the order ``searchapp --help`` lists them.
GROUPS = (corpora, documents, watch, search, saved, history, jobs, clusters, duplicates, judge,
          models, keys, backups, passwords, desktop, shards)
DESCRIPTION = "``searchapp ...``: every capability without the browser."


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; each group adds its own (``GROUP.register``)."""
    parser = argparse.ArgumentParser(prog="searchapp", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (0, or 1 with one ``error:`` line on stderr; argparse's
    usage errors exit with 2)."""
    restrict_umask()  # files in the data folder (and exports) are private: 0600
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with escaped_output():
        args = build_parser().parse_args(argv)
        set_kind("worker" if args.command == "worker" else f"`searchapp {args.command}`")
        try:
            return args.func(args)
        except SearchAppError as exc:
            print(f"error: {one_line(exc)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # `searchapp jobs | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
            return 0
        except Exception as exc:  # the boundary: a bug is one line and a log reference
            print(f"error: {unexpected(exc, log_file(), f'searchapp {args.command}')}",
                  file=sys.stderr)
            return 1


def log_file() -> Path | None:
    """``DATA_DIR/searchapp.log``, where the CLI logs what it could not classify (None when
    the settings themselves are broken: then the log goes to the temporary folder)."""
    from searchapp.config import Settings

    try:
        return Settings.from_env().data_dir / LOG_NAME
    except SearchAppError:
        return None
