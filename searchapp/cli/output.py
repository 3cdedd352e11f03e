"""How the CLI prints: JSON, aligned tables, job progress, and files written safely.

Every command prints through these, so the shapes scripts rely on (documented
in the README) are written in one place.

Example:
    >>> print_table([{"name": "faq", "documents": 13}], ["name", "documents"])
    NAME  DOCUMENTS
    faq   13
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from searchapp.base.private_files import replace_private
from searchapp.base.text_width import chars_within, columns
from searchapp.errors import OutputPathError
from searchapp.reporting import printable


class EscapingWriter(io.TextIOBase):
    """A text stream that writes ``printable(text, keep_newlines=True)`` to another one.

    The CLI's stdout and stderr while a command runs (``escaped_output``): the last
    guard that no control character, escape sequence, bidi override, separator or
    lone surrogate reaches the terminal, whichever print forgot to escape a field.
    """

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text, keep_newlines=True))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", "utf-8")


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """sys.stdout and sys.stderr through ``EscapingWriter`` for the time of a command."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingWriter(sys.stdout), EscapingWriter(sys.stderr)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stdout, sys.stderr = saved


def print_json(obj) -> None:
    """One line of JSON (non-ASCII kept as is; dates and paths as strings). Controls, bidi
    marks and U+2028/2029 are ``\\uXXXX`` escapes: the same JSON value, safe in a terminal.

    Example:
        >>> print_json({"text": "a\\u2028b\\x1b[2J"})
        {"text": "a\\u2028b\\u001b[2J"}
    """
    print(printable(json.dumps(obj, ensure_ascii=False, default=str)))


def cell(value) -> str:
    """A value of user data as one field of a line of output: every control character
    (newlines too), escape sequence and bidi override escaped.

    Example:
        >>> cell("two\\nlines"), cell(None)
        ('two\\\\u000alines', '')
    """
    return "" if value is None else printable(value)


def print_table(rows: list[dict], names: list[str]) -> None:
    """Rows as columns padded to their widest cell, headed by the upper-cased names; widths
    in a terminal's columns (a Chinese or Japanese character takes two: ``base/text_width``).

    Example:
        >>> print_table([{"id": "ja", "text": "日本語"}, {"id": "en", "text": "abc"}],
        ...             ["text", "id"])
        TEXT    ID
        日本語  ja
        abc     en
    """
    if not rows:
        return
    shown = [{c: cell(r.get(c, "")) for c in names} for r in rows]
    widths = {c: max(len(c), *(columns(r[c]) for r in shown)) for c in names}
    print("  ".join(_pad(c.upper(), widths[c]) for c in names).rstrip())
    for r in shown:
        print("  ".join(_pad(r[c], widths[c]) for c in names).rstrip())


def _pad(text: str, width: int) -> str:
    """``text`` and the spaces that make it ``width`` columns wide."""
    return text + " " * (width - columns(text))


def short(text: str, width: int = 40) -> str:
    """``text`` on one line, cut with an ellipsis to ``width`` columns (a Chinese or Japanese
    character takes two).

    Example:
        >>> short("How do I\\n reset my password?", 12), short("パスワードを忘れました", 12)
        ('How do I re…', 'パスワード…')
    """
    text = printable(" ".join(text.split()))
    return text if columns(text) <= width else text[:chars_within(text, width - 1)] + "…"


def progress_printer(label: str) -> Callable[[object], None]:
    """A callback printing ``label: status done/total`` on stderr each time it changes."""
    last = {"line": ""}

    def show(job) -> None:
        line = f"{label}: {job.status} {job.progress_done}/{job.progress_total}"
        if line != last["line"]:
            print(line, file=sys.stderr, flush=True)
            last["line"] = line

    return show


def output_path(value: str, flag: str = "--out") -> Path:
    """The file ``--out`` names, checked before any work: its folder exists, it is no folder.

    Checked first so a long job is not run only to end in a traceback at its
    last step; OutputPathError says what to change.
    """
    path = Path(value).expanduser()
    if not value.strip():
        raise OutputPathError(f"{flag} needs a file name, e.g. {flag} results.csv.")
    if path.is_dir():
        raise OutputPathError(f"{flag} {value}: that is a folder; give a file name inside it, "
                              f"e.g. {flag} {path / 'results.csv'}.")
    parent = path.parent
    if not parent.is_dir():
        raise OutputPathError(f"{flag} {value}: the folder {parent} does not exist; create it "
                              "first or choose another path.")
    if not os.access(parent, os.W_OK):
        raise OutputPathError(f"{flag} {value}: the folder {parent} is not writable; choose "
                              "another path.")
    return path


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Run ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``.

    A failure (disk full, permissions) leaves an existing file at ``path`` as it
    was and no half-written file behind; it is reported as OutputPathError.
    """
    try:  # a new file of a random name, made exclusively: no planted link is followed
        replace_private(path, write)
    except OSError as exc:
        raise OutputPathError(f"Cannot write {path}: {exc.strerror or exc}.") from exc
