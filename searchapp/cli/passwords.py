"""``searchapp hash-password``: a salted hash for ``SEARCHAPP_PASSWORD_HASH``.

Example:
    $ echo "$PW" | searchapp hash-password
"""

from __future__ import annotations

import argparse
import sys

from searchapp.errors import SearchAppError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``hash-password`` to the command parser."""
    c = sub.add_parser("hash-password", help="print a hash of a password for "
                       "SEARCHAPP_PASSWORD_HASH (the web app's login)")
    c.set_defaults(func=hash_password)


def hash_password(_args: argparse.Namespace) -> int:
    """Print a hash for SEARCHAPP_PASSWORD_HASH: asks twice on a terminal, else reads a line
    of stdin (``echo "$PW" | searchapp hash-password``). The password is never printed."""
    from searchapp.base.passwords import hash_password as make_hash

    if sys.stdin.isatty():
        import getpass

        password = getpass.getpass("Password: ")
        if getpass.getpass("Same again: ") != password:
            raise SearchAppError("The two passwords differ; nothing was printed. Try again.")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise SearchAppError("The password is empty: type one, or give it on stdin.")
    print(make_hash(password))
    return 0
